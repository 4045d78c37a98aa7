// The operator's permissions: one table, read by the RBAC construct and by the tests that prove it minimal.
import { GROUP, PLURAL } from './customapp-api.js';
import { WORKLOAD_KINDS, type WorkloadResource } from './workload-api.js';

/** An RBAC verb the operator may be granted. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** One rule of the operator's ClusterRole: verbs on one resource (or subresource) of one API group. */
export interface Permission {
  /** The API group; '' is the core group. */
  readonly apiGroup: string;
  /** The resource, with `/subresource` where it applies (for example `customapps/status`). */
  readonly resource: string;
  /** The verbs, in the order RBAC lists them. */
  readonly verbs: readonly Verb[];
  /** What in the operator uses it. */
  readonly why: string;
  /**
   * Verbs granted because the product contract requires them although no code path of the operator calls them.
   * The RBAC minimality test expects exactly these to be removable without a failing scenario.
   * @default none
   */
  readonly contractOnly?: readonly Verb[];
}

/**
 * Every permission the operator needs, and nothing more. The ClusterRole in dist/ is generated from this table,
 * and the RBAC tests remove each verb in turn to show that something then fails (test/reliability/rbac-minimal.test.ts),
 * except the `contractOnly` verbs, which no code path uses.
 */
export const OPERATOR_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: '',
    resource: 'configmaps',
    verbs: ['get', 'list', 'watch'],
    why: 'dynamic watches on referenced ConfigMaps (list+watch with a name or namespace scope); get: the mission statement mandates "get, list and watch on configmaps"',
    contractOnly: ['get'],
  },
  {
    apiGroup: '',
    resource: 'secrets',
    verbs: ['list', 'watch'],
    why: 'dynamic watches on referenced Secrets, hashed on arrival (never a GET)',
  },
  {
    apiGroup: GROUP,
    resource: PLURAL,
    verbs: ['list', 'watch', 'patch'],
    why: 'the CustomApp informer, and adding/removing the finalizer (merge patches guarded by resourceVersion)',
  },
  {
    apiGroup: GROUP,
    resource: `${PLURAL}/status`,
    verbs: ['patch'],
    why: 'status conditions, hashes and observed references (a merge patch of the status)',
  },
  {
    apiGroup: GROUP,
    resource: `${PLURAL}/finalizers`,
    verbs: ['update'],
    why: 'ownerReferences with blockOwnerDeletion on owned objects (OwnerReferencesPermissionEnforcement)',
  },
  {
    apiGroup: 'apps',
    resource: 'deployments',
    verbs: ['get', 'list', 'watch', 'create', 'update'],
    why: 'the owned Deployment: cache, create and update (garbage collection deletes it, with its own identity); get: after an AlreadyExists, to tell ours (its labels edited out of the cache) from a foreign one by its ownerReference',
  },
  {
    apiGroup: '',
    resource: 'services',
    verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
    why: 'the owned Service when spec.port is set; deleted when the port is removed; get: after an AlreadyExists, as for Deployments',
  },
  {
    apiGroup: '',
    resource: 'events',
    verbs: ['create', 'patch'],
    why: 'core/v1 Events on CustomApps (created, updated, rollout triggered, rollout held); repeats patch the count',
  },
  {
    apiGroup: 'authentication.k8s.io',
    resource: 'tokenreviews',
    verbs: ['create'],
    why: "secure /metrics: who a scraper's bearer token is (a TokenReview, as controller-runtime's metrics filter)",
  },
  {
    apiGroup: 'authorization.k8s.io',
    resource: 'subjectaccessreviews',
    verbs: ['create'],
    why: 'secure /metrics: whether that scraper may get /metrics (a SubjectAccessReview)',
  },
  {
    apiGroup: 'coordination.k8s.io',
    resource: 'leases',
    verbs: ['get', 'create', 'update'],
    why: 'leader election (get, create, renew); no list or watch is needed',
  },
];

/**
 * The grants `--workloads` needs on each kind it names, less those `granted` already has (the operator chart's
 * `workloads` prop adds them, and only them: on deployments, the table's rule already lists and watches): list and
 * watch for the workload informer (its cache is trimmed, so no GET), patch for the one write of a rollout or a record
 * (a merge patch guarded by the resourceVersion: an update would need the whole object, which the trimmed cache does
 * not keep).
 */
export function workloadPermissions(resources: readonly WorkloadResource[] = [], granted: readonly Permission[] = []): Permission[] {
  return [...new Set(resources)].flatMap((resource) => {
    const { group } = WORKLOAD_KINDS[resource];
    const has = new Set(granted.filter((p) => p.apiGroup === group && p.resource === resource).flatMap((p) => p.verbs));
    const verbs = (['list', 'watch', 'patch'] as const).filter((verb) => !has.has(verb));
    if (verbs.length === 0) return [];
    return [
      {
        apiGroup: group,
        resource,
        verbs,
        why: `--workloads=${resource}: the ${WORKLOAD_KINDS[resource].kind}s that opt in by annotation (informer; the rollout and its record, one merge patch)`,
      },
    ];
  });
}
