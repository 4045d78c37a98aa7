// An Argo Rollout (argoproj.io/v1alpha1): the fields the workload reconcile reads, and its rollout as `kubectl argo rollouts status` judges it.
import { WORKLOAD_KINDS } from '../../api/workload.js';
import type { RolloutProgress } from '../governance/rollout-progress.js';
import type { KubeObject, PodTemplate } from '../kube/objects.js';
import type { Resource } from '../kube/resources.js';

/** `rollouts.argoproj.io`, served only where Argo Rollouts' CRD is installed. */
export const ROLLOUTS: Resource = { ...WORKLOAD_KINDS.rollouts, namespaced: true };

/** The remedy the access gate logs while the Rollout CRD is not served (the gate re-checks, so no restart is needed). */
export const ROLLOUTS_NOT_SERVED_REMEDY =
  'install Argo Rollouts (its CRD rollouts.argoproj.io); the operator starts serving Rollouts once discovery serves them';

/**
 * The Rollout as the operator reads it. Argo's own type has far more (strategies, analysis, traffic routing); none of
 * it decides whether new ConfigMap or Secret content rolls, or whether the rollout is over.
 */
export interface ArgoRollout extends KubeObject {
  readonly spec: {
    readonly replicas?: number;
    /** `kubectl argo rollouts pause`. */
    readonly paused?: boolean;
    /**
     * The pod template, like a Deployment's. Absent when `workloadRef` names a Deployment whose template Argo uses
     * instead; the workload cache then keeps an empty one (`transform.ts`), which references nothing.
     */
    readonly template: PodTemplate;
    /** The Deployment (or other workload) whose pod template this Rollout runs, in place of its own. */
    readonly workloadRef?: { readonly apiVersion?: string; readonly kind?: string; readonly name?: string };
  };
  readonly status?: {
    /** Healthy, Progressing, Paused or Degraded: computed by the Argo Rollouts controller (1.0 and later). */
    readonly phase?: string;
    readonly message?: string;
    /** The generation observed, as a decimal string (Argo writes a string, unlike apps/v1's number). */
    readonly observedGeneration?: string;
    /** Why the controller paused the rollout (a canary step's `pause`, a blue-green promotion awaited). */
    readonly pauseConditions?: readonly { readonly reason?: string; readonly startTime?: string }[];
    /** True while the controller has paused it; with no pause conditions left, a resume is under way. */
    readonly controllerPause?: boolean;
    /** The pod-template hash of the current template's ReplicaSet, as the controller last observed it. */
    readonly currentPodHash?: string;
    /** The pod-template hash of the stable ReplicaSet: the current one's once its rollout completed. */
    readonly stableRS?: string;
  };
}

/**
 * Argo's own judgement of where `rollout` stands, as `kubectl argo rollouts status` reads it (Argo's
 * `utils/rollout/rolloututil.go` GetRolloutPhase): a spec the controller has not observed yet is in progress, and so is
 * a resume it has not acted on (`controllerPause` with no pause conditions left); then the controller's phase: Healthy
 * succeeded, Degraded failed (an abort, a progress deadline, an invalid spec), Paused is paused (a canary step pauses by
 * design and may wait for a promotion for ever: like a paused Deployment, it occupies no slot of the budget), Progressing
 * is in progress. Without a phase (no controller has looked at it yet, or one older than 1.0) `spec.paused` and pause
 * conditions still say Paused, and anything else is in progress. Given `templateGeneration` (the generation the write of
 * our rollout's template made), a status that observed it with `stableRS == currentPodHash` (Argo's RolloutCompleted)
 * has succeeded, whatever a later scale does to the phase.
 */
export function argoRolloutProgress(rollout: ArgoRollout, templateGeneration?: number): RolloutProgress {
  const { status } = rollout;
  const name = rollout.metadata.name;
  const observed = Number(status?.observedGeneration);
  // Argo's own completion (`RolloutCompleted`: the stable ReplicaSet is the current template's), in a status that
  // observed our template's generation: a later scale changes neither hash, though its phase reads Progressing.
  if (templateGeneration !== undefined && Number.isInteger(observed) && observed >= templateGeneration) {
    if (status?.stableRS && status.stableRS === status.currentPodHash) return { phase: 'Succeeded' };
  }
  // A non-numeric observedGeneration is a pre-0.10 hash: Argo's status treats it as observed.
  if (status?.observedGeneration === undefined || (Number.isInteger(observed) && observed < (rollout.metadata.generation ?? 0))) {
    return { phase: 'InProgress', message: 'waiting for the Argo Rollouts controller to observe the new generation' };
  }
  if (status.controllerPause && !status.pauseConditions?.length) return { phase: 'InProgress', message: 'waiting for rollout to unpause' };
  // `resume` clears spec.paused (a pause by hand); `promote` clears the controller's pause conditions (a step's).
  const paused = (why: string): RolloutProgress => ({
    phase: 'Paused',
    message: `${why}; \`kubectl argo rollouts ${rollout.spec.paused ? 'resume' : 'promote'} ${name}\` resumes it`,
  });
  switch (status.phase) {
    case 'Healthy':
      return { phase: 'Succeeded' };
    case 'Degraded':
      return { phase: 'Failed', message: status.message || 'the Rollout is Degraded' };
    case 'Paused':
      return paused(status.message || 'the Rollout is paused');
    case 'Progressing':
      return { phase: 'InProgress', message: status.message || 'the Rollout is progressing' };
  }
  if (rollout.spec.paused) return paused('manually paused');
  const reason = status.pauseConditions?.[0]?.reason;
  if (reason) return paused(reason);
  return { phase: 'InProgress', message: 'waiting for the Argo Rollouts controller' };
}

/**
 * The Warning of a Rollout that opts in while using `spec.workloadRef`: its pods run the referenced workload's
 * template, which Argo rolls out when it changes, so it is that workload that must opt in.
 */
export function workloadRefProblem(rollout: ArgoRollout): string | undefined {
  const ref = rollout.spec.workloadRef;
  if (!ref) return undefined;
  const target = `${ref.kind ?? 'Deployment'} "${ref.name ?? ''}"`;
  return `uses spec.workloadRef (the pod template of ${target}): the reload annotations are ignored here; annotate ${target} instead (served with --workloads=deployments): Argo rolls this Rollout when that template changes`;
}
