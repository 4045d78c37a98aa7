// The workloads served by annotation: their kinds, their API resources, and their keys in the work queue and the registry.
import { WORKLOAD_KINDS, type WorkloadKind, type WorkloadResource } from '../../api/workload.js';
import type { DaemonSet, Deployment, StatefulSet } from '../kube/objects.js';
import { DAEMONSETS, DEPLOYMENTS, type Resource, STATEFULSETS } from '../kube/resources.js';
import { type ArgoRollout, ROLLOUTS } from './argo-rollout.js';

export type { WorkloadKind, WorkloadResource };

/** A Deployment, StatefulSet, DaemonSet or Argo Rollout, as the workload cache keeps it (trimmed: `transform.ts`). */
export type Workload = Deployment | StatefulSet | DaemonSet | ArgoRollout;

/** The API resource of each kind. */
export const WORKLOAD_RESOURCES: Readonly<Record<WorkloadKind, Resource>> = {
  Deployment: DEPLOYMENTS,
  StatefulSet: STATEFULSETS,
  DaemonSet: DAEMONSETS,
  Rollout: ROLLOUTS,
};

/** The kind `--workloads` names by its resource: `statefulsets` → StatefulSet. */
export function workloadKind(resource: WorkloadResource): WorkloadKind {
  return WORKLOAD_KINDS[resource].kind;
}

/**
 * `StatefulSet/default/web`: a workload's key in the work queue, the dependency registry (its owner) and the rollout
 * budget. A CustomApp's key is `namespace/name`, with one slash: the two never collide, and {@link parseWorkloadKey}
 * tells them apart.
 */
export function workloadKey(kind: WorkloadKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** The parts of a workload key, or undefined for any other key (a CustomApp's). */
export function parseWorkloadKey(
  key: string,
): { readonly kind: WorkloadKind; readonly namespace: string; readonly name: string } | undefined {
  const [kind, namespace, name, ...rest] = key.split('/');
  if (rest.length > 0 || !namespace || !name || !(kind! in WORKLOAD_RESOURCES)) return undefined;
  return { kind: kind as WorkloadKind, namespace, name };
}
