// The CustomApp's status as the API defines it: its conditions, rollouts and observed objects.
import type { ConditionType, PendingReason, RolloutResult, RolloutTrigger } from './customapp.js';

/** A metav1.Condition of a CustomApp. */
export interface Condition {
  readonly type: ConditionType;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly observedGeneration?: number;
  /** RFC 3339; changes only when `status` flips. */
  readonly lastTransitionTime: string;
  /** CamelCase, for example `ConfigMapNotFound`. */
  readonly reason: string;
  readonly message: string;
}

/** `status.lastRollout`: the last rollout of the Deployment's pods, its cause and its outcome. */
export interface LastRollout {
  readonly trigger: RolloutTrigger;
  /** The ConfigMap or Secret whose content changed (trigger ConfigMap or Secret). */
  readonly name?: string;
  /** The keys whose content changed, of an object read by its listed keys. */
  readonly keys?: readonly string[];
  readonly fromHash?: string;
  readonly toHash?: string;
  /** The CustomApp generation rolled out. */
  readonly generation?: number;
  /** RFC 3339: when the operator changed the pod template. */
  readonly startTime: string;
  /** RFC 3339: when the operator saw the rollout succeed or fail. */
  readonly completionTime?: string;
  readonly result: RolloutResult;
  /** The change, and the reason of a failure. */
  readonly message?: string;
}

/** An entry of `status.observedConfigMaps` or `status.observedSecrets`. */
export interface ObservedObject {
  readonly name: string;
  /** The hash the pods run with (of the listed keys alone when keys are listed); absent for an optional object missing. */
  readonly hash?: string;
}

/** `status.pendingRollout`: a rollout caused by new ConfigMap or Secret content that waits, and why. */
export interface PendingRollout {
  readonly reason: PendingReason;
  /** RFC 3339 with milliseconds: when it began to wait for this reason (the budget's queue order after a restart). */
  readonly since: string;
  readonly trigger: 'ConfigMap' | 'Secret';
  readonly name: string;
  /** The keys whose content changed, of an object read by its listed keys. */
  readonly keys?: readonly string[];
  readonly fromHash?: string;
  readonly toHash?: string;
}

/** `status` of a CustomApp. {@link STATUS_FIELDS} lists its keys (the compiler checks it lists them all), and reconcile/status.test.ts compares that list with `STATUS_SCHEMA` in api/customapp.ts. */
export interface CustomAppStatus {
  readonly observedGeneration?: number;
  /** The ConfigMap the Deployment was last rolled out with. */
  readonly observedConfigMapName?: string;
  /** The Secret the Deployment was last rolled out with. */
  readonly observedSecretName?: string;
  /** The ConfigMaps of `spec.configMaps` the Deployment runs with. */
  readonly observedConfigMaps?: readonly ObservedObject[];
  /** The Secrets of `spec.secrets` the Deployment runs with. */
  readonly observedSecrets?: readonly ObservedObject[];
  /** SHA-256 of the ConfigMap content the Deployment runs with. */
  readonly configHash?: string;
  /** SHA-256 of the Secret content the Deployment runs with. */
  readonly secretHash?: string;
  readonly readyReplicas?: number;
  /** Pods of the owned Deployment (its `status.replicas`): the scale subresource's current replicas. */
  readonly replicas?: number;
  /** The owned Deployment's label selector as a string (`k=v,…`): the scale subresource's selector, for an HPA. */
  readonly selector?: string;
  /** The last rollout of the Deployment's pods. */
  readonly lastRollout?: LastRollout;
  /** A dependency-triggered rollout that waits (queued, for a flapping object, paused or debounced). */
  readonly pendingRollout?: PendingRollout;
  readonly conditions?: readonly Condition[];
}

/** Every key of {@link CustomAppStatus}, to compare with the schema. */
export const STATUS_FIELDS = [
  'observedGeneration',
  'observedConfigMapName',
  'observedSecretName',
  'observedConfigMaps',
  'observedSecrets',
  'configHash',
  'secretHash',
  'readyReplicas',
  'replicas',
  'selector',
  'lastRollout',
  'pendingRollout',
  'conditions',
] as const satisfies readonly (keyof CustomAppStatus)[];
/** Compiles only while {@link STATUS_FIELDS} names every key of {@link CustomAppStatus}. */
const STATUS_FIELDS_COMPLETE: [Exclude<keyof CustomAppStatus, (typeof STATUS_FIELDS)[number]>] extends [never] ? true : never = true;
void STATUS_FIELDS_COMPLETE;
