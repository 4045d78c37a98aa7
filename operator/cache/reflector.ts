// Applies a watcher's events to a Store and emits what changed in it, after it changed.
import { defer, mergeMap, type OperatorFunction } from 'rxjs';
import type { KubeObject } from '../kube/objects.js';
import { objectKey, type Store, type StoreChange } from './store.js';
import type { WatcherEvent } from '../watch/events.js';

/**
 * The reflector: writes every {@link WatcherEvent} into `store` and emits the resulting {@link StoreChange}s, so
 * that whoever reacts to a change finds the store already up to date.
 *
 * - `init` starts a buffer and `initApply` fills it: the store keeps serving its previous content meanwhile.
 * - `initDone` replaces the store with the buffer in one step (marking it synced) and emits one change per object
 *   that is new, has a new resourceVersion, or is gone. After the first list that is every object; after a relist
 *   it is only what moved while the watch was down.
 * - `apply` emits unless the store already holds that exact resourceVersion (a duplicate after a resume);
 *   `delete` emits unless the object was already absent.
 *
 * `onListed` is called each time a list is in the store, before its changes are emitted.
 * Errors and completion pass through; the store keeps its content (a later subscription relists and replaces it).
 * The buffer lives in the subscription, so resubscribing starts clean.
 */
export function reflect<T extends KubeObject>(store: Store<T>, onListed?: () => void): OperatorFunction<WatcherEvent<T>, StoreChange<T>> {
  return (source) =>
    defer(() => {
      let buffer: T[] | undefined;
      return source.pipe(
        mergeMap((event): StoreChange<T>[] => {
          switch (event.type) {
            case 'init':
              buffer = [];
              return [];
            case 'initApply':
              (buffer ??= []).push(event.object);
              return [];
            case 'initDone': {
              const changes = store.replace(buffer ?? []);
              buffer = undefined;
              onListed?.();
              return changes;
            }
            case 'apply':
              return store.apply(event.object) ? [{ type: 'apply', key: objectKey(event.object), object: event.object }] : [];
            case 'delete': {
              const removed = store.delete(event.object);
              return removed ? [{ type: 'delete', key: objectKey(event.object), object: event.object }] : [];
            }
          }
        }),
      );
    });
}
