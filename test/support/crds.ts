// Creates a CRD from a file on a test cluster and waits until the API server serves it.
import type { TestCluster } from './targets.js';
import { eventually } from './operator-harness.js';

/**
 * Creates the CRD in `file` (already there is fine) and waits until `name` is Established. `kubectl create`, not
 * `apply`: a third-party CRD is often hundreds of kB, and apply's last-applied annotation would copy it into the object.
 * `kubectl wait` is asked again while it fails: on a CRD just created, before the API server wrote any condition, it
 * errors at once (".status.conditions accessor error") instead of waiting.
 */
export async function installCrd(cluster: TestCluster, file: string, name: string): Promise<void> {
  const created = await cluster.kubectl(['create', '-f', file]);
  if (created.code !== 0 && !created.stderr.includes('AlreadyExists')) throw new Error(`${name}: ${created.stderr}`);
  await eventually(
    `${name} is Established`,
    async () => {
      const waited = await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=10s', `crd/${name}`]);
      if (waited.code !== 0) throw new Error(waited.stderr);
      return true;
    },
    30_000,
    200,
  );
}
