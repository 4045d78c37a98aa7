// The operator as an object: built from its options (manager/build.ts), serving its endpoints, running its lifecycle.
import { silentLogger } from './log.js';
import { buildOperator, closeParts } from './manager/build.js';
import { serveEndpoints, unsyncedCaches } from './manager/endpoints.js';
import { runLifecycle } from './manager/lifecycle.js';
import type { Operator, OperatorOptions } from './manager/options.js';

export { CONTROLLER_NAME } from './manager/options.js';
export type { DependencyContext, LeaderElectionSettings, Operator, OperatorOptions } from './manager/options.js';

/**
 * Builds and starts an operator: it serves the probes and metrics, subscribes the informers (which start the
 * watches) and the trigger mappings, and in the background waits for the caches to sync, then (with leader
 * election) for the Lease, and then starts the workers. Resolves once the servers listen.
 */
export async function createOperator(options: OperatorOptions): Promise<Operator> {
  const logger = options.logger ?? silentLogger();
  const parts = await buildOperator(options, logger);
  const endpoints = await serveEndpoints(options, parts).catch((error: unknown) => {
    closeParts(parts);
    throw error;
  });
  const lifecycle = runLifecycle(options, parts, endpoints);
  logger.info(
    {
      namespaces: options.namespaces ?? '*',
      identity: parts.identity,
      leaderElection: Boolean(parts.elector),
      metrics: endpoints.metrics?.url,
      probes: endpoints.probes?.url,
    },
    'started',
  );
  const { client, metrics, dependencies, registry, controller, apps, deployments, services, identity, workloads } = parts;
  return {
    client,
    metrics,
    dependencies,
    registry,
    controller,
    apps,
    deployments,
    services,
    workloads,
    identity,
    metricsUrl: endpoints.metrics?.url,
    healthUrl: endpoints.probes?.url,
    get synced() {
      return unsyncedCaches(parts).length === 0;
    },
    get reconciling() {
      return lifecycle.reconciling();
    },
    started: lifecycle.started,
    done: lifecycle.done,
    stop: lifecycle.stop,
  };
}
