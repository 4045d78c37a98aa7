// The physical watch streams behind the dependency registry: one object, or a whole namespace, of a kind.
import type { Observable } from 'rxjs';
import type { KubeObject } from '../kube/objects.js';
import { CONFIGMAPS, SECRETS, type Resource } from '../kube/resources.js';
import type { WatcherEvent } from '../watch/events.js';
import { watchObject } from '../watch/watch-object.js';
import { watcher } from '../watch/watcher.js';
import { DEFAULT_PAGE_SIZE, type WatchClient, type WatcherConfig, type WatcherDeps } from '../watch/config.js';
import type { HashableContent } from './content-hash.js';
import type { ListHealth } from './list-health.js';
import type { DependencyKind } from './source.js';

/**
 * The largest ConfigMap or Secret an API server stores, as JSON: etcd refuses a request over 1.5 MiB (its default
 * `--max-request-bytes`, which kube-apiserver's own limit follows), and validation caps a ConfigMap's or Secret's
 * data at 1 MiB (about 1.4 MB once base64 and JSON encode it).
 */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;
/**
 * The bytes one page of a namespace-wide ConfigMap or Secret list may take as it arrives. Kubernetes has no byte
 * limit on a list page, only an item `limit`, so the item limit is chosen from this budget and the largest object:
 * a page of objects of the largest size still fits, and the client refuses to read past it (`maxBytes`).
 */
export const NAMESPACE_PAGE_BYTES = 16 * 1024 * 1024;
/**
 * Items per page of a namespace-wide list: 10. A namespace of Helm release history (Secrets near 1 MiB each)
 * then costs about 15 MiB per page in flight instead of about 700 MB at the watcher's default of 500, which would
 * be more than the operator's memory limit and more than V8's largest string. Per-object lists need no such
 * limit: their field selector answers at most one object.
 */
export const NAMESPACE_PAGE_SIZE = Math.floor(NAMESPACE_PAGE_BYTES / MAX_OBJECT_BYTES);
/**
 * What a namespace list's page may grow to while its objects are small (the watcher's `maxPageSize`: twice as many
 * after each full page, while the next would stay within {@link NAMESPACE_GROW_PAGE_BYTES}): the watcher's default
 * page size.
 */
export const NAMESPACE_MAX_PAGE_SIZE = DEFAULT_PAGE_SIZE;
/**
 * The bytes a grown namespace page stays within: 128 KiB. Measured at 1k (one namespace of 6,000 ConfigMaps of 1.3
 * KB): pages grown to 500 (650 KB answers) left the RSS after the cold start at 124 to 139 MiB over three runs,
 * against 110 to 112 without growth and 112.5 with pages of at most 100 (130 KB); likely because V8 allocates a
 * string past 128 KiB (the answer is read into one) where only a full collection frees it. Within 128 KiB, such a namespace lists 80 per page:
 * the cold start at 1k made 92 lists instead of 608, at the RSS of no growth (109.2 MiB).
 */
export const NAMESPACE_GROW_PAGE_BYTES = 128 * 1024;
/**
 * What a grown namespace page stays within when kube-apiserver answers protobuf (ConfigMaps and Secrets, from a real
 * API server): 1 MiB, so that such a namespace lists 500 per page. The answer is a Buffer decoded object by object,
 * never one string, so the bound of JSON pages above does not apply; `bench/list-modes.ts` measured the 5,921
 * ConfigMaps of a 1k benchmark read in pages of 500 at half the CPU of the pages grown within 128 KiB, on both sides.
 */
export const NAMESPACE_GROW_PROTOBUF_PAGE_BYTES = 1024 * 1024;

/** A ConfigMap or a Secret as it arrives, before the registry hashes it and drops the payload. */
export interface DependencyObject extends KubeObject, HashableContent {}

/** What one physical stream covers: one object (`name`) or every object of the kind in the namespace. */
export interface WatchScope {
  readonly kind: DependencyKind;
  readonly namespace: string;
  /** The object's name; undefined for the whole namespace. */
  readonly name?: string;
}

/**
 * Opens the stream of a scope: a cold Observable of {@link WatcherEvent}s that recovers on its own (as
 * {@link watcher} does). The registry subscribes to start the watch and unsubscribes to stop it; tests pass
 * marble Observables instead.
 */
export type DependencyEvents = (scope: WatchScope) => Observable<WatcherEvent<DependencyObject>>;

/** The API resource of each dependency kind. */
export const DEPENDENCY_RESOURCES: Readonly<Record<DependencyKind, Resource>> = { ConfigMap: CONFIGMAPS, Secret: SECRETS };

/** The watcher settings a registry may tune; scope, selectors and names are its own. */
export type DependencyWatchConfig = Omit<WatcherConfig, 'namespace' | 'fieldSelector' | 'labelSelector' | 'name'>;

/**
 * The real streams: {@link watchObject} (`fieldSelector=metadata.name=<name>`, named `configmap ns/name` in logs)
 * for an object scope, and an unfiltered {@link watcher} of the namespace (named `configmap ns/*`) for a
 * namespace scope, listed {@link NAMESPACE_PAGE_SIZE} objects per page at first, growing to {@link NAMESPACE_MAX_PAGE_SIZE}
 * while pages stay within {@link NAMESPACE_GROW_PAGE_BYTES}, within {@link NAMESPACE_PAGE_BYTES} (`pageSize`, `maxPageSize` and `maxPageBytes` in `config`
 * override them, for namespace lists only). With `health`, every stream's list is
 * followed, so that one that keeps failing is reported ({@link ListHealth}).
 */
export function watchDependencies(
  client: WatchClient,
  config: DependencyWatchConfig = {},
  deps: WatcherDeps = {},
  health?: ListHealth,
): DependencyEvents {
  const open = ({ kind, namespace, name }: WatchScope, streamDeps: WatcherDeps): Observable<WatcherEvent<DependencyObject>> => {
    const resource = DEPENDENCY_RESOURCES[kind];
    return name === undefined
      ? watcher<DependencyObject>(
          client,
          resource,
          {
            ...config,
            pageSize: config.pageSize ?? NAMESPACE_PAGE_SIZE,
            maxPageSize: config.maxPageSize ?? NAMESPACE_MAX_PAGE_SIZE,
            growPageBytes: config.growPageBytes ?? NAMESPACE_GROW_PAGE_BYTES,
            growProtobufPageBytes: config.growProtobufPageBytes ?? NAMESPACE_GROW_PROTOBUF_PAGE_BYTES,
            maxPageBytes: config.maxPageBytes ?? NAMESPACE_PAGE_BYTES,
            namespace,
            name: `${kind.toLowerCase()} ${namespace}/*`,
            eventLogLevel: 'debug',
          },
          streamDeps,
        )
      : watchObject<DependencyObject>(client, resource, namespace, name, config, streamDeps);
  };
  return (scope) => (health ? health.follow(scope, (onRetry) => open(scope, { ...deps, onRetry })) : open(scope, deps));
}
