// Where each cached CustomApp stands for the rollout governance's rebuild: rolling for content, and what waits in its status.
import type { CustomApp } from '../customapp/custom-app.js';
import { controllingAppName, isControlledBy } from '../customapp/labels.js';
import type { RolloutStanding } from '../governance/governance.js';
import { currentRollout, rollingForContent } from '../governance/rollout-progress.js';
import type { Deployment } from '../kube/objects.js';

/**
 * The standings of `apps`, for `RolloutGovernance.rebuild`: rolling while the CustomApp's own Deployment is in a rollout
 * caused by ConfigMap or Secret content, and its `status.pendingRollout` (none for one being deleted: it waits for
 * nothing). The Deployment of a CustomApp being deleted, or gone (`deploymentKeys`, the owned Deployments cached, with no
 * CustomApp of that key), rolls on until the garbage collector deletes it: it keeps its slot meanwhile.
 */
export function customAppStandings(
  apps: Iterable<CustomApp>,
  deploymentOf: (key: string) => Deployment | undefined,
  deploymentKeys: Iterable<string>,
): RolloutStanding[] {
  const standings: RolloutStanding[] = [];
  const seen = new Set<string>();
  for (const app of apps) {
    const namespace = app.metadata.namespace!;
    const key = `${namespace}/${app.metadata.name}`;
    seen.add(key);
    const rolling = rollsForContent(deploymentOf(key), app);
    const pending = app.metadata.deletionTimestamp ? undefined : app.status?.pendingRollout;
    standings.push({ key, namespace, rolling, ...(pending ? { pending } : {}) });
  }
  for (const key of deploymentKeys) {
    const deployment = deploymentOf(key);
    if (deployment && !seen.has(key) && rollsForContent(deployment, undefined))
      standings.push({ key, namespace: deployment.metadata.namespace!, rolling: true });
  }
  return standings;
}

/**
 * Whether `deployment` is in a rollout caused by ConfigMap or Secret content, as `app`'s own Deployment (the same uid:
 * a CustomApp recreated under the same name does not own the old one), or, with `app` undefined (gone from the cache),
 * as the Deployment a CustomApp left: the garbage collector has not deleted it yet, and its controller rolls it on.
 */
export function rollsForContent(deployment: Deployment | undefined, app: CustomApp | undefined): boolean {
  if (deployment === undefined) return false;
  if (app ? !isControlledBy(deployment, app) : controllingAppName(deployment) === undefined) return false;
  return rollingForContent(currentRollout(deployment, app?.status?.lastRollout));
}
