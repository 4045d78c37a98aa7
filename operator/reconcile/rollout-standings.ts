// Where each cached CustomApp stands for the rollout governance's rebuild: rolling for content, and what waits in its status.
import type { CustomApp } from '../customapp/custom-app.js';
import { isControlledBy } from '../customapp/labels.js';
import type { RolloutStanding } from '../governance/governance.js';
import { currentRollout, rollingForContent } from '../governance/rollout-progress.js';
import type { Deployment } from '../kube/objects.js';

/**
 * The standings of `apps` (those not being deleted), for `RolloutGovernance.rebuild`: rolling while the CustomApp's
 * own Deployment is in a rollout caused by ConfigMap or Secret content, and its `status.pendingRollout`.
 */
export function customAppStandings(apps: Iterable<CustomApp>, deploymentOf: (key: string) => Deployment | undefined): RolloutStanding[] {
  const standings: RolloutStanding[] = [];
  for (const app of apps) {
    if (app.metadata.deletionTimestamp) continue;
    const namespace = app.metadata.namespace!;
    const key = `${namespace}/${app.metadata.name}`;
    const deployment = deploymentOf(key);
    const rolling =
      deployment !== undefined && isControlledBy(deployment, app) && rollingForContent(currentRollout(deployment, app.status?.lastRollout));
    const pending = app.status?.pendingRollout;
    standings.push({ key, namespace, rolling, ...(pending ? { pending } : {}) });
  }
  return standings;
}
