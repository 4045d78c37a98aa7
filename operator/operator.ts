// The operator as an object: informers, triggers, the CustomApp controller, leader election, probes and metrics.
import type { KubeConfig } from '@kubernetes/client-node';
import { filter, firstValueFrom, merge, Subscription, type SchedulerLike } from 'rxjs';
import type { Registry } from 'prom-client';
import { OPERATOR_NAME } from '../infra/customapp-api.js';
import { informer, type Informer } from './cache/informer.js';
import { Controller } from './controller/controller.js';
import { CUSTOM_APP_INDEXERS, subscribeTriggers } from './customapp/triggers.js';
import { FreshCache } from './cache/fresh-cache.js';
import type { CustomApp } from './customapp/custom-app.js';
import { DependencyRegistry } from './deps/registry.js';
import { RegistryDependencySource } from './deps/registry-source.js';
import type { DependencySource } from './deps/source.js';
import { EventRecorder } from './events/recorder.js';
import type { BindAddress } from './http/bind-address.js';
import { serveMetrics, serveProbes, type EndpointServer } from './http/servers.js';
import { KubeClient } from './kube/client.js';
import { DEPLOYMENTS, SERVICES } from './kube/resources.js';
import { CUSTOM_APPS } from './customapp/custom-app.js';
import { LeaderElector, type LeaderElectionOptions } from './leader/leader-elector.js';
import { newTraceId, silentLogger, type Logger } from './log.js';
import { OperatorMetrics } from './controller/metrics.js';
import type { Deployment, Service } from './kube/objects.js';
import { CustomAppReconciler } from './reconcile/custom-app-reconciler.js';
import { OWNED_SELECTOR } from './customapp/labels.js';
import type { DependencyRegistryOptions } from './deps/registry.js';

/** The controller's name in metrics and logs. */
export const CONTROLLER_NAME = 'customapp';

/** What a DependencySource factory gets. */
export interface DependencyContext {
  readonly client: KubeClient;
  readonly logger: Logger;
  /** The operator's metrics registry, for the source's own gauges. */
  readonly metrics: Registry;
  readonly scheduler?: SchedulerLike;
}

/** Leader-election settings: the Lease and, optionally, controller-runtime's durations (15 s, 10 s, 2 s) and the identity. */
export type LeaderElectionSettings = Pick<
  LeaderElectionOptions,
  'namespace' | 'name' | 'identity' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'
>;

/** Options of {@link createOperator}. */
export interface OperatorOptions {
  /** Where the API server is (or pass `client`). */
  readonly kubeConfig?: KubeConfig;
  /** An API client to use instead of one built from `kubeConfig`; its requests are not counted in our metrics then. */
  readonly client?: KubeClient;
  /** Watch CustomApps in this namespace only. @default all namespaces */
  readonly namespace?: string;
  /** @default a silent logger */
  readonly logger?: Logger;
  /** Keys reconciled at once. @default 4 */
  readonly maxConcurrentReconciles?: number;
  /** Reconcile only while holding this Lease. @default no leader election */
  readonly leaderElection?: LeaderElectionSettings;
  /** Where /metrics listens. @default not served */
  readonly metricsBindAddress?: BindAddress;
  /** Where /healthz and /readyz listen. @default not served */
  readonly healthProbeBindAddress?: BindAddress;
  /** Also export process_* and nodejs_* metrics. @default false */
  readonly processMetrics?: boolean;
  /**
   * Builds the DependencySource the reconcile uses (the benchmark swaps strategies here).
   * @default the reference-counted, adaptive {@link DependencyRegistry} behind a {@link RegistryDependencySource}
   */
  readonly dependencies?: (context: DependencyContext) => DependencySource;
  /** Tuning of the default registry (thresholds, watch settings). @default its defaults */
  readonly registry?: Omit<DependencyRegistryOptions, 'client' | 'events' | 'logger' | 'metrics' | 'scheduler'>;
  /** Timers of the queue and the watches. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** How often a CustomApp whose Deployment name is taken by a foreign object is looked at again. @default 30_000 */
  readonly notOwnedRetryMs?: number;
}

/** A running operator. */
export interface Operator {
  readonly client: KubeClient;
  readonly metrics: OperatorMetrics;
  readonly dependencies: DependencySource;
  /** The default registry, when `dependencies` was not replaced (for invariants: its physical streams). */
  readonly registry?: DependencyRegistry;
  readonly controller: Controller;
  readonly apps: Informer<CustomApp>;
  readonly deployments: Informer<Deployment>;
  readonly services: Informer<Service>;
  /** This process's identity (the Lease holder name when it leads). */
  readonly identity: string;
  /** `http://host:port` of /metrics, when served. */
  readonly metricsUrl?: string;
  /** `http://host:port` of /healthz and /readyz, when served. */
  readonly healthUrl?: string;
  /** True once the CustomApp, Deployment and Service caches hold their first list. */
  readonly synced: boolean;
  /** True while the workers run (after the caches synced and, with leader election, the Lease was acquired). */
  readonly reconciling: boolean;
  /** Resolves when the workers start; never, if the operator stops first. */
  readonly started: Promise<void>;
  /** Resolves when the operator has stopped; rejects when it stopped on its own (leadership lost). */
  readonly done: Promise<void>;
  /** Stops intake, drains in-flight reconciles, unsubscribes every stream, releases the Lease, closes the servers. */
  stop(): Promise<void>;
}

/**
 * Builds and starts an operator: it serves the probes and metrics, subscribes the informers (which start the
 * watches) and the trigger mappings, and in the background waits for the caches to sync, then (with leader
 * election) for the Lease, and then starts the workers. Resolves once the servers listen.
 */
export async function createOperator(options: OperatorOptions): Promise<Operator> {
  const logger = options.logger ?? silentLogger();
  const metrics = new OperatorMetrics({ processMetrics: options.processMetrics });
  let client = options.client;
  if (!client) {
    if (!options.kubeConfig) throw new Error('createOperator needs a kubeConfig or a client');
    client = await KubeClient.fromKubeConfig(options.kubeConfig, { onRequest: metrics.onRequest, userAgent: OPERATOR_NAME });
  }
  const scheduler = options.scheduler;
  const watchDeps = { logger: logger.child({ component: 'watch' }), scheduler };
  const namespace = options.namespace;

  let registry: DependencyRegistry | undefined;
  const dependencies = options.dependencies
    ? options.dependencies({ client, logger, metrics: metrics.registry, scheduler })
    : (() => {
        registry = new DependencyRegistry({ ...options.registry, client, logger, metrics: metrics.registry, scheduler });
        return new RegistryDependencySource(registry, { logger });
      })();

  const apps = informer<CustomApp>(
    client,
    CUSTOM_APPS,
    { namespace, name: `customapp ${namespace ?? '*'}` },
    CUSTOM_APP_INDEXERS,
    watchDeps,
  );
  const deployments = informer<Deployment>(
    client,
    DEPLOYMENTS,
    { namespace, labelSelector: OWNED_SELECTOR, name: `deployment ${namespace ?? '*'} (owned)` },
    {},
    watchDeps,
  );
  const services = informer<Service>(
    client,
    SERVICES,
    { namespace, labelSelector: OWNED_SELECTOR, name: `service ${namespace ?? '*'} (owned)` },
    {},
    watchDeps,
  );

  const elector = options.leaderElection
    ? new LeaderElector({
        client,
        ...options.leaderElection,
        logger: logger.child({ component: 'leader-election' }),
        onLeadingChange: (leading) => metrics.leaderStatus.set({ name: options.leaderElection!.name }, leading ? 1 : 0),
      })
    : undefined;
  const identity = elector?.identity ?? `${OPERATOR_NAME}-${newTraceId()}`;
  // The moment leadership is lost, nothing this process started as leader may still be written: the client aborts
  // what is in flight and refuses every later write (a standby may take over once the Lease expires).
  const fenced = (elector?.lost ?? new Promise<never>(() => undefined)).then(() => {
    client.fence('leader election lost');
    logger.error({ inFlight: controller.queue.inFlight }, 'fenced: leadership lost, writes refused');
  });

  const appCache = new FreshCache(apps.store);
  const deploymentCache = new FreshCache(deployments.store);
  const serviceCache = new FreshCache(services.store);
  const reconciler = new CustomAppReconciler({
    client,
    apps: appCache,
    deployments: deploymentCache,
    services: serviceCache,
    dependencies,
    recorder: new EventRecorder({ client, component: OPERATOR_NAME, instance: identity, logger: logger.child({ component: 'events' }) }),
    notOwnedRetryMs: options.notOwnedRetryMs,
  });
  const controller = new Controller({
    name: CONTROLLER_NAME,
    reconciler,
    logger: logger.child({ controller: CONTROLLER_NAME }),
    metrics,
    concurrency: options.maxConcurrentReconciles ?? 4,
    scheduler,
  });

  const unsynced = (): string[] => [
    ...(apps.store.synced ? [] : ['customapps']),
    ...(deployments.store.synced ? [] : ['deployments']),
    ...(services.store.synced ? [] : ['services']),
  ];
  const synced = (): boolean => unsynced().length === 0;
  const servers: EndpointServer[] = [];
  let probes: EndpointServer | undefined;
  let metricsServer: EndpointServer | undefined;
  try {
    if (options.healthProbeBindAddress) {
      servers.push(
        (probes = await serveProbes(options.healthProbeBindAddress, {
          healthz: { ping: () => undefined },
          readyz: { caches: () => (synced() ? undefined : `not synced: ${unsynced().join(', ')}`) },
        })),
      );
    }
    if (options.metricsBindAddress) servers.push((metricsServer = await serveMetrics(options.metricsBindAddress, metrics.registry)));
  } catch (error) {
    await Promise.all(servers.map((server) => server.close()));
    dependencies.close();
    registry?.close();
    if (!options.client) client.close();
    throw new Error(`cannot serve the probes or metrics: ${(error as Error).message}`, { cause: error });
  }

  // The read-your-writes caches learn each store change first (subscribed before the triggers).
  const triggers = new Subscription();
  triggers.add(apps.events$.subscribe((change) => appCache.observe(change)));
  triggers.add(deployments.events$.subscribe((change) => deploymentCache.observe(change)));
  triggers.add(services.events$.subscribe((change) => serviceCache.observe(change)));
  triggers.add(
    subscribeTriggers({ apps, deployments, services, dependencies }, (key, trigger) => {
      controller.enqueue(key, trigger);
    }),
  );

  const stopping = new AbortController();
  let reconciling = false;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const run = async (): Promise<void> => {
    const allSynced = firstValueFrom(merge(apps.synced$, deployments.synced$, services.synced$).pipe(filter(() => synced())), {
      defaultValue: false,
    });
    const aborted = new Promise<false>((resolve) => stopping.signal.addEventListener('abort', () => resolve(false), { once: true }));
    if (!(await Promise.race([allSynced.then(() => true), aborted]))) return;
    logger.info({ customapps: apps.store.size, deployments: deployments.store.size, services: services.store.size }, 'caches synced');
    if (elector && !(await elector.acquire(stopping.signal))) return;
    if (stopping.signal.aborted) return;
    controller.start();
    reconciling = true;
    markStarted();
    if (elector) {
      const lost = await Promise.race([fenced.then(() => true), aborted]);
      if (lost)
        throw new Error(
          `leader election lost: the Lease ${options.leaderElection!.namespace}/${options.leaderElection!.name} was not renewed within the renew deadline`,
        );
    }
  };

  let stopped: Promise<void> | undefined;
  let markStopped!: () => void;
  const hasStopped = new Promise<void>((resolve) => {
    markStopped = resolve;
  });
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      logger.info('stopping');
      stopping.abort();
      await controller.stop();
      reconciling = false;
      triggers.unsubscribe();
      dependencies.close();
      registry?.close();
      await elector?.release();
      await Promise.all(servers.map((server) => server.close()));
      client.close();
      logger.info('stopped');
      markStopped();
    })();
    return stopped;
  };

  const running = run();
  const done = running.then(
    () => hasStopped,
    async (error: unknown) => {
      logger.error({ err: error }, 'operator failed');
      await stop();
      throw error;
    },
  );
  // Keep `done` from being an unhandled rejection when nobody awaits it; callers still see the rejection.
  done.catch(() => undefined);

  logger.info(
    { namespace: namespace ?? '*', identity, leaderElection: Boolean(elector), metrics: metricsServer?.url, probes: probes?.url },
    'started',
  );

  return {
    client,
    metrics,
    dependencies,
    registry,
    controller,
    apps,
    deployments,
    services,
    identity,
    metricsUrl: metricsServer?.url,
    healthUrl: probes?.url,
    get synced() {
      return synced();
    },
    get reconciling() {
      return reconciling;
    },
    started,
    done,
    stop,
  };
}
