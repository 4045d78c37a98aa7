// Serves an operator's endpoints: /healthz and /readyz on the probe address (plain HTTP), /metrics on the metrics
// address (HTTPS with authentication and authorization unless `metricsSecure` is false).
import { describeFailingLists } from '../dependencies/list-health.js';
import { listenOn } from '../http/listen.js';
import type { BindAddress } from '../http/bind-address.js';
import type { EndpointServer } from '../http/servers.js';
import { MetricsAuth, reviewApi } from '../http/metrics-auth.js';
import { serveSecureMetrics } from '../http/secure-metrics.js';
import { serveMetrics, serveProbes } from '../http/servers.js';
import type { OperatorParts } from './build.js';
import type { OperatorOptions } from './options.js';
import { notInstalled } from './workloads.js';
import type { WorkloadKind } from '../workload/workload.js';

/** The servers of a running operator. */
export interface Endpoints {
  readonly probes?: EndpointServer;
  readonly metrics?: EndpointServer;
  close(): Promise<void>;
}

/**
 * The caches not synced yet (customapps, deployments, services, the workload kinds), for /readyz and logs; not those of
 * an add-on kind whose CRD is not installed (`notInstalled`).
 */
export function unsyncedCaches(parts: OperatorParts): string[] {
  const absent = new Set(notInstalled(parts.workloads));
  return [
    ...(parts.apps.store.synced ? [] : ['customapps']),
    ...(parts.deployments.store.synced ? [] : ['deployments']),
    ...(parts.services.store.synced ? [] : ['services']),
    ...Object.entries(parts.workloads?.informers ?? {}).flatMap(([kind, { store }]) =>
      store.synced || absent.has(kind as WorkloadKind) ? [] : [`${kind.toLowerCase()}s (workloads)`],
    ),
  ];
}

/**
 * Listens on the addresses the options give (none by default); an address with `orFreePort` takes a free port when
 * its own is busy. /readyz is ready once the three caches hold their first list, leader or not, and fails with the
 * reason while the API cannot serve the informers (a missing CRD, a 403), or while a ConfigMap or Secret list keeps
 * failing (its refs stay unknown, so their apps wait). /metrics asks the API server (with the
 * operator's client, so counted in its metrics) who each scraper is and whether it may `get` /metrics, as
 * controller-runtime's secure metrics do. A failure to listen closes what did listen
 * and throws, naming the cause (an `AddressInUseError` for a busy port).
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
      const checks = {
        healthz: { ping: () => undefined },
        readyz: {
          api: () => {
            const absent = notInstalled(parts.workloads).flatMap((kind) => parts.workloads!.addOns[kind] ?? []);
            const workloadReasons = (parts.workloads?.gates ?? []).filter((gate) => !absent.includes(gate)).map((gate) => gate.reason);
            const reasons = [parts.access.reason(), ...workloadReasons].filter(Boolean);
            return reasons.length === 0 ? undefined : reasons.join('; ');
          },
          caches: () => {
            const unsynced = unsyncedCaches(parts);
            return unsynced.length === 0 ? undefined : `not synced: ${unsynced.join(', ')}`;
          },
          dependencies: () => describeFailingLists(parts.registry?.failingLists() ?? []),
        },
      };
      probes = await listenOn('probes', options.healthProbeBindAddress, (address) => serveProbes(address, checks), parts.logger);
      servers.push(probes);
    }
    if (options.metricsBindAddress) {
      const registry = parts.metrics.registry;
      const log = parts.logger.child({ component: 'metrics' });
      const auth = new MetricsAuth({ api: reviewApi(parts.client), logger: log });
      const serve = (address: BindAddress): Promise<EndpointServer> =>
        (options.metricsSecure ?? true)
          ? serveSecureMetrics({ address, registry, auth, certDir: options.metricsCertDir, scheduler: options.scheduler, logger: log })
          : serveMetrics(address, registry);
      metrics = await listenOn('metrics', options.metricsBindAddress, serve, parts.logger);
      servers.push(metrics);
    }
    return { probes, metrics, close };
  } catch (error) {
    await close();
    throw new Error(`cannot serve the probes or metrics: ${(error as Error).message}`, { cause: error });
  }
}
