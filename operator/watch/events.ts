// The events a watcher emits: a closed union, each variant with its caveat (after kube-runtime's `watcher::Event`).
import type { KubeObject } from '../kube/objects.js';

/**
 * What a {@link watcher} tells its subscriber. A (re)list arrives as `init`, zero or more `initApply`, then
 * `initDone`; between lists, changes arrive one by one as `apply` and `delete`.
 *
 * - `init`: a list begins (the first one, or a relist after a 410 or an expired continue token). Start a fresh
 *   buffer and discard any `initApply` buffered since an earlier `init` that never reached `initDone`.
 * - `initApply`: one object of the list in progress. Caveat: it is not the current state on its own; buffer it
 *   and do not act on it (a relist delivers every object again, most of them unchanged).
 * - `initDone`: the list is complete as of `resourceVersion`. Replace the store atomically with what the
 *   `initApply` events delivered: an object that is not in it was deleted while the watch was down, and no
 *   `delete` event will ever say so. With `namespace`, the list covered that namespace alone (one namespace of a
 *   stream that watches several, relisted on its own: `acrossNamespaces` in watch/namespaces.ts): replace only that namespace's objects.
 * - `apply`: an object was added or modified. Caveat: after a resume or a relist the same version may arrive
 *   twice; compare `metadata.resourceVersion` if it matters.
 * - `delete`: an object was deleted, with its last known state. Caveat: deletes may be lost (a delete that
 *   happens while the watch is down surfaces only as a missing object at the next `initDone`); use finalizers
 *   when a deletion must run cleanup.
 */
export type WatcherEvent<T extends KubeObject> =
  | { readonly type: 'init' }
  | { readonly type: 'initApply'; readonly object: T }
  | { readonly type: 'initDone'; readonly resourceVersion: string; readonly namespace?: string }
  | { readonly type: 'apply'; readonly object: T }
  | { readonly type: 'delete'; readonly object: T };

/** True for the events that carry a change seen on the watch itself (not part of a list). */
export function isWatchChange<T extends KubeObject>(
  event: WatcherEvent<T>,
): event is Extract<WatcherEvent<T>, { type: 'apply' | 'delete' }> {
  return event.type === 'apply' || event.type === 'delete';
}
