// The physical watch streams behind the dependency registry: one object, or a whole namespace, of a kind.
import type { Observable } from 'rxjs';
import type { KubeObject } from '../kube/objects.js';
import { CONFIGMAPS, SECRETS, type Resource } from '../kube/resources.js';
import type { WatcherEvent } from '../watch/events.js';
import { watchObject } from '../watch/watch-object.js';
import { watcher } from '../watch/watcher.js';
import type { WatchClient, WatcherConfig, WatcherDeps } from '../watch/config.js';
import type { HashableContent } from './content-hash.js';
import type { DependencyKind } from './source.js';

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
 * namespace scope.
 */
export function watchDependencies(client: WatchClient, config: DependencyWatchConfig = {}, deps: WatcherDeps = {}): DependencyEvents {
  return ({ kind, namespace, name }) => {
    const resource = DEPENDENCY_RESOURCES[kind];
    return name === undefined
      ? watcher<DependencyObject>(
          client,
          resource,
          { ...config, namespace, name: `${kind.toLowerCase()} ${namespace}/*`, eventLogLevel: 'debug' },
          deps,
        )
      : watchObject<DependencyObject>(client, resource, namespace, name, config, deps);
  };
}
