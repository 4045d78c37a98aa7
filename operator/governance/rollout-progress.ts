// A Deployment's rollout as `kubectl rollout status` judges it from the Deployment's own status: in progress, done, or failed.
import type { RolloutResult, RolloutTrigger } from '../../infra/customapp-api.js';
import type { Deployment } from '../kube/objects.js';
import { type RolloutCause, rolloutCause } from './rollout-cause.js';

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

/** Where a Deployment's latest rollout stands. */
export type RolloutProgress =
  /** Not observed yet, or replicas still to update, to become available, or to go (kubectl's waiting messages). */
  | { readonly phase: 'InProgress'; readonly message: string }
  /** Every replica updated and available, and no old one left. */
  | { readonly phase: 'Succeeded' }
  /** `Progressing` is False with reason ProgressDeadlineExceeded, with the controller's message. */
  | { readonly phase: 'Failed'; readonly message: string };

/**
 * The rollout state of `deployment`, in kubectl's order (`rollout status`, DeploymentStatusViewer): a status that has
 * not observed the latest generation is in progress; then a `Progressing` condition with reason
 * ProgressDeadlineExceeded is a failure; then fewer updated replicas than wanted, old replicas still counted, or
 * updated replicas not all available are in progress; otherwise the rollout succeeded.
 */
export function rolloutProgress(deployment: Deployment): RolloutProgress {
  const status = deployment.status ?? {};
  const generation = deployment.metadata.generation ?? 0;
  if ((status.observedGeneration ?? 0) < generation) {
    return { phase: 'InProgress', message: 'waiting for the Deployment controller to observe the new generation' };
  }
  const progressing = status.conditions?.find((condition) => condition.type === 'Progressing');
  if (progressing?.reason === PROGRESS_DEADLINE_EXCEEDED) {
    return { phase: 'Failed', message: progressing.message ?? 'the progress deadline was exceeded' };
  }
  const wanted = deployment.spec.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  if (updated < wanted) return { phase: 'InProgress', message: `${updated} of ${wanted} new replicas have been updated` };
  if (total > updated) return { phase: 'InProgress', message: `${total - updated} old replicas are pending termination` };
  if (available < updated) return { phase: 'InProgress', message: `${available} of ${updated} updated replicas are available` };
  return { phase: 'Succeeded' };
}

/** The Deployment's latest rollout: its recorded cause and where it stands. */
export type CurrentRollout = RolloutProgress & { readonly cause: RolloutCause };

/**
 * The latest rollout of a Deployment of ours: undefined when no cause is recorded (a Deployment written by an earlier
 * version, before any rollout of ours). Once `recorded` (`status.lastRollout`) says this very rollout succeeded, it
 * stays succeeded: a pod that later turns un-Ready, or a scale, is not a rollout (Ready says ReplicasNotReady then),
 * and holds no slot of the budget.
 */
export function currentRollout(deployment: Deployment | undefined, recorded: RecordedRollout | undefined): CurrentRollout | undefined {
  const cause = rolloutCause(deployment);
  if (!deployment || !cause) return undefined;
  const progress = rolloutProgress(deployment);
  if (progress.phase !== 'Succeeded' && recorded?.result === 'Succeeded' && sameRollout(recorded, cause))
    return { phase: 'Succeeded', cause };
  return { ...progress, cause };
}

/** True when `recorded` describes the rollout `cause` started (same start time, trigger and generation). */
export function sameRollout(recorded: RecordedRollout, cause: RolloutCause): boolean {
  return recorded.startTime === cause.start && recorded.trigger === cause.trigger && recorded.generation === cause.generation;
}
