// The dependency registry: reference-counted, shared Observables of referenced ConfigMaps and Secrets, with adaptive watches.
import { asyncScheduler, distinctUntilChanged, map, Observable, type SchedulerLike } from 'rxjs';
import { type Logger, silentLogger } from '../log.js';
import type { Registry as MetricsRegistry } from 'prom-client';
import type { WatcherDeps } from '../watch/config.js';
import type { WatchClient } from '../watch/config.js';
import { DependencyGroup, type StreamInfo } from './dependency-group.js';
import { DependencyEntry } from './dependency-entry.js';
import { watchDependencies, type DependencyEvents, type DependencyWatchConfig } from './dependency-watch.js';
import { type FailingList, ListHealth } from './list-health.js';
import { sameState, stateForRef } from './key-digests.js';
import { registerRegistryMetrics } from './registry-metrics.js';
import { refKey, refKeys, type DependencyRef, type DependencyState } from './source.js';

/** Collapse a (kind, namespace) into one namespace watch when it has more referenced objects than this. */
export const DEFAULT_COLLAPSE_THRESHOLD = 10;
/** Split a collapsed (kind, namespace) back into per-object watches when it has fewer than this. */
export const DEFAULT_SPLIT_THRESHOLD = 5;

/** Options of {@link DependencyRegistry}. Pass `client` (the real watches) or `events` (tests, other strategies). */
export interface DependencyRegistryOptions {
  /** The API client the default watch streams use. */
  readonly client?: WatchClient;
  /** The watch streams themselves; overrides `client`. @default watchDependencies(client, watch, …) */
  readonly events?: DependencyEvents;
  /** Watcher tuning for the default streams (page size, timeouts, backoff). @default the watcher's defaults */
  readonly watch?: DependencyWatchConfig;
  /**
   * Past this many referenced objects of one kind in one namespace, their per-object watches collapse into one
   * namespace watch. 10 keeps a namespace at ≤ 10 sockets per kind before the switch and at 1 after it.
   * @default 10
   */
  readonly collapseThreshold?: number;
  /** Below this many, a collapsed namespace splits back; lower than the collapse threshold, for hysteresis. @default 5 */
  readonly splitThreshold?: number;
  /** Structured logs: acquire, share, release, collapse, split (and the watch streams' lifecycles). @default silent */
  readonly logger?: Logger;
  /** Timers of the default streams, and the clock of switch durations. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** Jitter source of the default streams. @default Math.random */
  readonly random?: () => number;
  /**
   * Where to register `customapp_dependency_watches_active{kind}`, `customapp_watch_streams_open{kind,scope}` and
   * `customapp_dependency_subscribers{kind}` (one registry per DependencyRegistry; never the global one).
   * @default no metrics
   */
  readonly metrics?: MetricsRegistry;
}

/**
 * Hands out one Observable per referenced object (a ConfigMap or a Secret): its {@link DependencyState}, present
 * with a content hash or absent. The registry never keeps object payloads: each object is hashed on arrival and
 * dropped, so it never keeps a Secret's value.
 *
 * `acquire(ref)` is cold and reference-counted:
 * - the first subscriber of a ref starts what watches it (a list and a watch with `fieldSelector=metadata.name`,
 *   or, past the collapse threshold, a share of its namespace's watch); the object need not exist yet, and its
 *   creation is an emission;
 * - later subscribers share that watch, and get the current state at once when it is synced;
 * - it emits when the ref syncs, then only when existence or the content hash changes (metadata-only edits and
 *   watch reconnections emit nothing);
 * - the last unsubscribe stops the watch (or releases the name from the namespace watch, which splits back into
 *   per-object watches below the split threshold).
 *
 * A ref with `keys` shares its object's watch and entry with every other ref of that object; it sees the hash of its
 * keys alone (`key-digests.ts`, from the per-key digests the entry keeps), and emits only when that changes: a change
 * of another key emits nothing to it.
 *
 * Which physical watches serve a ref (per object or per namespace) changes under the subscribers without them
 * noticing; see {@link DependencyGroup} for how a switch loses no event.
 */
export class DependencyRegistry {
  private readonly groups = new Map<string, DependencyGroup>();
  private readonly events: DependencyEvents;
  private readonly log: Logger;
  private readonly collapseThreshold: number;
  private readonly splitThreshold: number;
  private readonly now: () => number;
  private closed = false;
  /** Follows the lists of the default streams (streams given as `events` are their maker's to report). */
  private readonly health: ListHealth;
  /** The groups that got entries during {@link batch}, covered when it ends. */
  private batching: Set<DependencyGroup> | undefined;

  constructor(options: DependencyRegistryOptions) {
    this.log = (options.logger ?? silentLogger()).child({ component: 'dependency-registry' });
    const scheduler = options.scheduler ?? asyncScheduler;
    this.now = () => scheduler.now();
    const deps: WatcherDeps = { scheduler, logger: options.logger, random: options.random };
    this.health = new ListHealth(this.log, this.now);
    if (options.events) this.events = options.events;
    else if (options.client) this.events = watchDependencies(options.client, options.watch, deps, this.health);
    else throw new Error('DependencyRegistry needs a client or an events factory');
    this.collapseThreshold = options.collapseThreshold ?? DEFAULT_COLLAPSE_THRESHOLD;
    this.splitThreshold = options.splitThreshold ?? DEFAULT_SPLIT_THRESHOLD;
    if (!(this.splitThreshold >= 0 && this.splitThreshold <= this.collapseThreshold)) {
      throw new Error(`splitThreshold (${this.splitThreshold}) must be between 0 and collapseThreshold (${this.collapseThreshold})`);
    }
    if (options.metrics) registerRegistryMetrics(options.metrics, this);
  }

  /** The state of `ref`: see the class comment. Completes when the registry closes. */
  acquire(ref: DependencyRef): Observable<DependencyState> {
    return new Observable<DependencyState>((subscriber) => {
      if (this.closed) {
        subscriber.complete();
        return undefined;
      }
      const entry = this.join(ref);
      const states = entry.states();
      const inner = (
        refKeys(ref)
          ? states.pipe(
              map((state) => stateForRef(state, ref)),
              distinctUntilChanged(sameState),
            )
          : states
      ).subscribe(subscriber);
      return () => {
        inner.unsubscribe();
        this.leave(entry);
      };
    });
  }

  /**
   * Runs `acquireAll`, whose acquires only register their refs; then each group they touched chooses its granularity
   * once for all of them and covers them: a group past the collapse threshold starts its namespace watch alone,
   * without the per-object watches of its first refs.
   */
  batch(acquireAll: () => void): void {
    if (this.batching) {
      acquireAll();
      return;
    }
    const touched = new Set<DependencyGroup>();
    this.batching = touched;
    try {
      acquireAll();
    } finally {
      this.batching = undefined;
      for (const group of touched) if (this.groups.get(`${group.kind}/${group.namespace}`) === group) group.coverAll();
    }
  }

  /**
   * The state last emitted for `ref`'s object, as `ref` sees it (the hash of its keys, for a ref with keys), or
   * undefined when the object is not acquired or not synced yet.
   */
  current(ref: DependencyRef): DependencyState | undefined {
    const state = this.groups.get(groupKey(ref))?.entries.get(ref.name)?.current;
    return state && stateForRef(state, ref);
  }

  /** The refs acquired now, each once. */
  watched(): DependencyRef[] {
    return [...this.groups.values()].flatMap((group) => [...group.entries.values()].map((entry) => entry.ref));
  }

  /** The subscriber count of each acquired ref, keyed by {@link refKey}. */
  subscribers(): Map<string, number> {
    return new Map(
      [...this.groups.values()].flatMap((group) =>
        [...group.entries.values()].map((entry) => [refKey(entry.ref), entry.subscribers] as const),
      ),
    );
  }

  /** The physical watch streams open now, for invariants and metrics. */
  streams(): StreamInfo[] {
    return [...this.groups.values()].flatMap((group) => group.streams());
  }

  /** The streams whose list has failed and not completed since (only the default streams, made from `client`). */
  failingLists(): FailingList[] {
    return this.health.failing();
  }

  /** Each default stream's list failing, as it starts to (`list.failing`). */
  listFailures(): Observable<FailingList> {
    return this.health.failures$;
  }

  /** Stops every watch and completes every acquired Observable; later acquires complete at once. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const groups = [...this.groups.values()];
    this.groups.clear();
    for (const group of groups) {
      group.close();
      for (const entry of group.entries.values()) entry.close();
    }
    this.log.info({ groups: groups.length }, 'closed');
  }

  private join(ref: DependencyRef): DependencyEntry {
    const key = groupKey(ref);
    let group = this.groups.get(key);
    if (!group) {
      group = new DependencyGroup(ref.kind, ref.namespace, {
        events: this.events,
        collapseThreshold: this.collapseThreshold,
        splitThreshold: this.splitThreshold,
        logger: this.log,
        now: this.now,
      });
      this.groups.set(key, group);
    }
    let entry = group.entries.get(ref.name);
    const first = !entry;
    entry ??= new DependencyEntry({ kind: ref.kind, namespace: ref.namespace, name: ref.name });
    entry.subscribers += 1;
    if (first) group.add(entry, this.batching !== undefined);
    this.batching?.add(group);
    this.log.info({ ref: refKey(ref), subscribers: entry.subscribers, granularity: group.mode }, first ? 'acquire' : 'share');
    return entry;
  }

  private leave(entry: DependencyEntry): void {
    entry.subscribers -= 1;
    this.log.info({ ref: refKey(entry.ref), subscribers: entry.subscribers }, 'release');
    if (entry.subscribers > 0 || this.closed) return;
    const key = groupKey(entry.ref);
    const group = this.groups.get(key);
    if (!group || group.entries.get(entry.ref.name) !== entry) return;
    group.remove(entry.ref.name);
    if (group.entries.size === 0) {
      group.close();
      this.groups.delete(key);
    }
  }
}

function groupKey(ref: DependencyRef): string {
  return `${ref.kind}/${ref.namespace}`;
}
