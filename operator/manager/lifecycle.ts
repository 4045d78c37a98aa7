// Runs a built operator: triggers in, caches synced, the Lease held, workers on; fenced when the Lease is lost; stopped in order.
import { filter, firstValueFrom, merge, Subscription } from 'rxjs';
import type { CustomApp } from '../customapp/custom-app.js';
import { subscribeTriggers } from '../customapp/triggers.js';
import { heldRefs } from '../reconcile/dependencies-step.js';
import type { OperatorParts } from './build.js';
import { closeDependencies } from './build.js';
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
  /** Stops intake, drains in-flight reconciles, unsubscribes every stream, releases the Lease, closes the servers. */
  stop(): Promise<void>;
}

/**
 * Starts the operator and runs it in the background:
 * 1. subscribes the read-your-writes caches to their stores' changes, then the triggers (which starts the watches);
 * 2. waits for the three caches to sync, then (with leader election) for the Lease, then rebuilds the rollout
 *    governance from the caches (the budget's slots and queue, the breakers that were open), then starts the workers;
 * 3. the moment the Lease is lost, fences the client (what is in flight is aborted, later writes are refused: a
 *    standby may lead once the Lease expires) and stops, `done` rejecting.
 * `stop` undoes it all in order, once, however often it is called.
 */
export function runLifecycle(options: OperatorOptions, parts: OperatorParts, endpoints: Endpoints): Lifecycle {
  const { logger, apps, deployments, services, caches, controller, elector, client, governance } = parts;

  parts.access.start();
  const triggers = new Subscription();
  // The flap breakers count content changes before any reconcile can read them (both run on the same emission).
  triggers.add(parts.dependencies.changes.subscribe((state) => governance.observe(state)));
  // A free slot of the rollout budget queues the CustomApps it lets go: the budget's own trigger, no polling.
  triggers.add(governance.eligible.subscribe((key) => controller.enqueue(key, { source: 'rollout-budget', reason: 'slot free' })));
  triggers.add(apps.events$.subscribe((change) => caches.apps.observe(change)));
  triggers.add(deployments.events$.subscribe((change) => caches.deployments.observe(change)));
  triggers.add(services.events$.subscribe((change) => caches.services.observe(change)));
  triggers.add(
    subscribeTriggers(
      { apps, deployments, services, dependencies: parts.dependencies },
      (key, trigger) => controller.enqueue(key, trigger),
      logger.child({ component: 'triggers' }),
    ),
  );

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
    const synced$ = merge(apps.synced$, deployments.synced$, services.synced$).pipe(filter(() => unsyncedCaches(parts).length === 0));
    const allSynced = firstValueFrom(synced$, { defaultValue: false });
    if (!(await Promise.race([allSynced.then(() => true), aborted]))) return;
    logger.info({ customapps: apps.store.size, deployments: deployments.store.size, services: services.store.size }, 'caches synced');
    if (elector && !(await elector.acquire(stopping.signal))) return;
    if (stopping.signal.aborted) return;
    // The budget's slots and queue and the open breakers, from the caches as they are now (a restart, a failover).
    const cachedApps = apps.store.keys().flatMap((key) => caches.apps.get(key) ?? []);
    governance.rebuild(cachedApps, (key) => caches.deployments.get(key));
    holdCachedRefs(parts, cachedApps);
    controller.start();
    reconciling = true;
    markStarted();
    if (elector && (await Promise.race([fenced.then(() => true), aborted]))) {
      const { namespace, name } = options.leaderElection!;
      throw new Error(`leader election lost: the Lease ${namespace}/${name} was not renewed within the renew deadline`);
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
      // The Events of the last reconciles, while this process may still write (it holds the Lease, if any).
      await parts.recorder.flush(5_000);
      triggers.unsubscribe();
      parts.access.close();
      closeDependencies(parts);
      await elector?.release();
      await endpoints.close();
      client.close();
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
 * Before the workers start, every cached CustomApp that is not being deleted holds the refs its first reconcile would
 * (`heldRefs`, the same `use`), all at once. A namespace's dependency group then sees all its refs while its first
 * list runs, collapses at once and covers them with that one list; acquired one reconcile at a time, a ref added
 * after the list needs a one-shot list of its own (2,551 LISTs at a 10k cold start). The reconciles that follow make
 * the same `use` calls, which change nothing. An app deleted meanwhile is released by its reconcile (gone from the
 * cache) or its finalizer, as if its reconcile had acquired them.
 */
export function holdCachedRefs(parts: Pick<OperatorParts, 'dependencies' | 'caches'>, apps: readonly CustomApp[]): void {
  for (const app of apps) {
    if (app.metadata.deletionTimestamp) continue;
    const held = heldRefs(app, parts.caches.deployments.get(`${app.metadata.namespace}/${app.metadata.name}`));
    parts.dependencies.use(`${app.metadata.namespace}/${app.metadata.name}`, [...held.spec, ...held.handoff]);
  }
}
