// Watches one object by name: a watcher with `fieldSelector=metadata.name=<name>` in its namespace.
import type { Observable } from 'rxjs';
import type { KubeObject } from '../kube/objects.js';
import type { Resource } from '../kube/resources.js';
import type { WatcherEvent } from './events.js';
import { watcher } from './watcher.js';
import type { WatchClient, WatcherConfig, WatcherDeps } from './config.js';

/**
 * A {@link watcher} narrowed to one object, named `<kind> <namespace>/<name>` in logs. The object need not
 * exist: the list then delivers `init` and `initDone` with no `initApply`, and its creation later arrives as an
 * `apply`. A deletion arrives as `delete` (or, when it happens while the watch is down, as an `initDone` without
 * the object).
 */
export function watchObject<T extends KubeObject>(
  client: WatchClient,
  resource: Resource,
  namespace: string,
  name: string,
  config: Omit<WatcherConfig, 'namespace' | 'fieldSelector'> = {},
  deps: WatcherDeps = {},
): Observable<WatcherEvent<T>> {
  return watcher<T>(
    client,
    resource,
    {
      name: `${resource.kind.toLowerCase()} ${namespace}/${name}`,
      ...config,
      namespace,
      fieldSelector: `metadata.name=${name}`,
    },
    deps,
  );
}
