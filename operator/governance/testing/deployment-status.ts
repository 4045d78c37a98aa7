// The status the Deployment controller writes when a rollout ends, for tests that play it (no controller runs there).
import type { Deployment } from '../../kube/objects.js';

/**
 * The status kube-controller-manager writes for `deployment`'s latest rollout once it ends: `Succeeded` (every replica
 * updated, ready and available, `Progressing` True NewReplicaSetAvailable) or `Failed` (one new pod never available,
 * `Progressing` False ProgressDeadlineExceeded), both observing the current generation. `now` stamps the conditions'
 * times (an API server requires them on a status write); without it they are left out.
 */
export function endedRolloutStatus(
  deployment: Deployment,
  outcome: 'Succeeded' | 'Failed',
  now?: string,
): NonNullable<Deployment['status']> {
  const name = deployment.metadata.name;
  const replicas = deployment.spec.replicas ?? 1;
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    ...(now ? { lastUpdateTime: now, lastTransitionTime: now } : {}),
  });
  const available = condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.');
  return outcome === 'Succeeded'
    ? {
        observedGeneration: deployment.metadata.generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [
          available,
          condition('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${name}-x" has successfully progressed.`),
        ],
      }
    : {
        observedGeneration: deployment.metadata.generation,
        replicas: replicas + 1,
        updatedReplicas: 1,
        readyReplicas: replicas,
        availableReplicas: replicas,
        unavailableReplicas: 1,
        conditions: [
          available,
          condition('Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet "${name}-x" has timed out progressing.`),
        ],
      };
}

/**
 * The status kube-controller-manager writes once `kubectl rollout pause` or `resume` set `deployment.spec.paused`,
 * `before` being the Deployment before that edit: its generation observed; the replica counts `before` had when its
 * status had observed its template (a rollout that had ended, or failed), else those of a rollout whose new pods have
 * not started (none updated); and `Progressing` Unknown DeploymentPaused (a paused Deployment has no progress deadline)
 * or True DeploymentResumed. `now` stamps the conditions' times, as in {@link endedRolloutStatus}.
 */
export function pausedRolloutStatus(deployment: Deployment, before: Deployment, now?: string): NonNullable<Deployment['status']> {
  const replicas = deployment.spec.replicas ?? 1;
  const stamp = now ? { lastUpdateTime: now, lastTransitionTime: now } : {};
  const progressing = deployment.spec.paused
    ? { type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused', ...stamp }
    : { type: 'Progressing', status: 'True', reason: 'DeploymentResumed', message: 'Deployment is resumed', ...stamp };
  const observed = (before.status?.observedGeneration ?? 0) >= (before.metadata.generation ?? 0);
  const counts = observed
    ? {
        replicas: before.status?.replicas,
        updatedReplicas: before.status?.updatedReplicas,
        readyReplicas: before.status?.readyReplicas,
        availableReplicas: before.status?.availableReplicas,
      }
    : { replicas, updatedReplicas: 0, readyReplicas: replicas, availableReplicas: replicas };
  const others = (before.status?.conditions ?? []).filter((condition) => condition.type !== 'Progressing');
  return {
    ...before.status,
    observedGeneration: deployment.metadata.generation,
    ...counts,
    conditions: [...others, progressing],
  };
}
