// Argo Rollouts' own Rollout CRD, at a pinned release (test/fixtures/argo-rollouts/README.md), applied to a test cluster.
import { resolve } from 'node:path';
import type { TestCluster } from './targets.js';
import { installCrd } from './crds.js';

const ROLLOUT_CRD = resolve(import.meta.dirname, '../fixtures/argo-rollouts/rollout-crd.yaml');

/** Creates `rollouts.argoproj.io` (already there is fine) and waits until it is Established. */
export async function installArgoRolloutsCrd(cluster: TestCluster): Promise<void> {
  await installCrd(cluster, ROLLOUT_CRD, 'rollouts.argoproj.io');
}
