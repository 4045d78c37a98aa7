// What a cache keeps of an object: everything the reconcile reads, without what only the API server uses.
import type { KubeObject } from '../kube/objects.js';
import type { WatcherEvent } from '../watch/events.js';

/** Rewrites an object before a cache keeps it. It must keep `metadata.namespace`, `name`, `uid` and `resourceVersion`. */
export type CacheTransform<T extends KubeObject> = (object: T) => T;

/**
 * Drops `metadata.managedFields` (controller-runtime's `cache.TransformStripManagedFields`). It is the server's
 * bookkeeping for server-side apply, often the largest part of a small object, and nothing in the operator reads
 * it. An update (PUT) built from a stripped copy is still safe: the server keeps the stored managedFields when a
 * request leaves the field out.
 */
export function stripManagedFields<T extends KubeObject>(object: T): T {
  if (object.metadata?.managedFields === undefined) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/** Applies `transform` to the object an event carries, if it carries one. */
export function transformEvent<T extends KubeObject>(event: WatcherEvent<T>, transform: CacheTransform<T>): WatcherEvent<T> {
  switch (event.type) {
    case 'initApply':
    case 'apply':
    case 'delete':
      return { type: event.type, object: transform(event.object) };
    default:
      return event;
  }
}
