// Builds a shard for `--sharding`: the ring's Lease informer, this replica's own Lease, its gauges; the manager scopes the caches with it.
import { randomUUID } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';
import { filter, map, merge, type SchedulerLike, asyncScheduler } from 'rxjs';
import { OPERATOR_NAME } from '../../api/customapp.js';
import { type CacheScope, type Informer, informer } from '../cache/informer.js';
import { objectKey } from '../cache/store.js';
import type { KubeClient } from '../kube/client.js';
import { type ApiError, isConflict, isNotFound } from '../kube/errors.js';
import type { KubeObject, Lease } from '../kube/objects.js';
import { LEASES } from '../kube/resources.js';
import { LeaderElector } from '../leader/leader-elector.js';
import type { Logger } from '../log.js';
import { ownerOf } from '../shard/ring.js';
import { RING_LABEL, Shard } from '../shard/shard.js';
import type { ShardingSettings } from './options.js';

/** The name of a replica's Lease in the ring: the operator's name, `-shard-`, and the replica's identity. */
export function shardLeaseName(identity: string): string {
  return `${OPERATOR_NAME}-shard-${identity}`
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .slice(0, 253);
}

/** The label selector of the ring's Leases. */
export const RING_SELECTOR = `${RING_LABEL}=${OPERATOR_NAME}`;

/** A shard and what runs it. */
export interface ShardParts {
  readonly shard: Shard;
  /** The elector of this replica's own Lease (nobody else takes it while it renews). */
  readonly elector: LeaderElector;
  /** The ring's Leases (this namespace, the ring label). */
  readonly ring: Informer<Lease>;
  /** The scope of a cache whose objects' keys are `namespace/name` (the CustomApps, their Deployments and Services). */
  readonly byName: <T extends KubeObject>() => CacheScope<T>;
}

/** What {@link buildShard} needs from the operator being built. */
export interface ShardContext {
  readonly client: KubeClient;
  /** The Lease's own client (its own fence, so that a stopping replica still releases its Lease). */
  readonly leaseClient: KubeClient;
  readonly logger: Logger;
  readonly scheduler?: SchedulerLike;
  readonly metrics: Registry;
  /** The keys in this replica's caches, per kind (`customapp`, `workload`), for the gauges and the ownership log. */
  readonly cachedKeys: () => Readonly<Record<string, Iterable<string>>>;
}

/**
 * Builds the shard of `settings`: its Lease is `customapp-operator-shard-<identity>` in the settings' namespace,
 * labelled with the ring, held by `<identity>_<uuid>` (a restarted replica waits for its previous incarnation's Lease
 * to expire, or be released, before it acts); the durations are leader election's. Writes of `client` are refused
 * past the Lease's renew deadline, even before the timer that notices it has run.
 */
export function buildShard(settings: ShardingSettings, context: ShardContext): ShardParts {
  const { scheduler, logger } = context;
  const monotonicNow = scheduler ? () => scheduler.now() : () => performance.now();
  const member = shardLeaseName(settings.identity);
  const ring = informer<Lease>(
    context.client,
    LEASES,
    { namespace: settings.namespace, labelSelector: RING_SELECTOR, name: 'lease ring', eventLogLevel: 'debug' },
    {},
    { logger: logger.child({ component: 'watch' }), scheduler },
  );
  const leaseDurationMs = settings.leaseDurationMs ?? 15_000;
  const shardLogger = logger.child({ component: 'shard' });
  const collect = staleLeaseCollector(settings.namespace, context, shardLogger);
  const shard = new Shard({
    member,
    leases$: merge(ring.synced$.pipe(filter(Boolean)), ring.events$).pipe(map(() => ring.store.list())),
    monotonicNow,
    scheduler: scheduler ?? asyncScheduler,
    defaultLeaseDurationMs: leaseDurationMs,
    logger: shardLogger,
    cachedKeys: () => Object.values(context.cachedKeys()).flatMap((keys) => [...keys]),
    collect,
  });
  const elector = new LeaderElector({
    client: context.leaseClient,
    namespace: settings.namespace,
    name: member,
    identity: `${settings.identity}_${randomUUID()}`,
    leaseDurationMs,
    renewDeadlineMs: settings.renewDeadlineMs,
    retryPeriodMs: settings.retryPeriodMs,
    scheduler,
    monotonicNow: scheduler && monotonicNow,
    labels: { [RING_LABEL]: OPERATOR_NAME },
    annotations: () => shard.annotations(),
    onLeadingChange: () => shard.leaseChanged(),
    logger: logger.child({ component: 'shard' }),
  });
  context.client.fenceWhen(() =>
    monotonicNow() >= elector.validUntil
      ? `the shard Lease ${settings.namespace}/${member} is not held within its renew deadline`
      : undefined,
  );
  registerShardGauges(shard, member, context);
  return {
    shard,
    elector,
    ring,
    byName: <T extends KubeObject>(): CacheScope<T> => ({
      keeps: (object: T) => shard.inScope(objectKey(object)),
      versions$: shard.scope$,
    }),
  };
}

/**
 * Deletes a stale ring Lease unless it changed since (a resourceVersion precondition: its holder is back) or is gone
 * already (another member collected it), counting what it deleted in `customapp_shard_leases_collected_total`.
 */
function staleLeaseCollector(
  namespace: string,
  context: ShardContext,
  shardLogger: Logger,
): (name: string, resourceVersion: string) => Promise<void> {
  const collected = new Counter({
    name: 'customapp_shard_leases_collected_total',
    help: 'Stale ring Leases this replica deleted (a replica that stopped renewing its Lease 10 Lease durations ago)',
    registers: [context.metrics],
  });
  return async (name, resourceVersion) => {
    try {
      await context.client.delete(LEASES, namespace, name, { preconditions: { resourceVersion } });
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) {
        shardLogger.info({ lease: name, resourceVersion, reason: (error as ApiError).reason }, 'shard.lease-kept');
        return;
      }
      shardLogger.warn({ err: error, lease: name }, 'shard.lease-collect-failed');
      throw new Error(`deleting the stale shard Lease ${namespace}/${name}`, { cause: error });
    }
    collected.inc();
    shardLogger.info({ lease: name, resourceVersion }, 'shard.lease-collected');
  };
}

/** The gauges of a shard: the objects it owns in its view, by kind, and the live members it sees. */
function registerShardGauges(shard: Shard, member: string, context: ShardContext): void {
  const registers = [context.metrics];
  new Gauge({
    name: 'customapp_shard_objects',
    help: 'Objects this replica owns in the view of the ring it sees (kind: customapp or workload)',
    labelNames: ['kind'],
    registers,
    collect() {
      const view = shard.liveMembers;
      for (const [kind, keys] of Object.entries(context.cachedKeys())) {
        let owned = 0;
        for (const key of keys) if (ownerOf(key, view) === member) owned += 1;
        this.set({ kind }, owned);
      }
    },
  });
  new Gauge({
    name: 'customapp_shard_members',
    help: 'Live members of the ring this replica sees, itself included',
    registers,
    collect() {
      this.set(shard.liveMembers.length);
    },
  });
}
