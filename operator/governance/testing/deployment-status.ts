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
