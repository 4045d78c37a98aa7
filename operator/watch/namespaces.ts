// Watches a resource in a set of namespaces as one stream: one watcher per namespace, merged, their lists combined.
import { defer, map, merge, mergeMap, type Observable } from 'rxjs';
import type { KubeObject } from '../kube/objects.js';
import type { WatcherEvent } from './events.js';

/**
 * The events of `watch(namespace)` for each of `namespaces`, as one stream that a single cache can reflect, so that
 * an operator told to watch some namespaces never lists or watches at cluster scope (RBAC then needs a Role in each
 * of them, and nothing cluster-wide). `undefined` watches every namespace with one watcher (`watch(undefined)`), and
 * one namespace is that namespace's watcher as it is; each watcher keeps its own name in logs (`customapp team-a`).
 *
 * With several namespaces:
 * - **The first list is one list.** Nothing is emitted until every namespace has listed; then one `init`, an
 *   `initApply` per object of every namespace, and one `initDone` (with the resourceVersion of the namespace that
 *   listed last: a combined list has no resourceVersion of its own, and nothing resumes from it). Changes a
 *   namespace sees after its own list and before the others' are folded into it, so the store syncs once, whole.
 * - **Later, each namespace on its own.** `apply` and `delete` pass as they come. A relist of one namespace (after
 *   a 410) is emitted at once when it ends, as `init`, its `initApply`s and an `initDone` naming the namespace, which
 *   the reflector applies to that namespace's objects alone: a relist of one never drops another's objects, and two
 *   namespaces relisting at the same time never mix their lists.
 *
 * A namespace's watcher that errors errors the whole stream (with the default policy a watcher never errors).
 * Unsubscribing unsubscribes every watcher.
 */
export function acrossNamespaces<T extends KubeObject>(
  namespaces: readonly string[] | undefined,
  watch: (namespace: string | undefined) => Observable<WatcherEvent<T>>,
): Observable<WatcherEvent<T>> {
  if (namespaces === undefined) return watch(undefined);
  if (namespaces.length === 0) throw new Error('acrossNamespaces: no namespace to watch (undefined watches every namespace)');
  if (namespaces.length === 1) return watch(namespaces[0]);
  return defer(() => {
    /** Each namespace's list in progress, from its `init` to its `initDone`. */
    const listing = new Map<string, T[]>();
    /** Until every namespace has listed: the objects of those that have, by name, kept current by their changes since. */
    let firstLists: Map<string, Map<string, T>> | undefined = new Map();
    const step = (namespace: string, event: WatcherEvent<T>): WatcherEvent<T>[] => {
      switch (event.type) {
        case 'init':
          listing.set(namespace, []);
          return [];
        case 'initApply': {
          const list = listing.get(namespace);
          if (list) list.push(event.object);
          else listing.set(namespace, [event.object]);
          return [];
        }
        case 'initDone': {
          const objects = listing.get(namespace) ?? [];
          listing.delete(namespace);
          if (!firstLists) return listed(objects, { type: 'initDone', resourceVersion: event.resourceVersion, namespace });
          firstLists.set(namespace, new Map(objects.map((object) => [object.metadata.name ?? '', object])));
          if (firstLists.size < namespaces.length) return [];
          const all = [...firstLists.values()].flatMap((objects) => [...objects.values()]);
          firstLists = undefined;
          return listed(all, { type: 'initDone', resourceVersion: event.resourceVersion });
        }
        case 'apply':
        case 'delete': {
          if (!firstLists) return [event];
          // A watcher sends changes only after its list: this namespace's first list is in `firstLists`.
          const first = firstLists.get(namespace);
          if (event.type === 'apply') first?.set(event.object.metadata.name ?? '', event.object);
          else first?.delete(event.object.metadata.name ?? '');
          return [];
        }
      }
    };
    return merge(...namespaces.map((namespace) => watch(namespace).pipe(map((event) => [namespace, event] as const)))).pipe(
      mergeMap(([namespace, event]) => step(namespace, event)),
    );
  });
}

/** A whole list as a watcher emits it: `init`, one `initApply` per object, then `done`. */
function listed<T extends KubeObject>(objects: readonly T[], done: Extract<WatcherEvent<T>, { type: 'initDone' }>): WatcherEvent<T>[] {
  return [{ type: 'init' }, ...objects.map((object): WatcherEvent<T> => ({ type: 'initApply', object })), done];
}
