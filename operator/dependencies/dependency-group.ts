// The referenced objects of one kind in one namespace, and the watches that feed them: per object, or one for the namespace.
import { takeWhile, type Subscription } from 'rxjs';
import type { Logger } from 'pino';
import type { WatcherEvent } from '../watch/events.js';
import { loggableError } from '../kube/errors.js';
import type { DependencyEvents, DependencyObject } from './dependency-watch.js';
import type { DependencyEntry, Observation } from './dependency-entry.js';
import { dependencyHashes } from './keyed-hash.js';
import type { DependencyKind } from './source.js';

/** How a group watches its objects. */
export type Granularity = 'object' | 'namespace';

/** One physical stream of a group. */
interface Source {
  readonly scope: Granularity;
  /** `watch` streams run until stopped; a `snapshot` is a watcher cut off after its first list. */
  readonly purpose: 'watch' | 'snapshot';
  /** The object's name, for an object scope. */
  readonly name?: string;
  /** True after the first `initDone`. */
  synced: boolean;
  /** Hashed observations of the list in progress (between `init` and `initDone`), by name. */
  listing: Map<string, Observation> | undefined;
  /**
   * For a namespace source: the names of the list in progress that no entry referenced when they arrived, left
   * unhashed. An entry added for one of them before `initDone` gets its first state from a list of its own.
   */
  unread?: Set<string>;
  /**
   * For a namespace snapshot: the names it serves at `initDone`, the ones it was started or asked to cover. A
   * snapshot serves no one else: an entry covered by another source already has a newer state, or will.
   */
  readonly covers?: Set<string>;
  subscription?: Subscription;
  stopped: boolean;
}

/** A physical stream as reported by {@link DependencyGroup.streams}. */
export interface StreamInfo {
  readonly kind: DependencyKind;
  readonly namespace: string;
  readonly scope: Granularity;
  /** Set for an object scope. */
  readonly name?: string;
  readonly synced: boolean;
}

/** What a group needs from its registry. */
export interface GroupContext {
  readonly events: DependencyEvents;
  /** Collapse into a namespace watch when the group has more entries than this. */
  readonly collapseThreshold: number;
  /** Split back into per-object watches when it has fewer than this. */
  readonly splitThreshold: number;
  readonly logger: Logger;
  /** The clock, for switch durations in logs. */
  readonly now: () => number;
}

/**
 * The entries of one (kind, namespace) and their sources. It keeps one invariant: every entry is covered by a
 * source that will deliver its state, and every change after that.
 *
 * - **Object granularity** (at most `collapseThreshold` entries): one watch per entry, `fieldSelector=metadata.name`.
 * - **Namespace granularity** (past the threshold): one watch of the whole namespace. Its list hashes the objects
 *   referenced as they arrive into a buffer that lives until `initDone`, and notes the others' names unhashed; an
 *   entry added while the list runs for a name it noted gets a one-shot list of its name at `initDone`. Watch events
 *   for unreferenced names are dropped unread. An entry added once the
 *   namespace watch runs gets its first state from a one-shot list of its name (a snapshot: one request, no
 *   socket), while the namespace watch already routes its later events to it. In a burst of new refs (as at a
 *   cold start), once `collapseThreshold` such snapshots are in flight, the next ref starts one one-shot list
 *   of the namespace instead, which covers every ref added until it completes, except one the namespace watch
 *   already knows newer than that list: a name it delivered an event for since, or any name once it has listed
 *   again since (a relist after a 410, a new namespace watch after a split); such a ref gets a list of its own.
 * - **Switching** (collapse past `collapseThreshold`, split below `splitThreshold`) starts the new sources first
 *   and retires the old ones only when the new ones are synced. Both feed the entries meanwhile, and each entry
 *   keeps the newest observation, so a switch loses no event and replays none. Subscribers stay on their
 *   entries: nothing they see changes.
 *
 * Trade-off of a namespace watch without a label selector: its list (paged) and every later change of every
 * object of the kind in the namespace cross the wire and are parsed, referenced or not. Unreferenced objects
 * are dropped on arrival without being hashed; while a list runs, the buffer keeps their names until `initDone`. With many unrelated objects (5,000 ConfigMaps
 * beside 11 referenced ones) that costs more bytes and parsing than 11 per-object watches; with many references
 * it saves one socket, one request pair and one server-side watcher per object. That is why it only kicks in
 * past a threshold of referenced objects, and why the threshold is an option.
 *
 * A source that fails for good (only with a finite retry policy; the default retries forever) is logged and
 * dropped; the refs it covered keep their last state.
 */
export class DependencyGroup {
  readonly entries = new Map<string, DependencyEntry>();
  private granularity: Granularity = 'object';
  private readonly objectWatches = new Map<string, Source>();
  private readonly snapshots = new Map<string, Source>();
  private namespaceWatch: Source | undefined;
  /** A one-shot list of the whole namespace, covering a burst of new refs at once. */
  private namespaceSnapshot: Source | undefined;
  /**
   * The names the namespace watch delivered an event for since the namespace snapshot in flight was started, to a
   * entry or to none (dropped). That snapshot's list may be older than those events, so it cannot give an entry added
   * for one of these names its first state: the event is not in it, and no entry that is new will see it again
   * (an entry released and added back meanwhile is new, too).
   */
  private readonly seenSinceSnapshot = new Set<string>();
  /**
   * True once the namespace watch has listed since the namespace snapshot in flight was started (a relist after a
   * 410, or the first list of a namespace watch started again after a split). A list reports a change as an object's
   * new state and a deletion as its absence, never as events, and only to the entries that exist when it ends: after
   * it, any name may have moved past that snapshot unseen, so the snapshot gives no new entry its first state.
   */
  private listedSinceSnapshot = false;
  private switching: { readonly step: 'collapse' | 'split'; readonly startedAt: number } | undefined;
  private readonly log: Logger;

  constructor(
    readonly kind: DependencyKind,
    readonly namespace: string,
    private readonly context: GroupContext,
  ) {
    this.log = context.logger.child({ kind, namespace });
  }

  /** The current target granularity. */
  get mode(): Granularity {
    return this.granularity;
  }

  /**
   * Adds an entry (its first subscriber arrived) and makes sure a source covers it. `deferred`: only registers it, and
   * {@link coverAll} covers the entries added so, once (a batch of refs then collapses at once, starting no per-object
   * watch for the first of them).
   */
  add(entry: DependencyEntry, deferred = false): void {
    this.entries.set(entry.ref.name, entry);
    if (deferred) return;
    this.rebalance();
    this.cover(entry.ref.name);
  }

  /** Moves to the granularity the entries call for, then covers every entry (after {@link add} with `deferred`). */
  coverAll(): void {
    this.rebalance();
    for (const name of this.entries.keys()) this.cover(name);
  }

  /** Removes an entry (its last subscriber left) and stops what only it needed. */
  remove(name: string): void {
    this.entries.delete(name);
    this.namespaceSnapshot?.covers?.delete(name);
    this.stop(this.objectWatches.get(name));
    this.stop(this.snapshots.get(name));
    this.rebalance();
  }

  /** Stops every source. */
  close(): void {
    for (const source of [...this.objectWatches.values(), ...this.snapshots.values()]) this.stop(source);
    this.stop(this.namespaceWatch);
    this.stop(this.namespaceSnapshot);
  }

  /** The physical watch streams open now (snapshots excluded: they never open a watch). */
  streams(): StreamInfo[] {
    const info = (source: Source): StreamInfo => ({
      kind: this.kind,
      namespace: this.namespace,
      scope: source.scope,
      name: source.name,
      synced: source.synced,
    });
    return [...this.objectWatches.values(), ...(this.namespaceWatch ? [this.namespaceWatch] : [])].map(info);
  }

  /** Moves the target granularity across the thresholds, then retires what became redundant. */
  private rebalance(): void {
    const count = this.entries.size;
    if (this.granularity === 'object' && count > this.context.collapseThreshold) this.switchTo('namespace', 'collapse');
    else if (this.granularity === 'namespace' && count < this.context.splitThreshold) this.switchTo('object', 'split');
    this.retire();
  }

  private switchTo(granularity: Granularity, step: 'collapse' | 'split'): void {
    this.granularity = granularity;
    this.switching = { step, startedAt: this.context.now() };
    this.log.info({ phase: 'started', refs: this.entries.size }, step);
    if (granularity === 'namespace') this.coverNamespace();
    else for (const name of this.entries.keys()) this.cover(name);
  }

  /** Makes sure some source will deliver `name`'s state. */
  private cover(name: string): void {
    if (!this.entries.has(name)) return;
    if (this.granularity === 'object') {
      if (!this.objectWatches.has(name)) this.start({ scope: 'object', purpose: 'watch', name });
      return;
    }
    const namespaceWatch = this.coverNamespace();
    if (!namespaceWatch.synced || namespaceWatch.listing !== undefined || this.snapshots.has(name) || this.objectWatches.has(name)) return;
    const snapshot = this.namespaceSnapshot;
    if (snapshot && !this.listedSinceSnapshot && !this.seenSinceSnapshot.has(name)) {
      snapshot.covers!.add(name);
      return;
    }
    if (this.snapshots.size < this.context.collapseThreshold || snapshot) this.start({ scope: 'object', purpose: 'snapshot', name });
    else this.start({ scope: 'namespace', purpose: 'snapshot', covers: new Set([name]) });
  }

  private coverNamespace(): Source {
    return this.namespaceWatch ?? this.start({ scope: 'namespace', purpose: 'watch' });
  }

  /**
   * Stops the sources a synced replacement made redundant: per-object watches once the namespace watch is synced
   * (each once its entry has a state), and the namespace watch once every entry's own watch is synced.
   */
  private retire(): void {
    const namespaceWatch = this.namespaceWatch;
    if (this.granularity === 'namespace' && namespaceWatch?.synced) {
      for (const source of [...this.objectWatches.values()]) {
        if (this.entries.get(source.name!)?.current !== undefined) this.stop(source);
      }
      if (this.objectWatches.size === 0) this.switched('collapse');
    }
    if (this.granularity === 'object' && [...this.entries.keys()].every((name) => this.objectWatches.get(name)?.synced)) {
      this.stop(namespaceWatch);
      this.switched('split');
    }
  }

  /** Logs the end of a switch, once. */
  private switched(step: 'collapse' | 'split'): void {
    if (this.switching?.step !== step) return;
    this.log.info({ phase: 'done', refs: this.entries.size, durationMs: this.context.now() - this.switching.startedAt }, step);
    this.switching = undefined;
  }

  /** Registers and subscribes a new source (registered first: a cold source may emit, even complete, at once). */
  private start(spec: Pick<Source, 'scope' | 'purpose' | 'name' | 'covers'>): Source {
    const source: Source = { ...spec, synced: false, listing: undefined, stopped: false };
    if (spec.scope === 'namespace' && spec.purpose === 'watch') this.namespaceWatch = source;
    else if (spec.scope === 'namespace') {
      this.namespaceSnapshot = source;
      this.forgetSeen();
    } else (spec.purpose === 'watch' ? this.objectWatches : this.snapshots).set(spec.name!, source);
    let events = this.context.events({ kind: this.kind, namespace: this.namespace, name: spec.name });
    if (spec.purpose === 'snapshot') events = events.pipe(takeWhile((event) => event.type !== 'initDone', true));
    const subscription = events.subscribe({
      next: (event) => this.observe(source, event),
      error: (error: unknown) => {
        this.log.error({ scope: spec.scope, name: spec.name, ...loggableError(error) }, 'stream failed');
        this.forget(source);
      },
      complete: () => this.forget(source),
    });
    if (source.stopped) subscription.unsubscribe();
    else source.subscription = subscription;
    return source;
  }

  private stop(source: Source | undefined): void {
    if (!source || source.stopped) return;
    source.stopped = true;
    source.subscription?.unsubscribe();
    this.forget(source);
  }

  /** Drops a source from the maps (it completed, failed or was stopped). */
  private forget(source: Source): void {
    source.stopped = true;
    if (source.scope === 'namespace') {
      if (this.namespaceWatch === source) this.namespaceWatch = undefined;
      if (this.namespaceSnapshot === source) {
        this.namespaceSnapshot = undefined;
        this.forgetSeen();
      }
    } else {
      const map = source.purpose === 'watch' ? this.objectWatches : this.snapshots;
      if (map.get(source.name!) === source) map.delete(source.name!);
    }
  }

  /** Resets what the namespace watch saw since a namespace snapshot started (one starts, or the one in flight ends). */
  private forgetSeen(): void {
    this.seenSinceSnapshot.clear();
    this.listedSinceSnapshot = false;
  }

  /** Hashes an object on arrival (a Secret's keyed with its uid); the payload goes no further. */
  private observed(object: DependencyObject): Observation {
    const resourceVersion = object.metadata.resourceVersion ?? '';
    try {
      return { exists: true, ...dependencyHashes(this.kind, object), resourceVersion };
    } catch (error) {
      this.log.error({ name: object.metadata.name, err: loggableError(error) }, 'unhashable');
      return { exists: true, hash: NO_UID_HASH, resourceVersion };
    }
  }

  /**
   * Takes one object of a list in progress. A namespace list hashes only the objects an entry references now: the
   * rest is most of a namespace in the usual case, and their hashes and per-key digests would be computed for nothing
   * and kept until `initDone`, garbage for the collector after. The others are noted by name, for {@link coverLate}.
   */
  private listed(source: Source, object: DependencyObject): void {
    const name = object.metadata.name!;
    if (source.name !== undefined && source.name !== name) return;
    if (source.name === undefined && !this.entries.has(name)) (source.unread ??= new Set()).add(name);
    else (source.listing ??= new Map()).set(name, this.observed(object));
  }

  /**
   * Covers an entry added while a namespace list ran, after that list read its object unhashed: a one-shot list of
   * its name gives its first state (as for an entry added once the namespace watch runs), while the namespace watch
   * already routes its later events to it; the entry keeps the newer of the two.
   */
  private coverLate(name: string): void {
    if (!this.entries.has(name) || this.objectWatches.has(name) || this.snapshots.has(name)) return;
    this.start({ scope: 'object', purpose: 'snapshot', name });
  }

  /** Routes one event of a source to the entries it covers. */
  private observe(source: Source, event: WatcherEvent<DependencyObject>): void {
    if (source.stopped) return;
    switch (event.type) {
      case 'init':
        if (source === this.namespaceWatch && this.namespaceSnapshot) this.listedSinceSnapshot = true;
        source.listing = new Map();
        source.unread = undefined;
        return;
      case 'initApply':
        this.listed(source, event.object);
        return;
      case 'initDone': {
        const listing = source.listing ?? new Map<string, Observation>();
        const unread = source.unread;
        source.listing = undefined;
        source.unread = undefined;
        const names = source.covers ? [...source.covers] : source.name === undefined ? [...this.entries.keys()] : [source.name];
        const late: string[] = [];
        for (const name of names) {
          if (unread?.has(name)) late.push(name);
          else this.entries.get(name)?.offer(listing.get(name) ?? { exists: false }, event.resourceVersion);
        }
        if (!source.synced) {
          source.synced = true;
          this.retire();
        }
        for (const name of late) this.coverLate(name);
        return;
      }
      case 'apply':
      case 'delete': {
        const { name, resourceVersion } = event.object.metadata;
        if (source === this.namespaceWatch && this.namespaceSnapshot) this.seenSinceSnapshot.add(name!);
        const entry = this.entries.get(name!);
        if (!entry) return;
        if (source.name !== undefined && source.name !== name) return;
        // The namespace watch logs its events at debug (most are of objects nobody references): the ones an entry
        // takes are the trace's first line, at info.
        if (source.scope === 'namespace') {
          this.log.info(
            {
              stream: `${this.kind.toLowerCase()} ${this.namespace}/*`,
              type: event.type,
              key: `${this.namespace}/${name}`,
              resourceVersion,
            },
            'event',
          );
        }
        entry.offer(event.type === 'apply' ? this.observed(event.object) : { exists: false }, resourceVersion ?? '');
        return;
      }
    }
  }
}

/** What a Secret without a uid (which no API server sends) hashes to: a constant, logged, so nothing leaks or crashes. */
export const NO_UID_HASH = 'no-uid';
