// Where the API server is and how to authenticate to it: a client-node KubeConfig resolved into a Connection.
import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** Where and how to connect: what a kubeconfig resolves to. */
export interface Connection {
  /** `https://host:port` or `http://host:port`. */
  readonly server: string;
  readonly ca?: Buffer | string;
  readonly cert?: Buffer | string;
  readonly key?: Buffer | string;
  readonly rejectUnauthorized?: boolean;
  /** Returns the headers that authenticate a request (a bearer token, refreshed as the kubeconfig says). */
  readonly authHeaders: () => Promise<Record<string, string>>;
}

/** How long resolved auth headers are reused before asking the kubeconfig again (token files rotate by the minute). */
const AUTH_HEADER_TTL_MS = 10_000;

/** Resolves a client-node KubeConfig (current context) into a {@link Connection}; `now` times the reuse of auth headers. */
export async function connectionFromKubeConfig(kubeConfig: KubeConfig, now: () => number = Date.now): Promise<Connection> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error(`kubeconfig has no current cluster (context "${kubeConfig.getCurrentContext()}")`);
  const probe: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(probe);
  let cached: { headers: Record<string, string>; at: number } | undefined;
  return {
    server: cluster.server.replace(/\/+$/, ''),
    ca: probe.ca as Buffer | undefined,
    cert: probe.cert as Buffer | undefined,
    key: probe.key as Buffer | undefined,
    rejectUnauthorized: cluster.skipTLSVerify ? false : undefined,
    authHeaders: async () => {
      if (cached && now() - cached.at < AUTH_HEADER_TTL_MS) return cached.headers;
      const options: RequestOptions = {};
      await kubeConfig.applyToHTTPSOptions(options);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(options.headers ?? {})) {
        if (typeof value === 'string') headers[name.toLowerCase()] = value;
      }
      if (options.auth) headers.authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
      cached = { headers, at: now() };
      return headers;
    },
  };
}
