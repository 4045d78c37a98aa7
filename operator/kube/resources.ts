// The built-in API resources the operator talks to, and how any resource's URLs are built.

/** One API resource: enough to build its URLs and name it in logs and metrics. */
export interface Resource {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** The plural, as in URLs and RBAC rules. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export const CONFIGMAPS: Resource = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
export const SECRETS: Resource = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };
export const SERVICES: Resource = { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true };
export const EVENTS: Resource = { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true };
export const NAMESPACES: Resource = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false };
export const DEPLOYMENTS: Resource = { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true };
export const STATEFULSETS: Resource = { group: 'apps', version: 'v1', plural: 'statefulsets', kind: 'StatefulSet', namespaced: true };
export const DAEMONSETS: Resource = { group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', namespaced: true };
export const LEASES: Resource = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true };

/** The resource's name in RBAC terms and metrics labels: `configmaps`, `deployments.apps`. */
export function resourceLabel(resource: Resource): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
}

/**
 * The collection or object path: `/api/v1/namespaces/ns/configmaps[/name][/subresource]`. Without a namespace,
 * a namespaced resource's path spans all namespaces.
 */
export function resourcePath(resource: Resource, namespace?: string, name?: string, subresource?: string): string {
  const root = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
  const scope = resource.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const object = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  const sub = subresource ? `/${subresource}` : '';
  return `${root}${scope}/${resource.plural}${object}${sub}`;
}
