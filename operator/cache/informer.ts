// A watched, indexed cache of one resource: watcher + reflector + Store, shared by every subscriber.
import { BehaviorSubject, filter, map, type Observable, share, switchMap } from 'rxjs';
import type { KubeObject } from '../kube/objects.js';
import type { Resource } from '../kube/resources.js';
import { reflect } from './reflector.js';
import { watcher } from '../watch/watcher.js';
import type { WatchClient, WatcherConfig, WatcherDeps } from '../watch/config.js';
import { Store, type Indexers, type StoreChange } from './store.js';
import { stripManagedFields, transformEvent, type CacheTransform } from './transform.js';

/** A resource's cache and the stream that keeps it current. */
export interface Informer<T extends KubeObject> {
  /** The cache: read it from the reconcile (never the API server). */
  readonly store: Store<T>;
  /**
   * The store's changes, each emitted after the store was updated. Subscribing starts the watch (one list and
   * watch, shared by every subscriber); when the last subscriber leaves, the watch stops and the store keeps its
   * last content. After the first list it emits an `apply` for every object, so a controller that maps these to
   * keys reconciles everything once at start, as controller-runtime does.
   */
  readonly events$: Observable<StoreChange<T>>;
  /** False until the first list is in the store, then true (see {@link Store.synced$}). */
  readonly synced$: Observable<boolean>;
  /** With a {@link CacheScope}: the version of the scope whose list the store holds (-1 before the first). */
  readonly listedScope$?: Observable<number>;
}

/**
 * Which objects the store keeps, when it keeps only some (a shard's share): a filter before the store, and a version
 * that moves whenever the filter may answer differently. Each new version lists again (one LIST), so that the store
 * drops what left the scope (a `delete` change each) and gains what entered it (an `apply` each).
 */
export interface CacheScope<T extends KubeObject> {
  readonly keeps: (object: T) => boolean;
  readonly versions$: Observable<number>;
}

/** Options of {@link informer}. */
export interface InformerOptions<T extends KubeObject> {
  /** What the store keeps of each object. @default {@link stripManagedFields} */
  readonly transform?: CacheTransform<T>;
  /** Keep only the objects of this scope. @default every object the watch sees */
  readonly scope?: CacheScope<T>;
}

/**
 * Builds an informer for `resource`. For example, the CustomApps with their reference indexes:
 * ```ts
 * const apps = informer<CustomApp>(client, CUSTOM_APPS, { namespace, name: 'customapp' }, {
 *   byConfigMap: (app) => app.spec.configMapName ? [`${app.metadata.namespace}/${app.spec.configMapName}`] : [],
 * }, { logger });
 * apps.events$.pipe(map((change) => change.key)) // → the work queue
 * ```
 */
export function informer<T extends KubeObject>(
  client: WatchClient,
  resource: Resource,
  config: WatcherConfig = {},
  indexers: Indexers<T> = {},
  deps: WatcherDeps = {},
  options: InformerOptions<T> = {},
): Informer<T> {
  const store = new Store<T>(indexers);
  const transform = options.transform ?? stripManagedFields;
  const { scope } = options;
  if (!scope) {
    const events$ = watcher<T>(client, resource, config, deps).pipe(
      map((event) => transformEvent(event, transform)),
      reflect(store),
      share(),
    );
    return { store, events$, synced$: store.synced$ };
  }
  const listed = new BehaviorSubject(-1);
  const events$ = scope.versions$.pipe(
    switchMap((version) =>
      watcher<T>(client, resource, config, deps).pipe(
        // A delete passes: the store ignores an object it does not hold.
        filter((event) => !(event.type === 'initApply' || event.type === 'apply') || scope.keeps(event.object)),
        map((event) => transformEvent(event, transform)),
        reflect(store, () => listed.next(version)),
      ),
    ),
    share(),
  );
  return { store, events$, synced$: store.synced$, listedScope$: listed };
}
