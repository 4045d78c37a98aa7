// The objects as they cross the wire: metadata, lists, watch events, and the built-in kinds typed by client-node's models.
import type {
  CoreV1Event,
  V1Container,
  V1DaemonSet,
  V1DaemonSetSpec,
  V1Deployment,
  V1DeploymentCondition,
  V1DeploymentSpec,
  V1EnvFromSource,
  V1Lease,
  V1ObjectMeta,
  V1OwnerReference,
  V1PodSpec,
  V1PodTemplateSpec,
  V1Service,
  V1ServiceSpec,
  V1StatefulSet,
  V1StatefulSetSpec,
} from '@kubernetes/client-node';
import type { Status } from './errors.js';

/**
 * A client-node model as JSON, deeply read-only. client-node's models describe objects after its own deserializer
 * ran, with `Date` for timestamps; our client parses the JSON itself, where timestamps are RFC 3339 strings. The
 * models are used for their field names and shapes only (`import type`: nothing of client-node is loaded for them).
 */
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? readonly Wire<U>[]
    : T extends object
      ? { readonly [K in keyof T]: Wire<T[K]> }
      : T;

/** metav1.ObjectMeta. Caches drop `managedFields` (see cache/transform.ts). */
export type ObjectMeta = Wire<V1ObjectMeta>;
export type OwnerReference = Wire<V1OwnerReference>;

/** Any Kubernetes object. */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
}

/** A list answer. */
export interface ObjectList<T> {
  readonly metadata: { readonly resourceVersion?: string; readonly continue?: string };
  readonly items: T[];
}

/** One event of a watch stream, as the server sent it. */
export type RawWatchEvent<T> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }
  | { readonly type: 'BOOKMARK'; readonly object: KubeObject }
  | { readonly type: 'ERROR'; readonly object: Status };

/** A built-in kind's model as a {@link KubeObject}: our metadata type, the rest from client-node. */
type Model<T> = KubeObject & Wire<Omit<T, 'apiVersion' | 'kind' | 'metadata'>>;

/** A pod template whose spec is there, as in every Deployment. */
export type PodTemplate = Wire<V1PodTemplateSpec> & { readonly spec: Wire<V1PodSpec> };
/** apps/v1 Deployment (its spec and template spec are never absent on the objects we read or write). */
export type Deployment = Model<V1Deployment> & { readonly spec: Wire<V1DeploymentSpec> & { readonly template: PodTemplate } };
export type DeploymentCondition = Wire<V1DeploymentCondition>;
/** apps/v1 StatefulSet. */
export type StatefulSet = Model<V1StatefulSet> & { readonly spec: Wire<V1StatefulSetSpec> & { readonly template: PodTemplate } };
/** apps/v1 DaemonSet. */
export type DaemonSet = Model<V1DaemonSet> & { readonly spec: Wire<V1DaemonSetSpec> & { readonly template: PodTemplate } };
export type Container = Wire<V1Container>;
export type EnvFromSource = Wire<V1EnvFromSource>;
/** core/v1 Service. */
export type Service = Model<V1Service> & { readonly spec: Wire<V1ServiceSpec> };
/** core/v1 Event. */
export type CoreEvent = Model<CoreV1Event>;
/** coordination.k8s.io/v1 Lease. */
export type Lease = Model<V1Lease>;
