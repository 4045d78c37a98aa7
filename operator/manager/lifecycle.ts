// Runs a built operator: triggers in, caches synced, the Lease held, workers on; fenced when the Lease is lost; stopped in order.
import { asyncScheduler, combineLatest, filter, firstValueFrom, merge, Subscription } from 'rxjs';
import type { Trigger } from '../controller/controller.js';
import type { Informer } from '../cache/informer.js';
import type { CustomApp } from '../customapp/custom-app.js';
import { subscribeTriggers } from '../customapp/triggers.js';
import { DEFAULT_COLLAPSE_THRESHOLD } from '../dependencies/registry.js';
import { DEFAULT_ROLLOUT_SETTINGS } from '../governance/governance.js';
import { type DependencyRef, useKey } from '../dependencies/source.js';
import { refsToAcquire } from '../reconcile/dependencies-step.js';
import { readOwnedDeployments } from '../reconcile/fresh-deployments.js';
import { customAppStandings } from '../reconcile/rollout-standings.js';
import { workloadStandings } from '../workload/standings.js';
import { subscribeWorkloadTriggers } from '../workload/triggers.js';
import { parseWorkloadKey, type Workload, type WorkloadKind, workloadKey } from '../workload/workload.js';
import type { OperatorParts } from './build.js';
import { closeDependencies } from './build.js';
import { notInstalled } from './workloads.js';
import { refsSynced } from './refs-synced.js';
import { keyLeftCaches, queuePlacesKept } from './shard-keys.js';
import type { Endpoints } from './endpoints.js';
import { unsyncedCaches } from './endpoints.js';
import type { OperatorOptions } from './options.js';

/** A running operator's lifecycle. */
export interface Lifecycle {
  /** Resolves when the workers start; never, if the operator stops first. */
  readonly started: Promise<void>;
  /** Resolves when the operator has stopped; rejects when it stopped on its own (leadership lost). */
  readonly done: Promise<void>;
  /** True while the workers run. */
  readonly reconciling: () => boolean;
  /**
   * Stops intake, drains in-flight reconciles, writes the Events left (up to 5 s), unsubscribes every stream, fences
   * the client (what is still in flight is aborted), releases the Lease, closes the servers.
   */
  stop(): Promise<void>;
}

/**
 * Starts the operator and runs it in the background:
 * 1. subscribes the read-your-writes caches to their stores' changes, then the triggers (which starts the watches);
 * 2. waits for the three caches to sync, then (with leader election) for the Lease, then rebuilds the rollout
 *    governance from the caches (the budget's slots and queue, the breakers that were open), acquires the refs of the
 *    cached apps in the namespaces that collapse and waits for them to sync, then starts the workers;
 * 3. the moment the Lease is lost, fences the client (what is in flight is aborted, later writes are refused: a
 *    standby may lead once the Lease expires) and stops, `done` rejecting.
 * `stop` undoes it all in order, once, however often it is called.
 */
export function runLifecycle(options: OperatorOptions, parts: OperatorParts, endpoints: Endpoints): Lifecycle {
  const { logger, apps, deployments, services, controller, elector, client } = parts;

  const { workloads } = parts;
  const triggers = subscribeInputs(options, parts);

  // The moment leadership is lost, nothing this process started as leader may still be written.
  const fenced = (elector?.lost ?? new Promise<never>(() => undefined)).then(() => {
    client.fence('leader election lost');
    logger.error({ inFlight: controller.queue.inFlight }, 'fenced: leadership lost, writes refused');
  });

  const stopping = new AbortController();
  const aborted = new Promise<false>((resolve) => stopping.signal.addEventListener('abort', () => resolve(false), { once: true }));
  let reconciling = false;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });

  const run = async (): Promise<void> => {
    const allSynced = allCachesSynced(parts);
    if (!(await Promise.race([allSynced.then(() => true), aborted]))) return;
    logger.info({ customapps: apps.store.size, deployments: deployments.store.size, services: services.store.size }, 'caches synced');
    if (elector && !(await elector.acquire(stopping.signal))) return;
    if (stopping.signal.aborted) return;
    if (elector) await readDeploymentsAfresh(options, parts, stopping.signal);
    if (stopping.signal.aborted) return;
    // The budget's slots and queue and the open breakers, from the caches as they are now (a restart, a failover).
    const cachedApps = rebuildGovernance(parts);
    const acquired = acquireCachedRefs(parts, cachedApps, options.registry?.collapseThreshold ?? DEFAULT_COLLAPSE_THRESHOLD);
    await awaitAcquiredRefs(options, parts, acquired, stopping.signal);
    if (stopping.signal.aborted) return;
    controller.start();
    workloads?.controller.start();
    reconciling = true;
    markStarted();
    if (elector && (await Promise.race([fenced.then(() => true), aborted]))) {
      throw new Error(`leader election lost: the Lease ${elector.lease} was not renewed within the renew deadline`);
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
      // A shard starts no reconcile from now on; those in flight drain below, then its Lease is released.
      parts.sharding?.shard.stop();
      await Promise.all([controller.stop(), workloads?.controller.stop()]);
      reconciling = false;
      // The Events of the last reconciles, while this process may still write (it holds the Lease, if any).
      await parts.recorder.flush(5_000);
      await closeAfterDrain(parts, endpoints, triggers);
      logger.info('stopped');
      markStopped();
    })();
    return stopped;
  };

  const done = run().then(
    () => hasStopped,
    async (error: unknown) => {
      logger.error({ err: error }, 'operator failed');
      await stop();
      throw error;
    },
  );
  // Keep `done` from being an unhandled rejection when nobody awaits it; callers still see the rejection.
  done.catch(() => undefined);
  return { started, done, reconciling: () => reconciling, stop };
}

/**
 * Starts the access gates and subscribes everything that feeds the operator, in this order: the flap breakers to
 * content changes, the budget's and (sharded) the shard's own triggers, the read-your-writes caches to their stores'
 * changes, then the triggers (which starts the watches). Unsubscribing the result undoes all of it.
 */
function subscribeInputs(options: OperatorOptions, parts: OperatorParts): Subscription {
  const { logger, apps, deployments, services, caches, controller, elector, governance, workloads } = parts;
  parts.access.start();
  for (const gate of workloads?.gates ?? []) gate.start();
  const triggers = new Subscription();
  // The flap breakers count content changes before any reconcile can read them (both run on the same emission).
  triggers.add(parts.dependencies.changes.subscribe((state) => governance.observe(state)));
  const route = (key: string, trigger: Trigger): void => {
    if (workloads && parseWorkloadKey(key)) workloads.controller.enqueue(key, trigger);
    else controller.enqueue(key, trigger);
  };
  // A free slot of the rollout budget queues the CustomApps and workloads it lets go: the budget's own trigger, no polling.
  triggers.add(governance.eligible.subscribe((key) => route(key, { source: 'rollout-budget', reason: 'slot free' })));
  const { sharding } = parts;
  if (sharding && elector) {
    // Keys this shard held back (another member still claimed them) go once they are its alone.
    triggers.add(sharding.shard.ready$.subscribe((key) => route(key, { source: 'shard', reason: 'acquired' })));
    // The cluster-wide rollout budget, split among the members: this shard's part in every view still in play.
    const limit = options.rollouts?.maxConcurrentRollouts ?? DEFAULT_ROLLOUT_SETTINGS.maxConcurrentRollouts;
    if (limit > 0) {
      governance.setShare(0);
      sharding.shard.countRollouts(() => governance.inProgressKeys().length);
      triggers.add(sharding.shard.viewsChanged$.subscribe(() => governance.setShare(sharding.shard.budgetShare(limit))));
    }
    // A key that left this shard's caches (given up: the relist after an acknowledgement) lets go of its slot and
    // place (its new owner counts it; kept here, it would hold them ahead of this shard's own keys), of its refs and of
    // what was reported of it.
    const inScope = (key: string): boolean => sharding.shard.inScope(key);
    const holdings = {
      forget: (key: string) => governance.forget(key),
      release: (key: string) => parts.dependencies.release(key),
      forgetReports: (key: string) => workloads?.forgetReports(key),
    };
    const shardLogger = logger.child({ component: 'shard' });
    const givenUp = (key: string): void => {
      keyLeftCaches(key, inScope, holdings, shardLogger);
    };
    triggers.add(apps.events$.subscribe((change) => change.type === 'delete' && givenUp(change.key)));
    for (const [kind, { events$ }] of Object.entries(workloads?.informers ?? {})) {
      triggers.add(
        events$.subscribe((change) => {
          const { namespace, name } = change.object.metadata;
          if (change.type === 'delete') givenUp(workloadKey(kind as WorkloadKind, namespace ?? '', name ?? ''));
        }),
      );
    }
    sharding.shard.start(elector, async (view) => {
      // The rollouts it gives up stay counted here until their new owners count them.
      sharding.shard.handOff(governance.inProgressKeys(), view);
      await prepareView(parts, sharding.shard.scopeVersionNow, inScope);
    });
  }
  triggers.add(apps.events$.subscribe((change) => caches.apps.observe(change)));
  triggers.add(deployments.events$.subscribe((change) => caches.deployments.observe(change)));
  triggers.add(services.events$.subscribe((change) => caches.services.observe(change)));
  for (const [kind, { events$ }] of Object.entries(workloads?.informers ?? {}) as [WorkloadKind, Informer<Workload>][]) {
    const cache = workloads!.caches[kind]!;
    triggers.add(events$.subscribe((change) => cache.observe(change)));
  }
  triggers.add(
    subscribeTriggers(
      { apps, deployments, services, dependencies: parts.dependencies, echoes: caches },
      (key, trigger) => controller.enqueue(key, trigger),
      logger.child({ component: 'triggers' }),
    ),
  );
  if (workloads) {
    triggers.add(
      subscribeWorkloadTriggers(
        workloads.informers,
        parts.dependencies,
        (key, trigger) => workloads.controller.enqueue(key, trigger),
        logger.child({ component: 'triggers' }),
        workloads.caches,
      ),
    );
  }
  return triggers;
}

/**
 * Holds the workers until the refs just acquired for the cached apps have synced (`refs-synced.ts`): the apps'
 * triggers meanwhile only queue their keys, each once, so a restart reconciles each app once. Logged with how it ended.
 */
async function awaitAcquiredRefs(
  options: OperatorOptions,
  parts: OperatorParts,
  refs: readonly DependencyRef[],
  signal: AbortSignal,
): Promise<void> {
  if (refs.length === 0) return;
  const scheduler = options.scheduler ?? asyncScheduler;
  const since = scheduler.now();
  const outcome = await refsSynced(parts.dependencies, refs, { scheduler, signal, listFailures: parts.registry?.listFailures() });
  parts.logger.info({ refs: refs.length, outcome, durationMs: scheduler.now() - since }, 'dependencies.synced');
}

/**
 * Governance's memory from the caches as they are now (a restart, a failover, a shard's new share), keeping the queue
 * places `kept` (see `RolloutGovernance.rebuild`).
 */
function rebuildGovernance(parts: OperatorParts, kept: readonly { readonly key: string; readonly since: number }[] = []): CustomApp[] {
  const { apps, deployments, caches, governance, workloads } = parts;
  const cachedApps = apps.store.keys().flatMap((key) => caches.apps.get(key) ?? []);
  const workloadStores = Object.fromEntries(Object.entries(workloads?.informers ?? {}).map(([kind, { store }]) => [kind, store]));
  governance.rebuild(
    [
      ...customAppStandings(cachedApps, (key) => caches.deployments.get(key), deployments.store.keys()),
      ...workloadStandings(workloadStores),
    ],
    kept,
  );
  return cachedApps;
}

/**
 * On taking the Lease: the owned Deployments as the API server holds them now, into the cache the rebuild reads (a
 * standby's watch may not have delivered the rollouts the old leader granted last, `reconcile/fresh-deployments.ts`).
 * A read that fails is logged and the rebuild goes on from the caches as they are (the old leader's last grants may
 * then go uncounted until the watch delivers them), never a stop.
 */
async function readDeploymentsAfresh(options: OperatorOptions, parts: OperatorParts, signal: AbortSignal): Promise<void> {
  const { client, caches, logger } = parts;
  try {
    const read = await readOwnedDeployments(client, caches.deployments, options.namespaces, signal);
    logger.info({ deployments: read }, 'rollout.deployments.read');
  } catch (error) {
    if (signal.aborted) return;
    logger.warn({ err: error }, 'rollout.deployments.unread');
  }
}

/**
 * Before a shard acknowledges a view: every scoped cache has listed with the scope `version` (or later), so that it
 * holds the keys the shard takes, and the governance is rebuilt from them (their slots and their place in the queue
 * come with them: both are in their objects), keeping the places of the keys still `inScope` that their objects do not
 * record (`queuePlacesKept`). A workload kind not installed (Argo's CRD) has nothing to list.
 */
async function prepareView(parts: OperatorParts, version: number, inScope: (key: string) => boolean): Promise<void> {
  const { apps, deployments, services, workloads } = parts;
  const absent = new Set<string>(notInstalled(workloads));
  const scoped = [
    apps,
    deployments,
    services,
    ...Object.entries(workloads?.informers ?? {})
      .filter(([kind]) => !absent.has(kind))
      .map(([, each]) => each),
  ];
  const listed = scoped.flatMap((each) => (each.listedScope$ ? [each.listedScope$] : []));
  await firstValueFrom(combineLatest(listed).pipe(filter((versions) => versions.every((each) => each >= version))));
  rebuildGovernance(parts, queuePlacesKept(parts.governance.budget.snapshot().queue, inScope));
}

/** Resolves once every cache has synced (an add-on whose CRD is not installed counts as synced); false if their streams all complete first. */
function allCachesSynced(parts: OperatorParts): Promise<unknown> {
  const { apps, deployments, services, workloads } = parts;
  const workloadsSynced = Object.values(workloads?.informers ?? {}).map((informer) => informer.synced$);
  // An add-on's gate concluding that its CRD is not installed ends the wait for its cache as its sync would.
  const addOnChecks = Object.values(workloads?.addOns ?? {}).flatMap((gates) => gates.map((gate) => gate.problems));
  const synced$ = merge(apps.synced$, deployments.synced$, services.synced$, ...workloadsSynced, ...addOnChecks).pipe(
    filter(() => unsyncedCaches(parts).length === 0),
  );
  return firstValueFrom(synced$, { defaultValue: false });
}

/** After the drain and the last Events: unsubscribes the inputs, closes the gates and the watches, fences, releases the Lease, closes. */
async function closeAfterDrain(parts: OperatorParts, endpoints: Endpoints, triggers: Subscription): Promise<void> {
  const { client, elector, workloads } = parts;
  triggers.unsubscribe();
  parts.access.close();
  for (const gate of workloads?.gates ?? []) gate.stop();
  closeDependencies(parts);
  // Once the Lease is released a standby leads at once: a write of this process still on its way (an Event the
  // flush gave up on) must not land after that. Fencing aborts it and refuses any later one; the elector has its
  // own client, so the release itself still goes.
  client.fence('stopping: the Lease is being released');
  await elector?.release();
  await endpoints.close();
  client.close();
  parts.leaseClient?.close();
}

/**
 * Before the workers start, when the DependencySource can take them as one batch (ours), the cached CustomApps (not
 * being deleted) of each namespace whose refs of a kind are more than the dependency registry's collapse threshold
 * acquire the refs their first reconcile would (`refsToAcquire`, the same `use`), all at once, in one batch. That namespace's
 * group then collapses at once (its namespace watch alone, no per-object watch for its first refs) and its first list
 * covers them all; acquired one reconcile at a time, a ref added after that list needs a one-shot list of its own
 * (2,990 LISTs at a 10k cold start). Smaller namespaces are left to their reconciles: acquired all at once, their
 * per-object watches would start together, a burst of requests (about 1,200 in the 1,000-app soak, which then lost
 * its Lease right after each acquisition on a loaded machine). The reconciles that follow make the same `use` calls,
 * which change nothing; an app deleted meanwhile is released by its reconcile (gone from the cache) or its
 * finalizer, as if its reconcile had acquired them. Returns the refs it acquired (none without a batch), each once.
 */
export function acquireCachedRefs(
  parts: Pick<OperatorParts, 'dependencies' | 'caches'>,
  apps: readonly CustomApp[],
  collapseThreshold: number,
): DependencyRef[] {
  const held = apps
    .filter((app) => !app.metadata.deletionTimestamp)
    .map((app) => {
      const key = `${app.metadata.namespace}/${app.metadata.name}`;
      const refs = refsToAcquire(app, parts.caches.deployments.get(key));
      return { key, refs: [...refs.spec, ...refs.handoff] };
    });
  const perGroup = new Map<string, Set<string>>();
  for (const { refs } of held) {
    for (const ref of refs) {
      const group = `${ref.kind}/${ref.namespace}`;
      const names = perGroup.get(group) ?? new Set<string>();
      names.add(ref.name);
      perGroup.set(group, names);
    }
  }
  const collapsing = (ref: DependencyRef): boolean => (perGroup.get(`${ref.kind}/${ref.namespace}`)?.size ?? 0) > collapseThreshold;
  // Only a source that can take them as one batch: without one, the refs' watches would all start at once (the
  // benchmark's seed strategy, one client-node informer per ref, then failed to converge at 1k).
  const acquired = new Map<string, DependencyRef>();
  parts.dependencies.batch?.(() => {
    for (const { key, refs } of held) {
      if (!refs.some(collapsing)) continue;
      parts.dependencies.use(key, refs);
      for (const ref of refs) acquired.set(useKey(ref), ref);
    }
  });
  return [...acquired.values()];
}
