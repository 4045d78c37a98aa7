// API discovery: /api, /apis, group and group-version documents, legacy and aggregated (apidiscovery.k8s.io/v2), from the registry.
import { createHash } from 'node:crypto';
import type { ResourceRegistry, ResourceType } from './resources.js';

export const aggregatedDiscoveryType = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** base64(sha256("group/version/kind")[:8]), the apiserver's storageVersionHash. */
export function storageVersionHash(rt: ResourceType): string {
  return createHash('sha256').update(`${rt.group}/${rt.version}/${rt.kind}`).digest().subarray(0, 8).toString('base64');
}

/**
 * The subresources shown in discovery with their kind and verbs, sorted by name; `asDefined` keeps the definition's
 * order instead, as kube-apiserver lists a custom resource's (status, then scale).
 */
function subresourceEntries(
  rt: ResourceType,
  asDefined = false,
): { name: string; group?: string; version?: string; kind: string; verbs: string[] }[] {
  const entries = rt.subresources.map((sub) => {
    switch (sub) {
      case 'scale':
        return { name: sub, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] };
      case 'token':
        return { name: sub, group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] };
      case 'finalize':
        return { name: sub, kind: rt.kind, verbs: ['update'] };
      default:
        return { name: sub, kind: rt.kind, verbs: ['get', 'patch', 'update'] };
    }
  });
  return asDefined ? entries : entries.sort((a, b) => (a.name < b.name ? -1 : 1));
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function groupEntry(registry: ResourceRegistry, group: string): Record<string, unknown> {
  const versions = registry.versionsOf(group).map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions, preferredVersion: versions[0] };
}

export function apiGroupList(registry: ResourceRegistry): Record<string, unknown> {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: registry
      .groups()
      .filter((g) => g !== '')
      .map((g) => groupEntry(registry, g)),
  };
}

export function apiGroup(registry: ResourceRegistry, group: string): Record<string, unknown> | undefined {
  if (registry.versionsOf(group).length === 0 || group === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(registry, group) };
}

export function apiResourceList(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const types = registry.resourcesOf(group, version);
  if (types.length === 0) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const rt of [...types].sort((a, b) => (a.resource < b.resource ? -1 : 1))) {
    const entry: Record<string, unknown> = {
      name: rt.resource,
      singularName: rt.singular,
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: rt.verbs,
    };
    if (rt.shortNames.length > 0) entry.shortNames = rt.shortNames;
    if (rt.categories.length > 0) entry.categories = rt.categories;
    if (rt.verbs.includes('get') || rt.verbs.includes('list')) entry.storageVersionHash = storageVersionHash(rt);
    resources.push(entry);
    for (const sub of subresourceEntries(rt, !rt.strategicMerge)) {
      const s: Record<string, unknown> = { name: `${rt.resource}/${sub.name}`, singularName: '', namespaced: rt.namespaced };
      if (sub.group !== undefined) {
        s.group = sub.group;
        s.version = sub.version;
      }
      s.kind = sub.kind;
      s.verbs = sub.verbs;
      resources.push(s);
    }
  }
  const list: Record<string, unknown> = { kind: 'APIResourceList' };
  if (group !== '') list.apiVersion = 'v1';
  list.groupVersion = group === '' ? version : `${group}/${version}`;
  list.resources = resources;
  return list;
}

function discoveryResource(rt: ResourceType): Record<string, unknown> {
  const custom = !rt.strategicMerge;
  const entry: Record<string, unknown> = {
    resource: rt.resource,
    responseKind: { group: custom ? rt.group : '', version: custom ? rt.version : '', kind: rt.kind },
    scope: rt.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: rt.singular,
    verbs: rt.verbs,
  };
  if (rt.shortNames.length > 0) entry.shortNames = rt.shortNames;
  if (rt.categories.length > 0) entry.categories = rt.categories;
  const subs = subresourceEntries(rt, custom);
  if (subs.length > 0) {
    entry.subresources = subs.map((s) => ({
      subresource: s.name,
      responseKind: { group: s.group ?? (custom ? rt.group : ''), version: s.version ?? (custom ? rt.version : ''), kind: s.kind },
      verbs: s.verbs,
    }));
  }
  return entry;
}

/** The aggregated discovery document of /api (core only) or /apis (every group). */
export function aggregatedDiscovery(registry: ResourceRegistry, core: boolean): Record<string, unknown> {
  const groups = core ? [''] : registry.groups().filter((g) => g !== '');
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: groups.map((group) => {
      const item: Record<string, unknown> = {
        metadata: group === '' ? {} : { name: group },
        versions: registry.versionsOf(group).map((version) => ({
          version,
          resources: registry
            .resourcesOf(group, version)
            .sort((a, b) => (a.resource < b.resource ? -1 : 1))
            .map(discoveryResource),
          freshness: 'Current',
        })),
      };
      return item;
    }),
  };
}

/** A strong ETag of a discovery document (clients cache on it). */
export function etagOf(body: string): string {
  return `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"`;
}
