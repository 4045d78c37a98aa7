// Serves an operator's endpoints: /healthz and /readyz on the probe address, /metrics on the metrics address.
import type { EndpointServer } from '../http/servers.js';
import { serveMetrics, serveProbes } from '../http/servers.js';
import type { OperatorParts } from './build.js';
import type { OperatorOptions } from './options.js';

/** The servers of a running operator. */
export interface Endpoints {
  readonly probes?: EndpointServer;
  readonly metrics?: EndpointServer;
  close(): Promise<void>;
}

/** The caches not synced yet (customapps, deployments, services), for /readyz and logs. */
export function unsyncedCaches(parts: OperatorParts): string[] {
  return [
    ...(parts.apps.store.synced ? [] : ['customapps']),
    ...(parts.deployments.store.synced ? [] : ['deployments']),
    ...(parts.services.store.synced ? [] : ['services']),
  ];
}

/**
 * Listens on the addresses the options give (none by default). /readyz is ready once the three caches hold their
 * first list, leader or not. A failure to listen closes what did listen and throws, naming the cause.
 */
export async function serveEndpoints(options: OperatorOptions, parts: OperatorParts): Promise<Endpoints> {
  const servers: EndpointServer[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(servers.map((server) => server.close()));
  };
  try {
    let probes: EndpointServer | undefined;
    let metrics: EndpointServer | undefined;
    if (options.healthProbeBindAddress) {
      probes = await serveProbes(options.healthProbeBindAddress, {
        healthz: { ping: () => undefined },
        readyz: {
          caches: () => {
            const unsynced = unsyncedCaches(parts);
            return unsynced.length === 0 ? undefined : `not synced: ${unsynced.join(', ')}`;
          },
        },
      });
      servers.push(probes);
    }
    if (options.metricsBindAddress) {
      metrics = await serveMetrics(options.metricsBindAddress, parts.metrics.registry);
      servers.push(metrics);
    }
    return { probes, metrics, close };
  } catch (error) {
    await close();
    throw new Error(`cannot serve the probes or metrics: ${(error as Error).message}`, { cause: error });
  }
}
