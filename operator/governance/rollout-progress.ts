// A Deployment's rollout as `kubectl rollout status` judges it from the Deployment's own status: in progress, done, or failed.
import type { RolloutResult, RolloutTrigger } from '../../api/customapp.js';
import type { Deployment } from '../kube/objects.js';
import { isGoverned, type RolloutCause, rolloutCause } from './rollout-cause.js';

/**
 * What the operator recorded of a rollout once it saw it (a CustomApp's `status.lastRollout`, a workload's
 * `app.example.com/last-rollout` annotation): enough to tell that very rollout again, and how it went.
 */
export interface RecordedRollout {
  readonly trigger: RolloutTrigger;
  readonly generation?: number;
  /** RFC 3339: when the operator changed the pod template. */
  readonly startTime: string;
  readonly result: RolloutResult;
}

/** The Deployment controller's reason on `Progressing=False` once `progressDeadlineSeconds` passed without progress. */
export const PROGRESS_DEADLINE_EXCEEDED = 'ProgressDeadlineExceeded';
/**
 * The Deployment controller's reason on `Progressing=True` once its newest ReplicaSet is available. It keeps it through
 * scales while no pod of an older template is left (`isCompleteDeployment` in its `syncRolloutStatus`).
 */
export const NEW_REPLICA_SET_AVAILABLE = 'NewReplicaSetAvailable';

/** Where a Deployment's latest rollout stands. */
export type RolloutProgress =
  /** Not observed yet, or replicas still to update, to become available, or to go (kubectl's waiting messages). */
  | { readonly phase: 'InProgress'; readonly message: string }
  /** Every replica updated and available, and no old one left. */
  | { readonly phase: 'Succeeded' }
  /** `Progressing` is False with reason ProgressDeadlineExceeded, with the controller's message. */
  | { readonly phase: 'Failed'; readonly message: string }
  /**
   * Not done, and `spec.paused` (`kubectl rollout pause`): the Deployment controller makes no progress on it and
   * applies no progress deadline, so it may never end; it is not rolling until resumed.
   */
  | { readonly phase: 'Paused'; readonly message: string };

/**
 * The rollout state of `deployment`, in kubectl's order (`rollout status`, DeploymentStatusViewer): a status that has
 * not observed the latest generation is in progress; then a `Progressing` condition with reason
 * ProgressDeadlineExceeded is a failure; then fewer updated replicas than wanted, old replicas still counted, or
 * updated replicas not all available are in progress; otherwise the rollout succeeded. A rollout in progress on a
 * paused Deployment (`spec.paused`) is Paused: the controller will not move it, and no deadline will fail it.
 *
 * kubectl's rules cannot tell a scale from a rollout: a scale leaves the new generation unobserved, then new pods
 * unavailable. Given `templateGeneration` (the generation the write of the rollout's template made), a rollout the
 * Deployment controller has seen end stays ended, whatever later generations do ({@link deploymentRolloutEnd}).
 */
export function rolloutProgress(deployment: Deployment, templateGeneration?: number): RolloutProgress {
  const end = templateGeneration === undefined ? undefined : deploymentRolloutEnd(deployment, templateGeneration);
  if (end) return end;
  const status = deployment.status ?? {};
  const generation = deployment.metadata.generation ?? 0;
  if ((status.observedGeneration ?? 0) < generation) {
    const waiting = 'waiting for the Deployment controller to observe the new generation';
    return paused(deployment, waiting) ?? { phase: 'InProgress', message: waiting };
  }
  const progressing = status.conditions?.find((condition) => condition.type === 'Progressing');
  if (progressing?.reason === PROGRESS_DEADLINE_EXCEEDED) {
    return { phase: 'Failed', message: progressing.message ?? 'the progress deadline was exceeded' };
  }
  const wanted = deployment.spec.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const waiting =
    updated < wanted
      ? `${updated} of ${wanted} new replicas have been updated`
      : total > updated
        ? `${total - updated} old replicas are pending termination`
        : available < updated
          ? `${available} of ${updated} updated replicas are available`
          : undefined;
  if (waiting === undefined) return { phase: 'Succeeded' };
  return paused(deployment, waiting) ?? { phase: 'InProgress', message: waiting };
}

/**
 * How the rollout of the template that made `templateGeneration` ended, by what the Deployment controller wrote once it
 * had observed that generation: Failed while `Progressing` says ProgressDeadlineExceeded; Succeeded while it says
 * NewReplicaSetAvailable, no pod of an older template is left (`status.replicas == status.updatedReplicas`, the
 * controller's own test) and a pod of the new one is counted unless none is wanted (a Recreate rollout between its old
 * pods' end and its new ReplicaSet has neither, under the condition of the rollout before). A later scale keeps both
 * (the controller carries its conditions through a scale), so it does not read as this rollout again. Undefined when
 * the status says neither (not observed yet, still progressing, no progress deadline): kubectl's rules judge then. A
 * failed rollout that a scale revives reads Progressing ReplicaSetUpdated again, so it counts again, as a resumed one does.
 */
export function deploymentRolloutEnd(
  deployment: Deployment,
  templateGeneration: number,
): Extract<RolloutProgress, { phase: 'Succeeded' | 'Failed' }> | undefined {
  const status = deployment.status;
  if (!status || (status.observedGeneration ?? 0) < templateGeneration) return undefined;
  const progressing = status.conditions?.find((condition) => condition.type === 'Progressing');
  if (progressing?.reason === PROGRESS_DEADLINE_EXCEEDED) {
    return { phase: 'Failed', message: progressing.message ?? 'the progress deadline was exceeded' };
  }
  if (progressing?.reason !== NEW_REPLICA_SET_AVAILABLE || progressing.status !== 'True') return undefined;
  const updated = status.updatedReplicas ?? 0;
  if ((status.replicas ?? 0) !== updated) return undefined;
  if (updated === 0 && (deployment.spec.replicas ?? 1) > 0) return undefined;
  return { phase: 'Succeeded' };
}

/** A rollout not done whose Deployment is paused: Paused, saying how to resume it. */
function paused(deployment: Deployment, waiting: string): RolloutProgress | undefined {
  if (!deployment.spec.paused) return undefined;
  return {
    phase: 'Paused',
    message: `${waiting}; \`kubectl rollout resume deployment/${deployment.metadata.name}\` resumes it`,
  };
}

/**
 * True while a rollout at `progress` occupies a slot of the budget: in progress only. A paused one does not: its controller
 * makes no progress on it and no deadline fails it (Kubernetes applies none to a paused Deployment, and an Argo Rollout
 * pauses at its canary steps by design), so it could occupy a cluster-wide slot for ever; a resume makes it count again.
 */
export function occupiesSlot(progress: RolloutProgress): boolean {
  return progress.phase === 'InProgress';
}

/** True once a rollout at `progress` is over, succeeded or failed: a paused one has not ended, it goes on when resumed. */
export function hasEnded(progress: RolloutProgress): progress is Extract<RolloutProgress, { phase: 'Succeeded' | 'Failed' }> {
  return progress.phase === 'Succeeded' || progress.phase === 'Failed';
}

/** The Deployment's latest rollout: its recorded cause and where it stands. */
export type CurrentRollout = RolloutProgress & { readonly cause: RolloutCause };

/**
 * The latest rollout of a Deployment of ours: undefined when no cause is recorded (a Deployment written by an earlier
 * version, before any rollout of ours). Once `recorded` (`status.lastRollout`) says this very rollout succeeded, it
 * stays succeeded: a pod that later turns un-Ready, or a scale, is not a rollout (Ready says ReplicasNotReady then),
 * and occupies no slot of the budget. Before the status records it, the cause's template generation tells its end
 * through a scale ({@link deploymentRolloutEnd}).
 */
export function currentRollout(deployment: Deployment | undefined, recorded: RecordedRollout | undefined): CurrentRollout | undefined {
  const cause = rolloutCause(deployment);
  if (!deployment || !cause) return undefined;
  const progress = rolloutProgress(deployment, cause.templateGeneration);
  if (progress.phase !== 'Succeeded' && recorded?.result === 'Succeeded' && sameRollout(recorded, cause))
    return { phase: 'Succeeded', cause };
  return { ...progress, cause };
}

/** True while the latest rollout is one caused by ConfigMap or Secret content that {@link occupiesSlot}. */
export function rollingForContent(current: CurrentRollout | undefined): boolean {
  return current !== undefined && isGoverned(current.cause) && occupiesSlot(current);
}

/** True when `recorded` describes the rollout `cause` started (same start time, trigger and generation). */
export function sameRollout(recorded: RecordedRollout, cause: RolloutCause): boolean {
  return recorded.startTime === cause.start && recorded.trigger === cause.trigger && recorded.generation === cause.generation;
}
