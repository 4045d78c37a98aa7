// An in-memory cache of objects by `namespace/name`, with named secondary indexes and a synced flag.
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';
import type { KubeObject } from '../kube/objects.js';

/** `namespace/name` (or `/name` for a cluster-scoped object): the key of an object in a store and in the work queue. */
export function objectKey(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

/** The namespace and name of an {@link objectKey}. */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  if (slash < 0) throw new Error(`work-queue key "${key}" is not namespace/name`);
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * Named index functions: each maps an object to the values it is found under, for example
 * `{ byConfigMap: (app) => app.spec.configMapName ? [`${app.metadata.namespace}/${app.spec.configMapName}`] : [] }`.
 */
export type Indexers<T> = Readonly<Record<string, (object: T) => readonly string[]>>;

/** What changed in a store: an object added or modified (`apply`), or removed (`delete`), with its key. */
export type StoreChange<T> =
  | { readonly type: 'apply'; readonly key: string; readonly object: T }
  | { readonly type: 'delete'; readonly key: string; readonly object: T };

/**
 * The cache a reflector fills and the reconcile reads (kube-runtime's `reflector::Store`, client-go's `Indexer`).
 * Reads are synchronous and never touch the API server. Only the reflector should write (`apply`, `delete`,
 * `replace`); objects are stored as received, so treat them as read-only.
 *
 * An index answers keys, not objects: `byIndex('byConfigMap', 'default/app-config')` → `['default/app-1', …]`.
 * Indexes follow every write, including the atomic `replace` of a relist.
 */
export class Store<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  /**
   * index name → value → keys: the one key itself while a value has one (most do: a workload's own ConfigMap), a Set
   * from two on. A Set of one key costs about 200 bytes more than the key, per value: 2 MB at 10k workloads.
   */
  private readonly indexes = new Map<string, Map<string, string | Set<string>>>();
  private readonly syncedSubject = new BehaviorSubject(false);

  /**
   * True once the first list has been applied, and from then on (a relist does not unsync it: the store keeps
   * serving its last state until the new list replaces it). Emits the current value to each subscriber.
   */
  readonly synced$: Observable<boolean> = this.syncedSubject.pipe(distinctUntilChanged());

  constructor(private readonly indexers: Indexers<T> = {}) {
    for (const name of Object.keys(indexers)) this.indexes.set(name, new Map());
  }

  get synced(): boolean {
    return this.syncedSubject.value;
  }

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  /** The keys of the objects that `indexName` maps to `value` (empty for an unknown value). */
  byIndex(indexName: string, value: string): string[] {
    const index = this.indexes.get(indexName);
    if (!index) throw new Error(`store has no index "${indexName}" (it has: ${[...this.indexes.keys()].join(', ') || 'none'})`);
    const keys = index.get(value);
    return keys === undefined ? [] : typeof keys === 'string' ? [keys] : [...keys];
  }

  /** Adds or replaces one object; answers whether the store changed (false when the same resourceVersion is already there). */
  apply(object: T): boolean {
    const key = objectKey(object);
    const previous = this.objects.get(key);
    if (previous && sameVersion(previous, object)) return false;
    if (previous) this.unindex(key, previous);
    this.objects.set(key, object);
    this.index(key, object);
    return true;
  }

  /** Removes an object by its key; answers the object that was there, if any. */
  delete(object: T): T | undefined {
    const key = objectKey(object);
    const previous = this.objects.get(key);
    if (!previous) return undefined;
    this.unindex(key, previous);
    this.objects.delete(key);
    return previous;
  }

  /**
   * Replaces the whole content at once (the end of a list), marks the store synced, and answers what changed:
   * an `apply` per new or re-versioned object and a `delete` per object that is gone. With `namespace`, the list
   * covered that namespace alone (a relist of one namespace of several): only its objects can be gone, the others
   * stay, and the synced flag is left as it is (the store syncs with the first list of every namespace).
   */
  replace(objects: Iterable<T>, namespace?: string): StoreChange<T>[] {
    const changes: StoreChange<T>[] = [];
    const incoming = new Map<string, T>();
    for (const object of objects) incoming.set(objectKey(object), object);
    for (const [key, previous] of [...this.objects]) {
      if (incoming.has(key)) continue;
      if (namespace !== undefined && previous.metadata.namespace !== namespace) continue;
      this.delete(previous);
      changes.push({ type: 'delete', key, object: previous });
    }
    for (const [key, object] of incoming) if (this.apply(object)) changes.push({ type: 'apply', key, object });
    if (namespace === undefined) this.syncedSubject.next(true);
    return changes;
  }

  private index(key: string, object: T): void {
    for (const [name, indexer] of Object.entries(this.indexers)) {
      const index = this.indexes.get(name)!;
      for (const value of indexer(object)) {
        const keys = index.get(value);
        if (keys === undefined) index.set(value, key);
        else if (typeof keys !== 'string') keys.add(key);
        else if (keys !== key) index.set(value, new Set([keys, key]));
      }
    }
  }

  private unindex(key: string, object: T): void {
    for (const [name, indexer] of Object.entries(this.indexers)) {
      const index = this.indexes.get(name)!;
      for (const value of indexer(object)) {
        const keys = index.get(value);
        if (keys === undefined) continue;
        if (typeof keys === 'string') {
          if (keys === key) index.delete(value);
          continue;
        }
        keys.delete(key);
        if (keys.size <= 1) {
          const [left] = keys;
          if (left === undefined) index.delete(value);
          else index.set(value, left);
        }
      }
    }
  }
}

function sameVersion(a: KubeObject, b: KubeObject): boolean {
  return (
    a.metadata.resourceVersion !== undefined &&
    a.metadata.resourceVersion === b.metadata.resourceVersion &&
    a.metadata.uid === b.metadata.uid
  );
}
