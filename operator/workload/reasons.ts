// The reasons of the Events posted on workloads (the same words as the CustomApp's where they mean the same).

export const WORKLOAD_REASONS = {
  /** New content rolled out: the pod template's hash annotation written. */
  rolloutTriggered: 'RolloutTriggered',
  rolloutQueued: 'RolloutQueued',
  /** A flapping object (its breaker open) makes the rollout wait until it is quiet. */
  rolloutHeld: 'RolloutHeld',
  rolloutPaused: 'RolloutPaused',
  rolloutSucceeded: 'RolloutSucceeded',
  rolloutFailed: 'RolloutFailed',
  /** An annotation of ours or Reloader's could not be read as it is; the message quotes it. */
  annotationInvalid: 'ReloadAnnotationInvalid',
  /** A ConfigMap or Secret the pod template needs (not optional) does not exist. */
  referenceMissing: 'ReferenceMissing',
} as const;
