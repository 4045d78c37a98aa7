// Where each cached workload stands for the rollout governance's rebuild: whether a rollout of ours is in progress.
import type { RolloutStanding } from '../governance/governance.js';
import { occupiesSlot } from '../governance/rollout-progress.js';
import { lastWorkloadRollout } from './last-rollout.js';
import { workloadProgress } from './progress.js';
import { type Workload, type WorkloadKind, workloadKey } from './workload.js';

/**
 * The standings of the cached workloads that a rollout of ours is rolling (`last-rollout` InProgress, and the
 * workload's status agrees, not paused): each occupies a slot. A workload keeps no queue place across a restart (it has no status of
 * ours): its change is seen again by its first reconcile, which asks the governance anew.
 */
export function workloadStandings(stores: Partial<Record<WorkloadKind, { list(): Workload[] }>>): RolloutStanding[] {
  const standings: RolloutStanding[] = [];
  for (const [kind, store] of Object.entries(stores) as [WorkloadKind, { list(): Workload[] }][]) {
    for (const workload of store.list()) {
      const last = lastWorkloadRollout(workload);
      if (last?.result !== 'InProgress') continue;
      if (!occupiesSlot(workloadProgress(kind, workload, last.templateGeneration))) continue;
      const namespace = workload.metadata.namespace!;
      standings.push({ key: workloadKey(kind, namespace, workload.metadata.name!), namespace, rolling: true });
    }
  }
  return standings;
}
