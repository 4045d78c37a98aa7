// Argo Rollouts' own Rollout CRD, at a pinned release (test/fixtures/argo-rollouts/README.md), applied to a test cluster.
import { resolve } from 'node:path';
import type { TestCluster } from './cluster.js';
import { eventually } from './operator-harness.js';

const ROLLOUT_CRD = resolve(import.meta.dirname, '../fixtures/argo-rollouts/rollout-crd.yaml');

/**
 * Creates `rollouts.argoproj.io` (already there is fine) and waits until it is Established. `kubectl create`, not
 * `apply`: the CRD is 200 kB, and apply's last-applied annotation would copy it into the object. `kubectl wait` is
 * asked again while it fails: on a CRD just created, before the API server wrote any condition, it errors at once
 * (".status.conditions accessor error") instead of waiting.
 */
export async function installArgoRolloutsCrd(cluster: TestCluster): Promise<void> {
  const created = await cluster.kubectl(['create', '-f', ROLLOUT_CRD]);
  if (created.code !== 0 && !created.stderr.includes('AlreadyExists')) throw new Error(`Argo's Rollout CRD: ${created.stderr}`);
  await eventually(
    "Argo's Rollout CRD is Established",
    async () => {
      const waited = await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=10s', 'crd/rollouts.argoproj.io']);
      if (waited.code !== 0) throw new Error(waited.stderr);
      return true;
    },
    30_000,
    200,
  );
}
