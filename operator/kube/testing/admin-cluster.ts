// Cluster tests beside the code: a file's cluster whose admin client records its requests, and a namespace made once.
import type { TestFn } from 'ava';
import { KubeClient } from '../client.js';
import { isAlreadyExists } from '../errors.js';
import type { KubeObject } from '../objects.js';
import type { RequestSample } from '../options.js';
import { NAMESPACES } from '../resources.js';
import { startCluster, type Target, type TestCluster } from '../../../test/support/targets.js';

/** A started cluster and its admin client. */
export interface AdminCluster {
  readonly cluster: TestCluster;
  readonly client: KubeClient;
}

/**
 * Registers `before` and `after.always` hooks that start a cluster of `target` and make an admin client of it that
 * records every request it sends, hand both to `started` once made (the file's tests read them from there), and close
 * and stop them afterwards. Answers the requests the client sent, in order, which the `before` hook starts filling.
 */
export function recordedAdminCluster(test: TestFn, target: Target, started: (admin: AdminCluster) => void): RequestSample[] {
  const requests: RequestSample[] = [];
  let cluster: TestCluster | undefined;
  let client: KubeClient | undefined;
  test.before(async () => {
    cluster = await startCluster(target);
    client = await KubeClient.fromKubeConfig(cluster.adminKubeConfig(), { onRequest: (sample) => requests.push(sample) });
    started({ cluster, client });
  });
  test.after.always(async () => {
    client?.close();
    await cluster?.stop();
  });
  return requests;
}

/** Creates the namespace `name` (fine if it exists). */
export async function createNamespace(client: KubeClient, name: string): Promise<void> {
  try {
    await client.create<KubeObject>(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}
