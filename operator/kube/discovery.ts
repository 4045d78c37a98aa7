// Whether the API server serves a resource (discovery) and lets this identity use it (a SelfSubjectAccessReview).
import type { KubeClient } from './client.js';
import type { KubeObject } from './objects.js';
import { isNotFound } from './errors.js';
import { resourceLabel, type Resource } from './resources.js';

/** The calls the checks make; a {@link KubeClient} has them. */
export type DiscoveryClient = Pick<KubeClient, 'discovery' | 'create'>;

/** Why a resource cannot be used. */
export interface AccessProblem {
  /**
   * `NotServed`: discovery does not list the resource at its version (a CRD not installed, or serving other
   * versions); `Forbidden`: RBAC denies a verb.
   */
  readonly reason: 'NotServed' | 'Forbidden';
  /** One sentence that quotes the names involved. */
  readonly message: string;
  /** For `Forbidden`: the missing permission, as RBAC spells it, e.g. `list customapps.app.example.com (all namespaces)`. */
  readonly permission?: string;
}

/** A discovery APIResourceList (`/api/v1`, `/apis/<group>/<version>`), the fields read here. */
interface ResourceList {
  readonly resources?: readonly { readonly name: string; readonly verbs?: readonly string[] }[];
}

/** A discovery APIGroup (`/apis/<group>`), the fields read here. */
interface ApiGroup {
  readonly versions?: readonly { readonly groupVersion: string }[];
}

/** `app.example.com/v1`, or `v1` for the core group. */
function groupVersionOf(resource: Resource): string {
  return resource.group ? `${resource.group}/${resource.version}` : resource.version;
}

/**
 * Asks discovery whether `resource` is served at its version with the `verbs` we use. Answers undefined when it
 * is, a `NotServed` problem saying what the server has instead when it is not, and rejects when discovery itself
 * fails (the server is unreachable, a 500…): then nobody knows.
 *
 * Discovery is readable by every authenticated user (the bootstrap ClusterRole `system:discovery`): no grant needed.
 */
export async function servedProblem(
  client: DiscoveryClient,
  resource: Resource,
  verbs: readonly string[] = ['list', 'watch'],
  signal?: AbortSignal,
): Promise<AccessProblem | undefined> {
  const label = resourceLabel(resource);
  const groupVersion = groupVersionOf(resource);
  const root = resource.group ? `/apis/${groupVersion}` : `/api/${resource.version}`;
  let list: ResourceList;
  try {
    list = await client.discovery<ResourceList>(root, signal);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    if (!resource.group)
      return { reason: 'NotServed', message: `${label} is not served: the API server has no core version ${groupVersion}` };
    let group: ApiGroup | undefined;
    try {
      group = await client.discovery<ApiGroup>(`/apis/${resource.group}`, signal);
    } catch (groupError) {
      if (!isNotFound(groupError)) throw groupError;
    }
    const served = (group?.versions ?? []).map((version) => version.groupVersion);
    return {
      reason: 'NotServed',
      message:
        served.length === 0
          ? `${label} is not served: the API server has no API group ${resource.group}`
          : `${label} is not served in ${groupVersion}: the API server serves ${served.join(', ')} only`,
    };
  }
  const found = list.resources?.find((entry) => entry.name === resource.plural);
  if (!found) return { reason: 'NotServed', message: `${label} is not served: ${groupVersion} has no resource ${resource.plural}` };
  const missing = verbs.filter((verb) => !(found.verbs ?? []).includes(verb));
  if (missing.length > 0) {
    return { reason: 'NotServed', message: `${label} in ${groupVersion} does not support ${missing.join(', ')}` };
  }
  return undefined;
}

/** authorization.k8s.io/v1 SelfSubjectAccessReview: "may I?", which every authenticated user may ask (`system:basic-user`). */
export const SELF_SUBJECT_ACCESS_REVIEWS: Resource = {
  group: 'authorization.k8s.io',
  version: 'v1',
  plural: 'selfsubjectaccessreviews',
  kind: 'SelfSubjectAccessReview',
  namespaced: false,
};

interface AccessReview extends KubeObject {
  readonly spec: {
    readonly resourceAttributes: { readonly verb: string; readonly group: string; readonly resource: string; readonly namespace?: string };
  };
  readonly status?: { readonly allowed?: boolean };
}

/**
 * Asks the API server whether this identity may `verb` the resource in `namespace` (all namespaces when
 * undefined). Answers undefined when the review itself fails: then only the request itself can tell.
 */
export async function mayI(
  client: DiscoveryClient,
  verb: string,
  resource: Resource,
  namespace?: string,
  signal?: AbortSignal,
): Promise<boolean | undefined> {
  const review: AccessReview = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    metadata: {},
    spec: { resourceAttributes: { verb, group: resource.group, resource: resource.plural, namespace } },
  };
  try {
    const answer = await client.create<AccessReview>(SELF_SUBJECT_ACCESS_REVIEWS, undefined, review, { signal });
    return answer.status?.allowed === true;
  } catch {
    return undefined;
  }
}

/** The `Forbidden` problem of `verb` on `resource`, with the API server's own words when it said any. */
export function forbiddenProblem(verb: string, resource: Resource, namespace: string | undefined, serverMessage?: string): AccessProblem {
  const permission = `${verb} ${resourceLabel(resource)} (${namespace ? `namespace ${namespace}` : 'all namespaces'})`;
  return {
    reason: 'Forbidden',
    permission,
    message: `missing RBAC permission: ${permission}${serverMessage ? ` (the API server said: ${serverMessage})` : ''}`,
  };
}
