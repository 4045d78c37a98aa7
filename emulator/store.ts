// The object store: collections of objects under one global resourceVersion, with a bounded event history per collection.
import type { KubeObject } from './object.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** A committed change. `object` is the new state (for DELETED: the last state, at the deletion's resourceVersion). */
export interface StoreEvent {
  readonly type: EventType;
  readonly rv: number;
  readonly key: string;
  readonly object: KubeObject;
  /** The state before the change (MODIFIED, DELETED). */
  readonly previous?: KubeObject;
}

export type StoreListener = (event: StoreEvent) => void;

export interface StoredObject {
  readonly object: KubeObject;
  readonly rv: number;
}

/** Why a watch or a list at a past resourceVersion cannot be served. */
export class HistoryExpired extends Error {
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
  }
}

/** One resource's objects, keyed "namespace/name", and its recent events for watch resumption. */
export class Collection {
  readonly objects = new Map<string, StoredObject>();
  /** Watchers of every namespace (and of cluster-scoped resources). */
  private readonly everywhere = new Set<StoreListener>();
  /** Watchers of one namespace, so a write reaches only the watchers that can see it. */
  private readonly byNamespace = new Map<string, Set<StoreListener>>();
  private events: StoreEvent[] = [];
  private head = 0;
  private sorted: string[] | undefined;
  /** Every event with rv <= compactedThrough is gone from the history. */
  compactedThrough = 0;

  constructor(
    readonly name: string,
    private capacity: number,
    private readonly onRecord: (collection: Collection, event: StoreEvent) => void,
  ) {}

  get historySize(): number {
    return this.events.length - this.head;
  }

  /** The keys in etcd order (namespace, then name), cached until an object is added or removed. */
  sortedKeys(): readonly string[] {
    this.sorted ??= [...this.objects.keys()].sort(compareKeys);
    return this.sorted;
  }

  /** Subscribes to the events of one namespace ("" = all namespaces); returns the unsubscribe function. */
  subscribe(namespace: string, listener: StoreListener): () => void {
    let set = this.everywhere;
    if (namespace !== '') {
      set = this.byNamespace.get(namespace) ?? new Set();
      this.byNamespace.set(namespace, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (namespace !== '' && set.size === 0) this.byNamespace.delete(namespace);
    };
  }

  record(event: StoreEvent): void {
    if (event.type !== 'MODIFIED') this.sorted = undefined;
    this.events.push(event);
    this.trimTo(this.capacity);
    const namespace = event.object.metadata.namespace;
    if (namespace !== undefined) {
      const watchers = this.byNamespace.get(namespace);
      if (watchers !== undefined) for (const listener of watchers) listener(event);
    }
    for (const listener of this.everywhere) listener(event);
    this.onRecord(this, event);
  }

  setCapacity(capacity: number): void {
    this.capacity = Math.max(0, capacity);
    this.trimTo(this.capacity);
  }

  /** Forgets every event up to and including `rv`. */
  compact(rv: number): void {
    while (this.head < this.events.length && this.events[this.head].rv <= rv) this.head++;
    this.compactedThrough = Math.max(this.compactedThrough, rv);
    this.reclaim();
  }

  private trimTo(capacity: number): void {
    while (this.events.length - this.head > capacity) {
      this.compactedThrough = Math.max(this.compactedThrough, this.events[this.head].rv);
      this.head++;
    }
    this.reclaim();
  }

  private reclaim(): void {
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }

  /** The events strictly after `rv`, or HistoryExpired when some of them were forgotten. */
  eventsAfter(rv: number): StoreEvent[] {
    if (rv < this.compactedThrough) throw new HistoryExpired(rv, this.compactedThrough);
    const out: StoreEvent[] = [];
    let i = this.events.length - 1;
    while (i >= this.head && this.events[i].rv > rv) i--;
    for (let j = i + 1; j < this.events.length; j++) out.push(this.events[j]);
    return out;
  }

  /** The objects as they were at `rv` (undoing later events), or HistoryExpired. */
  snapshotAt(rv: number): Map<string, KubeObject> {
    const later = this.eventsAfter(rv);
    const state = new Map<string, KubeObject>();
    for (const [key, stored] of this.objects) state.set(key, stored.object);
    for (let i = later.length - 1; i >= 0; i--) {
      const event = later[i];
      if (event.type === 'ADDED') state.delete(event.key);
      else state.set(event.key, event.previous!);
    }
    return state;
  }
}

export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** All collections, and the global resourceVersion counter (like etcd's revision). */
export class Store {
  private readonly collections = new Map<string, Collection>();
  private revision: number;
  /** Listeners of every collection (controllers), called after the collection's own listeners (watches). */
  readonly listeners = new Set<(collection: Collection, event: StoreEvent) => void>();

  constructor(
    private historyWindow: number,
    startRevision = 1,
  ) {
    this.revision = startRevision;
  }

  get currentRv(): number {
    return this.revision;
  }

  get window(): number {
    return this.historyWindow;
  }

  collection(name: string): Collection {
    let c = this.collections.get(name);
    if (c === undefined) {
      c = new Collection(name, this.historyWindow, (collection, event) => {
        for (const listener of this.listeners) listener(collection, event);
      });
      this.collections.set(name, c);
    }
    return c;
  }

  allCollections(): Collection[] {
    return [...this.collections.values()];
  }

  /** Advances the global resourceVersion without writing (what other writers in a real cluster do). */
  nextRv(): number {
    return ++this.revision;
  }

  /** Stores a new object; `object` must not be mutated afterwards. Returns its resourceVersion. */
  add(collection: Collection, key: string, object: KubeObject): StoredObject {
    const rv = this.nextRv();
    object.metadata.resourceVersion = String(rv);
    const stored = { object, rv };
    collection.objects.set(key, stored);
    collection.record({ type: 'ADDED', rv, key, object });
    return stored;
  }

  replace(collection: Collection, key: string, object: KubeObject): StoredObject {
    const previous = collection.objects.get(key);
    if (previous === undefined) throw new Error(`replace of missing ${collection.name} ${key}`);
    const rv = this.nextRv();
    object.metadata.resourceVersion = String(rv);
    const stored = { object, rv };
    collection.objects.set(key, stored);
    collection.record({ type: 'MODIFIED', rv, key, object, previous: previous.object });
    return stored;
  }

  /** Removes an object; the DELETED event carries its last state at the deletion's resourceVersion. */
  remove(collection: Collection, key: string): StoredObject {
    const previous = collection.objects.get(key);
    if (previous === undefined) throw new Error(`remove of missing ${collection.name} ${key}`);
    const rv = this.nextRv();
    const object = { ...previous.object, metadata: { ...previous.object.metadata, resourceVersion: String(rv) } };
    collection.objects.delete(key);
    collection.record({ type: 'DELETED', rv, key, object, previous: previous.object });
    return { object, rv };
  }

  setHistoryWindow(window: number): void {
    this.historyWindow = window;
    for (const c of this.collections.values()) c.setCapacity(window);
  }

  /** Forgets history up to `rv` (default: now) in every collection, so older resourceVersions get 410. */
  compact(rv = this.revision): void {
    for (const c of this.collections.values()) c.compact(rv);
  }
}
