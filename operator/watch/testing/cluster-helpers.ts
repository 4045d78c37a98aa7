// Helpers for the watch layer's cluster tests: a client behind a cuttable proxy, and the server's open watches.
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { KubeClient, type KubeClientOptions } from '../../kube/client.js';
import { connectionFromKubeConfig, type Connection } from '../../kube/connection.js';
import type { TestCluster } from '../../../test/support/targets.js';
import { startTcpProxy, type TcpProxy } from '../../../test/support/tcp-proxy.js';
import { eventually } from '../../../test/support/eventually.js';

/** An admin client of the cluster, and another that goes through a proxy the test can cut. */
export interface ProxiedClients {
  readonly admin: KubeClient;
  readonly proxied: KubeClient;
  readonly proxy: TcpProxy;
  readonly connection: Connection;
  close(): Promise<void>;
}

export async function proxiedClients(cluster: TestCluster, options: KubeClientOptions = {}): Promise<ProxiedClients> {
  const connection = await connectionFromKubeConfig(cluster.adminKubeConfig());
  const proxy = await startTcpProxy(connection.server);
  const admin = new KubeClient(connection);
  const proxied = new KubeClient({ ...connection, server: proxy.url }, options);
  return {
    admin,
    proxied,
    proxy,
    connection,
    close: async () => {
      proxied.close();
      admin.close();
      await proxy.close();
    },
  };
}

/** GETs a raw path (such as `/metrics`) with the connection's credentials, answering the body. */
export async function rawGet(connection: Connection, path: string): Promise<string> {
  const url = new URL(path, connection.server);
  const headers = await connection.authHeaders();
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      url,
      { headers, ca: connection.ca, cert: connection.cert, key: connection.key, rejectUnauthorized: connection.rejectUnauthorized },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/**
 * Open watch requests on the server for a resource: the emulator's counter (in `namespace` when given), or
 * kube-apiserver's `apiserver_longrunning_requests{verb="WATCH",resource=…}` gauge on envtest (every namespace: the
 * gauge has no namespace label).
 */
export async function serverOpenWatches(
  cluster: TestCluster,
  connection: Connection,
  resource: string,
  namespace?: string,
): Promise<number> {
  if (cluster.emulator) return cluster.emulator.counters.openWatchCount({ resource, namespace });
  const text = await rawGet(connection, '/metrics');
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_longrunning_requests{')) continue;
    if (line.includes('verb="WATCH"') && line.includes(`resource="${resource}"`)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * Polls the server's open watches for `resource` until they equal `want` (or `timeoutMs` passes) and answers the
 * last count. Without `want`, waits until two reads 200 ms apart agree: a baseline that no closing watch still skews.
 */
export async function settledOpenWatches(
  cluster: TestCluster,
  connection: Connection,
  resource: string,
  options: { want?: number; namespace?: string; timeoutMs?: number } = {},
): Promise<number> {
  let open: number | undefined;
  const settled = async (): Promise<boolean> => {
    const previous = open;
    open = await serverOpenWatches(cluster, connection, resource, options.namespace);
    return options.want === undefined ? open === previous : open === options.want;
  };
  // Not settled in time answers the last count all the same: the caller's assertion names what it expected.
  await eventually(`${resource} watches settled`, settled, options.timeoutMs ?? 10_000, options.want === undefined ? 200 : 50).catch(
    () => undefined,
  );
  if (open === undefined) throw new Error(`cannot read the server's open ${resource} watches`);
  return open;
}
