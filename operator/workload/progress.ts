// A workload's rollout as `kubectl rollout status` judges it from its own status: Deployments, StatefulSets and DaemonSets (Argo's: `argo-rollout.ts`).
import { type RolloutProgress, rolloutProgress } from '../governance/rollout-progress.js';
import type { DaemonSet, Deployment, StatefulSet } from '../kube/objects.js';
import { type ArgoRollout, argoRolloutProgress } from './argo-rollout.js';
import type { Workload, WorkloadKind } from './workload.js';

const OBSERVING = { phase: 'InProgress', message: 'waiting for the controller to observe the new generation' } as const;

/**
 * kubectl's StatefulSetStatusViewer: only a RollingUpdate strategy has a rollout to follow (OnDelete: done at once);
 * then the observed generation, the ready replicas, the updated replicas above a partition, and the current revision
 * reaching the update revision.
 */
function statefulSetProgress(set: StatefulSet): RolloutProgress {
  const { spec, status } = set;
  if (spec.updateStrategy?.type === 'OnDelete') return { phase: 'Succeeded' };
  if (!status?.observedGeneration || (set.metadata.generation ?? 0) > status.observedGeneration) return OBSERVING;
  const wanted = spec.replicas ?? 1;
  const ready = status.readyReplicas ?? 0;
  if (ready < wanted) return { phase: 'InProgress', message: `${ready} of ${wanted} pods are ready` };
  const partition = spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  if (partition > 0) {
    const updated = status.updatedReplicas ?? 0;
    if (updated < wanted - partition)
      return { phase: 'InProgress', message: `${updated} of ${wanted - partition} pods updated (partition ${partition})` };
    return { phase: 'Succeeded' };
  }
  if (status.updateRevision !== status.currentRevision) {
    return { phase: 'InProgress', message: `${status.updatedReplicas ?? 0} pods at revision ${status.updateRevision ?? '?'}` };
  }
  return { phase: 'Succeeded' };
}

/** kubectl's DaemonSetStatusViewer: RollingUpdate only; observed generation, updated then available pods of those wanted. */
function daemonSetProgress(set: DaemonSet): RolloutProgress {
  const { spec, status } = set;
  if (spec.updateStrategy?.type === 'OnDelete') return { phase: 'Succeeded' };
  if (!status || (set.metadata.generation ?? 0) > (status.observedGeneration ?? 0)) return OBSERVING;
  const wanted = status.desiredNumberScheduled;
  const updated = status.updatedNumberScheduled ?? 0;
  if (updated < wanted) return { phase: 'InProgress', message: `${updated} of ${wanted} updated pods are scheduled` };
  const available = status.numberAvailable ?? 0;
  if (available < wanted) return { phase: 'InProgress', message: `${available} of ${wanted} updated pods are available` };
  return { phase: 'Succeeded' };
}

/**
 * A StatefulSet's rollout of the template that made `templateGeneration`, seen to end through later generations (a
 * scale): the controller observed that generation and moved `currentRevision` to `updateRevision`, which it does once
 * every pod runs the update revision (RollingUpdate). A scale changes neither revision; a template change gives a new
 * `updateRevision` in the status that observes it. Undefined otherwise (kubectl's rules judge: a partition, say).
 */
function statefulSetEnd(set: StatefulSet, templateGeneration: number): RolloutProgress | undefined {
  const { status } = set;
  if (!status?.observedGeneration || status.observedGeneration < templateGeneration) return undefined;
  if (!status.updateRevision || status.currentRevision !== status.updateRevision) return undefined;
  return { phase: 'Succeeded' };
}

/**
 * Where the workload's latest rollout stands, by its kind's rules (a Deployment's: `governance/rollout-progress.ts`).
 * Given `templateGeneration` (what the write of our rollout's template made: `last-rollout.ts`), a Deployment's,
 * StatefulSet's or Argo Rollout's rollout that its controller has seen end stays ended through later scales, which
 * kubectl's rules read as a rollout; a DaemonSet has no replicas to scale.
 */
export function workloadProgress(kind: WorkloadKind, workload: Workload, templateGeneration?: number): RolloutProgress {
  if (kind === 'StatefulSet') {
    const set = workload as StatefulSet;
    return (templateGeneration === undefined ? undefined : statefulSetEnd(set, templateGeneration)) ?? statefulSetProgress(set);
  }
  if (kind === 'DaemonSet') return daemonSetProgress(workload as DaemonSet);
  if (kind === 'Rollout') return argoRolloutProgress(workload as ArgoRollout, templateGeneration);
  return rolloutProgress(workload as Deployment, templateGeneration);
}
