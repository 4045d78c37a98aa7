// Builds every part of an operator from its options: the client, the caches, the dependency source, the elector, the controller.
import { OPERATOR_NAME } from '../../api/customapp.js';
import { FreshCache } from '../cache/fresh-cache.js';
import { type Informer, informerOf } from '../cache/informer.js';
import { Controller } from '../controller/controller.js';
import { OperatorMetrics } from '../controller/metrics.js';
import { CUSTOM_APPS, type CustomApp } from '../customapp/custom-app.js';
import { OWNED_SELECTOR } from '../customapp/labels.js';
import { asyncScheduler } from 'rxjs';
import { BY_CONFIGMAP, BY_SECRET, CUSTOM_APP_INDEXERS } from '../customapp/triggers.js';
import { DependencyRegistry } from '../dependencies/registry.js';
import { RegistryDependencySource } from '../dependencies/registry-source.js';
import type { DependencySource } from '../dependencies/source.js';
import { EventRecorder } from '../events/recorder.js';
import { RolloutGovernance } from '../governance/governance.js';
import { KubeClient } from '../kube/client.js';
import type { Deployment, Service } from '../kube/objects.js';
import { DEPLOYMENTS, SERVICES } from '../kube/resources.js';
import { LeaderElector } from '../leader/leader-elector.js';
import { type Logger, newTraceId } from '../log.js';
import { CustomAppReconciler } from '../reconcile/custom-app-reconciler.js';
import { type ApiAccess, apiAccess } from './api-access.js';
import { CONTROLLER_NAME, type OperatorOptions } from './options.js';
import { buildWorkloads, type WorkloadParts } from './workloads.js';
import { buildShard, type ShardParts } from './sharding.js';
import { BY_REFERENCE } from '../workload/triggers.js';
import { hasOptIn } from '../workload/reload-annotations.js';

/** The parts of an operator, built and not started (no watch, timer or server runs yet). */
export interface OperatorParts {
  readonly logger: Logger;
  readonly metrics: OperatorMetrics;
  readonly client: KubeClient;
  /** True when the client was built here (and is closed with the operator). */
  readonly ownsClient: boolean;
  readonly dependencies: DependencySource;
  /** The default registry, when `options.dependencies` did not replace it. */
  readonly registry?: DependencyRegistry;
  readonly apps: Informer<CustomApp>;
  readonly deployments: Informer<Deployment>;
  readonly services: Informer<Service>;
  /** The gates of the three informers' list and watch: a missing CRD or a 403 closes them (the requests wait), says why, and recovers. */
  readonly access: ApiAccess;
  /** The read-your-writes views of the three stores that the reconcile reads. */
  readonly caches: {
    readonly apps: FreshCache<CustomApp>;
    readonly deployments: FreshCache<Deployment>;
    readonly services: FreshCache<Service>;
  };
  readonly elector?: LeaderElector;
  /** The elector's own client (`client` with its own fence): fencing the work leaves the Lease's release possible. */
  readonly leaseClient?: KubeClient;
  readonly identity: string;
  /** The rollout budget and flap breakers (memory rebuilt from the caches before the workers start). */
  readonly governance: RolloutGovernance;
  readonly controller: Controller;
  /** The Events of the reconciles, written asynchronously; drained when the operator stops. */
  readonly recorder: EventRecorder;
  /** The workload domain, when `options.workloads` names kinds. */
  readonly workloads?: WorkloadParts;
  /** This replica's shard, with `options.sharding` (then `elector` is its own Lease's). */
  readonly sharding?: ShardParts;
}

/** Builds the parts: nothing starts until the informers are subscribed (operator/manager/lifecycle.ts). */
export async function buildOperator(options: OperatorOptions, logger: Logger): Promise<OperatorParts> {
  const metrics = new OperatorMetrics({ processMetrics: options.processMetrics });
  const { client, ownsClient } = await operatorClient(options, metrics);
  const { scheduler, namespaces } = options;
  const { registry, dependencies } = dependencySource(options, client, logger, metrics);

  const { leaseClient, sharding } = coordination(options, client, logger, metrics, () => cachedKeys(apps, workloads));
  const access = apiAccess(client, { namespaces, logger, scheduler });
  const { apps, deployments, services } = customAppInformers(access, { logger: logger.child({ component: 'watch' }), scheduler }, sharding);
  const elector = sharding?.elector ?? leaderElector(options, leaseClient, metrics, logger);
  const identity = elector?.identity ?? `${OPERATOR_NAME}-${newTraceId()}`;

  const caches = {
    apps: new FreshCache(apps.store, { scheduler }),
    deployments: new FreshCache(deployments.store, { scheduler }),
    services: new FreshCache(services.store, { scheduler }),
  };
  const governance = new RolloutGovernance({
    settings: options.rollouts,
    now: (): number => (scheduler ?? asyncScheduler).now(),
    logger: logger.child({ component: 'rollouts' }),
    metrics: metrics.registry,
    referenced: (ref) => isReferenced(ref, apps, workloads),
  });
  // Keys wait for a worker (a fan-out): Events wait, and a rollout's status goes to a second pass.
  const keysWait = (): boolean => controller.queue.length > 0 || (workloads?.controller.queue.length ?? 0) > 0;
  const recorder = eventRecorder(client, identity, metrics, logger, keysWait);
  const concurrency = options.maxConcurrentReconciles ?? 4;
  const gate = sharding?.shard;
  const controller = customAppController(options, {
    client,
    caches,
    dependencies,
    governance,
    recorder,
    metrics,
    logger,
    busy: keysWait,
    gate,
  });
  const workloads: WorkloadParts | undefined = buildWorkloads(options.workloads, {
    client,
    gateClient: client,
    namespaces,
    logger,
    scheduler,
    metrics,
    dependencies,
    governance,
    recorder,
    concurrency,
    shard: gate,
  });
  return {
    logger,
    metrics,
    client,
    ownsClient,
    dependencies,
    registry,
    apps,
    deployments,
    services,
    access,
    caches,
    elector,
    leaseClient,
    identity,
    governance,
    controller,
    recorder,
    workloads,
    sharding,
  };
}

/** The Events of the reconciles, written asynchronously, yielding for up to 5 s while keys wait for a worker. */
function eventRecorder(
  client: KubeClient,
  identity: string,
  metrics: OperatorMetrics,
  logger: Logger,
  keysWait: () => boolean,
): EventRecorder {
  return new EventRecorder({
    client,
    component: OPERATOR_NAME,
    instance: identity,
    logger: logger.child({ component: 'events' }),
    metrics: metrics.registry,
    yieldTo: { busy: keysWait, maxDelayMs: 5_000 },
  });
}

/** The CustomApp controller: its reconciler on the read-your-writes caches, and the workers that run it. */
function customAppController(
  options: OperatorOptions,
  parts: {
    readonly client: KubeClient;
    readonly caches: OperatorParts['caches'];
    readonly dependencies: DependencySource;
    readonly governance: RolloutGovernance;
    readonly recorder: EventRecorder;
    readonly metrics: OperatorMetrics;
    readonly logger: Logger;
    /** Whether keys wait for a worker: the reconcile then leaves a rollout's status to a second pass. */
    readonly busy: () => boolean;
    /** This replica's shard: the keys it may act on. */
    readonly gate: ShardParts['shard'] | undefined;
  },
): Controller {
  const { metrics } = parts;
  const reconciler = new CustomAppReconciler({
    client: parts.client,
    ...parts.caches,
    dependencies: parts.dependencies,
    governance: parts.governance,
    recorder: parts.recorder,
    notOwnedRetryMs: options.notOwnedRetryMs,
    steps: (step, seconds) => metrics.reconcileStepTime.observe({ step }, seconds),
    busy: parts.busy,
  });
  return new Controller({
    name: CONTROLLER_NAME,
    reconciler,
    logger: parts.logger.child({ controller: CONTROLLER_NAME }),
    metrics,
    concurrency: options.maxConcurrentReconciles ?? 4,
    scheduler: options.scheduler,
    gate: parts.gate,
  });
}

/** The client given in the options, or one built from the kubeconfig (then the operator owns and closes it). */
async function operatorClient(options: OperatorOptions, metrics: OperatorMetrics): Promise<{ client: KubeClient; ownsClient: boolean }> {
  if (options.client) return { client: options.client, ownsClient: false };
  if (!options.kubeConfig) throw new Error('createOperator needs a kubeConfig or a client');
  const client = await KubeClient.fromKubeConfig(options.kubeConfig, {
    onRequest: metrics.onRequest,
    userAgent: OPERATOR_NAME,
    protobuf: options.protobuf,
  });
  return { client, ownsClient: true };
}

/** The dependency source the options name, or ours: the registry of reference-counted watches. */
function dependencySource(
  options: OperatorOptions,
  client: KubeClient,
  logger: Logger,
  metrics: OperatorMetrics,
): { registry?: DependencyRegistry; dependencies: DependencySource } {
  const { scheduler } = options;
  if (options.dependencies) return { dependencies: options.dependencies({ client, logger, metrics: metrics.registry, scheduler }) };
  const registry = new DependencyRegistry({ ...options.registry, client, logger, metrics: metrics.registry, scheduler });
  return { registry, dependencies: new RegistryDependencySource(registry, { logger }) };
}

/** The informers of CustomApps and of the Deployments and Services they own, each through its access gate. */
function customAppInformers(
  access: ApiAccess,
  watchDeps: Parameters<ApiAccess['apps']['watch']>[2],
  sharding: ShardParts | undefined,
): { apps: Informer<CustomApp>; deployments: Informer<Deployment>; services: Informer<Service> } {
  // One watcher per watched namespace (each through its own gate, named after its namespace), merged into one cache.
  const apps: Informer<CustomApp> = informerOf<CustomApp>(
    access.apps.watch(CUSTOM_APPS, (scope) => ({ name: `customapp ${scope}` }), watchDeps),
    CUSTOM_APP_INDEXERS,
    { scope: sharding?.byName<CustomApp>() },
  );
  const owned = (kind: string) => (scope: string) => ({ labelSelector: OWNED_SELECTOR, name: `${kind} ${scope} (owned)` });
  // A CustomApp's Deployment and Service are named after it: the same key, so the same shard.
  const deployments = informerOf<Deployment>(
    access.deployments.watch(DEPLOYMENTS, owned('deployment'), watchDeps),
    {},
    { scope: sharding?.byName() },
  );
  const services = informerOf<Service>(access.services.watch(SERVICES, owned('service'), watchDeps), {}, { scope: sharding?.byName() });
  return { apps, deployments, services };
}

/**
 * What coordinates this replica with the others: the Lease's own client (`client` with its own fence), with
 * `options.leaderElection` or `options.sharding`, and the shard with the latter.
 */
function coordination(
  options: OperatorOptions,
  client: KubeClient,
  logger: Logger,
  metrics: OperatorMetrics,
  keys: () => Record<string, Iterable<string>>,
): { leaseClient?: KubeClient; sharding?: ShardParts } {
  if (options.sharding && options.leaderElection) throw new Error('createOperator: sharding and leaderElection exclude each other');
  const leaseClient = options.leaderElection || options.sharding ? client.withOwnFence() : undefined;
  const sharding: ShardParts | undefined =
    options.sharding && leaseClient
      ? buildShard(options.sharding, {
          client,
          leaseClient,
          logger,
          scheduler: options.scheduler,
          metrics: metrics.registry,
          cachedKeys: keys,
        })
      : undefined;
  return { leaseClient, sharding };
}

/** The Lease elector, with `options.leaderElection` (on the Lease's own client). */
function leaderElector(
  options: OperatorOptions,
  leaseClient: KubeClient | undefined,
  metrics: OperatorMetrics,
  logger: Logger,
): LeaderElector | undefined {
  const { leaderElection, scheduler } = options;
  if (!leaderElection || !leaseClient) return undefined;
  return new LeaderElector({
    client: leaseClient,
    ...leaderElection,
    scheduler,
    // A scheduler given here is virtual time (tests), its own monotonic clock; by default the elector reads
    // performance.now(), never asyncScheduler's wall-clock now().
    monotonicNow: scheduler && (() => scheduler.now()),
    logger: logger.child({ component: 'leader-election' }),
    onLeadingChange: (leading) => metrics.leaderStatus.set({ name: leaderElection.name }, leading ? 1 : 0),
  });
}

/** The keys this replica's caches hold, by kind, for the shard's count of what it owns. */
function cachedKeys(apps: Informer<CustomApp>, workloads: WorkloadParts | undefined): Record<string, Iterable<string>> {
  return {
    customapp: apps.store.keys(),
    // The workload informers cache every object of their kinds (trimmed); only those opted in are workloads.
    workload: Object.entries(workloads?.informers ?? {}).flatMap(([kind, { store }]) =>
      store
        .list()
        .filter((object) => hasOptIn(object.metadata.annotations) || hasOptIn(object.spec.template?.metadata?.annotations))
        .map((object) => `${kind}/${object.metadata.namespace}/${object.metadata.name}`),
    ),
  };
}

/** Whether a CustomApp or a workload references `ref` (`ConfigMap/namespace/name` or `Secret/…`). */
function isReferenced(ref: string, apps: Informer<CustomApp>, workloads: WorkloadParts | undefined): boolean {
  const [kind, ...object] = ref.split('/');
  if (apps.store.byIndex(kind === 'Secret' ? BY_SECRET : BY_CONFIGMAP, object.join('/')).length > 0) return true;
  return Object.values(workloads?.informers ?? {}).some(({ store }) => store.byIndex(BY_REFERENCE, ref).length > 0);
}

/** Stops the dependency source (every dependency watch), the registry, the governance and the caches' sweeps. */
export function closeDependencies(parts: OperatorParts): void {
  parts.dependencies.close();
  parts.governance.close();
  parts.registry?.close();
  for (const cache of [...Object.values(parts.caches), ...Object.values(parts.workloads?.caches ?? {})]) cache.close();
}

/** Closes what building opened, when the operator never started: the above, and the client if it was built here. */
export function closeParts(parts: OperatorParts): void {
  parts.access.close();
  for (const gate of parts.workloads?.gates ?? []) gate.stop();
  closeDependencies(parts);
  if (parts.ownsClient) parts.client.close();
  parts.leaseClient?.close();
}
