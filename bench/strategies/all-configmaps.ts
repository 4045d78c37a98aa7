// The static strategies' cache: one list-and-watch of every ConfigMap in the cluster, whole objects kept.
import { map, tap, type Observable } from 'rxjs';
import { Store, type StoreChange } from '../../operator/cache/store.js';
import { stripManagedFields, transformEvent } from '../../operator/cache/transform.js';
import type { DependencyObject } from '../../operator/dependencies/dependency-watch.js';
import type { DependencyRef } from '../../operator/dependencies/source.js';
import { CONFIGMAPS } from '../../operator/kube/resources.js';
import { reflect } from '../../operator/cache/reflector.js';
import { watcher } from '../../operator/watch/watcher.js';
import type { WatchClient, WatcherDeps } from '../../operator/watch/config.js';

/** A change of the cache, and whether it comes from the first list (the initial sync) rather than a later event. */
export interface CacheChange {
  readonly change: StoreChange<DependencyObject>;
  readonly initial: boolean;
}

/**
 * Every ConfigMap of the cluster in a {@link Store}, kept current by the operator's own {@link watcher} (the same
 * list, watch, bookmarks, timeouts and recovery as ours), as kubebuilder's `Watches(&corev1.ConfigMap{}, …)` keeps
 * them in controller-runtime's cache (without managedFields, as the operator's caches keep objects). Subscribe to {@link changes} to start it.
 */
export class AllConfigMaps {
  readonly store = new Store<DependencyObject>();
  /** The store's changes; `initial` marks those of the first list, which every object produces once. */
  readonly changes: Observable<CacheChange>;

  constructor(client: WatchClient, deps: WatcherDeps = {}) {
    let fromFirstList = false;
    let listsDone = 0;
    this.changes = watcher<DependencyObject>(client, CONFIGMAPS, { name: 'configmap *' }, deps).pipe(
      tap((event) => {
        fromFirstList = event.type === 'initDone' && listsDone === 0;
        if (event.type === 'initDone') listsDone += 1;
      }),
      // The same transform as the operator's own caches, so that the strategies differ only in what they cache.
      map((event) => transformEvent(event, stripManagedFields)),
      reflect(this.store),
      map((change) => ({ change, initial: fromFirstList })),
    );
  }

  /** The cached object of a ref, or undefined when it does not exist. Meaningful once the store is synced. */
  get(ref: DependencyRef): DependencyObject | undefined {
    return this.store.get(`${ref.namespace}/${ref.name}`);
  }
}

/** The ConfigMap ref of a cache key (`namespace/name`). */
export function configMapRef(key: string): DependencyRef {
  const slash = key.indexOf('/');
  return { kind: 'ConfigMap', namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
