// A store read through the objects this process just wrote, until the watch catches up (client-go's MutationCache).
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import type { Store, StoreChange } from './store.js';
import { objectKey } from './store.js';
import { compareResourceVersions } from '../kube/resource-version.js';
import type { KubeObject } from '../kube/objects.js';
import { stripManagedFields, type CacheTransform } from './transform.js';

/** What the reconcile reads: a cache, never the API server. */
export interface CacheReader<T extends KubeObject> {
  get(key: string): T | undefined;
}

/** A cache the reconcile reads, which also learns from the reconcile's own writes. */
export interface WritableCache<T extends KubeObject> extends CacheReader<T> {
  /** Learns the API's answer to a write of this process (`created` for a create): its watch event is an echo. */
  wrote(object: T, created?: boolean): void;
  /**
   * Learns an object read outside the watch (a GET, a LIST), served as {@link wrote} serves it (`created`: one the
   * store may not have yet); its watch event is no echo, because no reconcile of this process made that version.
   */
  learned(object: T, created?: boolean): void;
  forget(key: string): void;
}

/** Tells the watch's delivery of an object version this process wrote itself. */
export interface EchoFilter<T> {
  /**
   * True, once, for a store change that applies exactly a version this process wrote (the same resourceVersion as its
   * write's answer): the reconcile that wrote it knew that state, so it needs no reconcile of its own.
   */
  isEcho(change: StoreChange<T>): boolean;
}

/** Written versions awaited per key at most: a reconcile writes a key once or twice (the finalizer, the status). */
const MAX_AWAITED_ECHOES = 4;

/** Options of {@link FreshCache}. */
export interface FreshCacheOptions<T extends KubeObject = KubeObject> {
  /** How long a written object may shadow the store at most. @default 60_000 */
  readonly ttlMs?: number;
  /** How long an object this process created is served while the store has not seen it yet. @default 10_000 */
  readonly createdTtlMs?: number;
  /**
   * How often entries that the store has caught up with, or that expired, are dropped when no read drops them
   * (a key written once and not read again). @default 5_000
   */
  readonly sweepMs?: number;
  /** What is kept of a written object, as the informer keeps what it caches. @default {@link stripManagedFields} */
  readonly transform?: CacheTransform<T>;
  /** The clock and the sweep's timer. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/**
 * Reads `store`, except that an object this process wrote (the API's answer to the write) is returned instead of
 * the store's copy while that copy is older, so the next reconcile of a key sees its own finalizer, status and
 * Deployment update even if the watch event has not arrived yet. Without it, a reconcile right after a write would
 * act on a stale resourceVersion and get a 409 (harmless, but a wasted round trip).
 *
 * The store stays the authority on existence, with one exception: an object this process created is served for a
 * short while (`createdTtlMs`) before the store has it, so that the next reconcile does not create it again and
 * get a 409 AlreadyExists. The watch delivers the creation before any later deletion, so a deletion is never
 * hidden for long. An object with another uid (deleted and recreated) is taken from the store. Entries go away as
 * soon as the store has the same or a newer version, or after the TTL.
 */
export class FreshCache<T extends KubeObject> implements WritableCache<T>, EchoFilter<T> {
  private readonly written = new Map<string, { object: T; at: number; created: boolean }>();
  /**
   * Per key, the resourceVersions of this process's writes whose watch event has not arrived yet (oldest first, a
   * few at most: a reconcile writes a key once or twice), and when the last was written.
   */
  private readonly awaitedEchoes = new Map<string, { versions: string[]; at: number }>();
  private readonly ttlMs: number;
  private readonly createdTtlMs: number;
  private readonly sweepMs: number;
  private readonly transform: CacheTransform<T>;
  private readonly scheduler: SchedulerLike;
  private sweepTimer: Subscription | undefined;
  private closed = false;

  constructor(
    private readonly store: Store<T>,
    options: FreshCacheOptions<T> = {},
  ) {
    this.ttlMs = options.ttlMs ?? 60_000;
    this.createdTtlMs = options.createdTtlMs ?? 10_000;
    this.sweepMs = options.sweepMs ?? 5_000;
    this.transform = options.transform ?? stripManagedFields;
    this.scheduler = options.scheduler ?? asyncScheduler;
  }

  /** The written objects that still shadow the store. */
  get size(): number {
    return this.written.size;
  }

  /** The keys whose written versions' watch events have not all arrived. */
  get awaitingEchoes(): number {
    return this.awaitedEchoes.size;
  }

  get(key: string): T | undefined {
    const cached = this.store.get(key);
    const entry = this.written.get(key);
    if (!entry) return cached;
    if (!cached && entry.created && this.now() - entry.at <= this.createdTtlMs) return entry.object;
    if (!cached || cached.metadata.uid !== entry.object.metadata.uid || this.now() - entry.at > this.ttlMs) {
      this.written.delete(key);
      return cached;
    }
    const order = compareResourceVersions(entry.object.metadata.resourceVersion ?? '', cached.metadata.resourceVersion ?? '');
    if (order === undefined || order <= 0) {
      this.written.delete(key);
      return cached;
    }
    return entry.object;
  }

  /** Records the API's answer to a write; `created` when the write was a create. Its watch event will be an echo. */
  wrote(object: T, created = false): void {
    if (this.closed) return;
    this.learned(object, created);
    this.awaitEcho(objectKey(object), object.metadata.resourceVersion);
  }

  learned(object: T, created = false): void {
    if (this.closed) return;
    this.written.set(objectKey(object), { object: this.transform(object), at: this.now(), created });
    this.scheduleSweep();
  }

  isEcho(change: StoreChange<T>): boolean {
    if (change.type !== 'apply') return false;
    const awaited = this.awaitedEchoes.get(change.key);
    const index = awaited?.versions.indexOf(change.object.metadata.resourceVersion ?? '') ?? -1;
    if (index < 0) return false;
    // A watch delivers a key's versions in order: the ones written before this one came already, or never will.
    awaited!.versions.splice(0, index + 1);
    if (awaited!.versions.length === 0) this.awaitedEchoes.delete(change.key);
    return true;
  }

  /**
   * Awaits the watch event of version `resourceVersion` of `key`, unless the store has it (or a newer one) already:
   * the watch can deliver a write's event before the client has read the write's answer.
   */
  private awaitEcho(key: string, resourceVersion: string | undefined): void {
    if (!resourceVersion) return;
    const stored = this.store.get(key)?.metadata.resourceVersion;
    const order = stored === undefined ? undefined : compareResourceVersions(resourceVersion, stored);
    if (order !== undefined && order <= 0) return;
    const awaited = this.awaitedEchoes.get(key);
    if (!awaited) {
      this.awaitedEchoes.set(key, { versions: [resourceVersion], at: this.now() });
    } else {
      awaited.versions.push(resourceVersion);
      if (awaited.versions.length > MAX_AWAITED_ECHOES) awaited.versions.shift();
      awaited.at = this.now();
    }
    this.scheduleSweep();
  }

  /** Forgets a written object (after deleting it). */
  forget(key: string): void {
    this.written.delete(key);
    this.awaitedEchoes.delete(key);
  }

  /**
   * Learns a change the store just made: a deletion of the written object (same uid) ends its shadow at once,
   * even within `createdTtlMs`, and an apply drops the entry when the store caught up with it. Without this, an
   * object created and deleted before any read could still be served as existing, and nothing would recreate it.
   */
  observe(change: StoreChange<T>): void {
    const entry = this.written.get(change.key);
    if (!entry) return;
    if (change.type === 'delete') {
      if (entry.object.metadata.uid === change.object.metadata.uid) this.written.delete(change.key);
      return;
    }
    this.get(change.key);
  }

  /**
   * Drops every entry that the store has caught up with or that expired (what a read of its key would drop), and the
   * awaited echoes of keys last written a TTL ago (a relist that skipped the version, a write whose event the watch
   * delivered before its answer was read).
   */
  sweep(): void {
    for (const key of [...this.written.keys()]) this.get(key);
    const now = this.now();
    for (const [key, awaited] of this.awaitedEchoes) if (now - awaited.at > this.ttlMs) this.awaitedEchoes.delete(key);
  }

  /** Cancels the sweep and forgets every written object; later writes are not kept. */
  close(): void {
    this.closed = true;
    this.sweepTimer?.unsubscribe();
    this.sweepTimer = undefined;
    this.written.clear();
    this.awaitedEchoes.clear();
  }

  private now(): number {
    return this.scheduler.now();
  }

  /**
   * Sweeps every `sweepMs` while entries remain: the chain ends once the map is empty, at most a TTL after the last
   * write, and at {@link close}.
   */
  private scheduleSweep(): void {
    if (this.sweepTimer !== undefined || this.closed) return;
    this.sweepTimer = this.scheduler.schedule(() => {
      this.sweepTimer = undefined;
      this.sweep();
      if (this.written.size > 0 || this.awaitedEchoes.size > 0) this.scheduleSweep();
    }, this.sweepMs);
  }
}
