// Every reason the reconcile writes, in conditions and in Events, and the messages more than one step says.

/**
 * The reasons, one table for conditions and Events. Where a condition and an Event report the same thing they share
 * the reason (a `DeploymentNotOwned` Event when the `DeploymentAvailable` condition turns to `DeploymentNotOwned`).
 */
export const REASONS = {
  // ConfigMapAvailable, SecretAvailable
  configMapFound: 'ConfigMapFound',
  configMapNotFound: 'ConfigMapNotFound',
  secretFound: 'SecretFound',
  secretNotFound: 'SecretNotFound',
  /** A listed key missing from an object listed without `optional`: the kubelet would not start the pods. */
  configMapKeyNotFound: 'ConfigMapKeyNotFound',
  secretKeyNotFound: 'SecretKeyNotFound',
  notReferenced: 'NotReferenced',
  // DeploymentAvailable (and Events)
  deploymentNotOwned: 'DeploymentNotOwned',
  deploymentInvalid: 'DeploymentInvalid',
  replicasReady: 'ReplicasReady',
  replicasNotReady: 'ReplicasNotReady',
  // ServiceAvailable (and Events)
  serviceNameInvalid: 'ServiceNameInvalid',
  serviceNotOwned: 'ServiceNotOwned',
  serviceReady: 'ServiceReady',
  // Ready (and Events)
  rolloutHeld: 'RolloutHeld',
  rolloutQueued: 'RolloutQueued',
  flapping: 'Flapping',
  rolloutPaused: 'RolloutPaused',
  rolloutDebouncing: 'RolloutDebouncing',
  rolloutInProgress: 'RolloutInProgress',
  rolloutFailed: 'RolloutFailed',
  /** The Deployment itself is paused (`kubectl rollout pause`), not the CustomApp (`spec.rollout.paused` is RolloutPaused). */
  deploymentPaused: 'DeploymentPaused',
  reconcileError: 'ReconcileError',
  ready: 'Ready',
  // Events only
  created: 'Created',
  updated: 'Updated',
  deleted: 'Deleted',
  rolloutTriggered: 'RolloutTriggered',
} as const;

/** Why a child of that name is left alone: the condition's message and the Event's are the same sentence. */
export function notControlledMessage(kind: 'Deployment' | 'Service', name: string): string {
  return `${kind} "${name}" exists and is not controlled by this CustomApp; it is left alone`;
}

/** The first 12 hex digits of a content hash, for Events and logs. */
export function shortHash(hash: string | undefined): string {
  return hash ? hash.slice(0, 12) : 'none';
}
