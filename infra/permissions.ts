// The operator's permissions: one table, read by the RBAC construct and by the tests that prove it minimal.
import { GROUP, LEADER_ELECTION_LEASE, PLURAL } from '../api/customapp.js';
import { WORKLOAD_KINDS, type WorkloadResource } from '../api/workload.js';

/** An RBAC verb the operator may be granted. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/**
 * Where a permission is granted:
 * - `cluster`: in the ClusterRole, always (cluster-scoped resources);
 * - `watched-namespaces`: where the CustomApps are, so wherever the operator watches. An operator that watches every
 *   namespace needs it in the ClusterRole (a list or watch across all namespaces can only be granted cluster-wide);
 *   one told which namespaces to watch (`--namespaces`, the operator chart's `namespaces` prop) gets it in a Role of
 *   each of them, and nowhere else;
 * - `operator-namespace`: in the Role of the namespace the operator is installed in (and nowhere else).
 */
export type PermissionScope = 'cluster' | 'watched-namespaces' | 'operator-namespace';

/** One rule of the operator's ClusterRole or Role: verbs on one resource (or subresource) of one API group. */
export interface Permission {
  /** The API group; '' is the core group. */
  readonly apiGroup: string;
  /** The resource, with `/subresource` where it applies (for example `customapps/status`). */
  readonly resource: string;
  /** The verbs, in the order RBAC lists them. */
  readonly verbs: readonly Verb[];
  /** Where it is granted, and so where it is not: each row says why it needs no less. */
  readonly scope: PermissionScope;
  /**
   * The only object names the verbs apply to (RBAC's `resourceNames`). RBAC can limit by name only the verbs whose
   * request names the object in its URL (get, update, patch, delete); a create names it in the body, which the
   * authorizer does not read, and a list or watch names none: such verbs never go in a row with names.
   * @default every name
   */
  readonly resourceNames?: readonly string[];
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
 * Every permission the operator needs, and nothing more. The ClusterRole and the Role in dist/ are generated from this
 * table, and the RBAC tests remove each verb in turn to show that something then fails
 * (test/reliability/rbac-minimal.test.ts), except the `contractOnly` verbs, which no code path uses.
 *
 * Why each row has the scope it has:
 * - The CustomApps may live in any watched namespace, and everything the operator reads or writes for a CustomApp lives
 *   in that CustomApp's namespace: the ConfigMaps and Secrets it references (a reference names no namespace), its
 *   Deployment and Service, the Events about it. Those rows are `watched-namespaces`: cluster-wide in dist/, which
 *   watches every namespace (a list or watch across all namespaces can only be granted so), and in a Role of each
 *   namespace for an install told which to watch, which then reads no Secret or ConfigMap anywhere else.
 * - TokenReviews and SubjectAccessReviews are cluster-scoped resources: only a ClusterRole can grant them. They serve
 *   the secure /metrics alone, and are the whole ClusterRole of a namespaced install.
 * - The Lease is the operator's own, in its own namespace (the chart passes it as `--leader-election-namespace`): a
 *   Role there. Cluster-wide, it would let the operator's identity rewrite any Lease, such as kube-controller-manager's
 *   in kube-system or a node's heartbeat in kube-node-lease.
 */
export const OPERATOR_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: '',
    resource: 'configmaps',
    verbs: ['get', 'list', 'watch'],
    scope: 'watched-namespaces',
    why: 'dynamic watches on referenced ConfigMaps (list+watch with a name or namespace scope), in every CustomApp\'s namespace; get: the mission statement mandates "get, list and watch on configmaps"',
    contractOnly: ['get'],
  },
  {
    apiGroup: '',
    resource: 'secrets',
    verbs: ['list', 'watch'],
    scope: 'watched-namespaces',
    why: "dynamic watches on referenced Secrets, in every CustomApp's namespace, hashed on arrival (never a GET)",
  },
  {
    apiGroup: GROUP,
    resource: PLURAL,
    verbs: ['list', 'watch', 'update', 'patch'],
    scope: 'watched-namespaces',
    why: 'the CustomApp informer (one list and watch across all namespaces, or one in each watched namespace), and adding/removing the finalizer (updates guarded by resourceVersion); patch: earlier releases added the finalizer with a merge patch, and keep running beside this one through an upgrade',
    contractOnly: ['patch'],
  },
  {
    apiGroup: GROUP,
    resource: `${PLURAL}/status`,
    verbs: ['update', 'patch'],
    scope: 'watched-namespaces',
    why: 'status conditions, hashes and observed references (an update of the status guarded by resourceVersion), wherever the CustomApp is; patch: earlier releases wrote it with a merge patch, and keep running beside this one through an upgrade',
    contractOnly: ['patch'],
  },
  {
    apiGroup: GROUP,
    resource: `${PLURAL}/finalizers`,
    verbs: ['update'],
    scope: 'watched-namespaces',
    why: 'ownerReferences with blockOwnerDeletion on owned objects (OwnerReferencesPermissionEnforcement), wherever the CustomApp is',
  },
  {
    apiGroup: 'apps',
    resource: 'deployments',
    verbs: ['get', 'list', 'watch', 'create', 'update'],
    scope: 'watched-namespaces',
    why: "the owned Deployment, in its CustomApp's namespace: cache (one list and watch by label across all namespaces, or in each watched namespace), create and update (garbage collection deletes it, with its own identity); get: after an AlreadyExists, to tell ours (its labels edited out of the cache) from a foreign one by its ownerReference",
  },
  {
    apiGroup: '',
    resource: 'services',
    verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
    scope: 'watched-namespaces',
    why: "the owned Service when spec.port is set, in its CustomApp's namespace; deleted when the port is removed; get: after an AlreadyExists, as for Deployments",
  },
  {
    apiGroup: '',
    resource: 'events',
    verbs: ['create', 'patch'],
    scope: 'watched-namespaces',
    why: "core/v1 Events on CustomApps (created, updated, rollout triggered, rollout held), which Kubernetes keeps in the involved object's namespace: any CustomApp's; repeats patch the count",
  },
  {
    apiGroup: 'authentication.k8s.io',
    resource: 'tokenreviews',
    verbs: ['create'],
    scope: 'cluster',
    why: "secure /metrics: who a scraper's bearer token is (a TokenReview, as controller-runtime's metrics filter; cluster-scoped)",
  },
  {
    apiGroup: 'authorization.k8s.io',
    resource: 'subjectaccessreviews',
    verbs: ['create'],
    scope: 'cluster',
    why: 'secure /metrics: whether that scraper may get /metrics (a SubjectAccessReview; cluster-scoped)',
  },
  // The operator's own Lease, in its own namespace only: never a Lease of the control plane or a node heartbeat.
  {
    apiGroup: 'coordination.k8s.io',
    resource: 'leases',
    verbs: ['get', 'update'],
    scope: 'operator-namespace',
    resourceNames: [LEADER_ELECTION_LEASE],
    why: 'leader election reads and renews its own Lease, by name, and no other; no list or watch is needed',
  },
  // Kubernetes RBAC cannot limit `create` by resourceNames: the authorizer decides from the URL, and a create's URL is
  // the collection's (the name is only in the body). So create is a row of its own, unnamed, kept in the Role.
  {
    apiGroup: 'coordination.k8s.io',
    resource: 'leases',
    verbs: ['create'],
    scope: 'operator-namespace',
    why: "leader election creates its Lease when there is none. RBAC cannot limit a create by resourceNames (the new object's name is in the request body, which the authorizer never sees), so this lets the operator create any Lease in its own namespace; the Role confines that to this one namespace",
  },
];

/**
 * What `--sharding` needs besides the table (the operator chart's `sharding` prop adds it to the Role in the
 * operator's namespace, never cluster-wide): each replica renews its own Lease, whose name comes from its identity
 * (a pod name), so get and update cannot be limited by name; list and watch follow the ring's Leases (by label);
 * delete collects the Lease of a replica gone for good (another pod name each time).
 * Create is in the table already.
 */
export const SHARDING_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: 'coordination.k8s.io',
    resource: 'leases',
    verbs: ['get', 'list', 'watch', 'update', 'delete'],
    scope: 'operator-namespace',
    why: "--sharding: each replica renews its own Lease (named after its pod, so not by name) and watches the ring's Leases to know the live members and what each acknowledged; the first member deletes the Lease of a replica gone for 10 Lease durations (on its resourceVersion), else every rollout of the operator would leave its pods' Leases behind",
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
        scope: 'watched-namespaces',
        why: `--workloads=${resource}: the ${WORKLOAD_KINDS[resource].kind}s that opt in by annotation (informer; the rollout and its record, one merge patch)`,
      },
    ];
  });
}

/** A namespace's name: a DNS-1123 label (lower-case alphanumerics and '-', at most 63 characters). */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * What is wrong with a list of namespaces to watch (the operator's `--namespaces`, the chart's `namespaces`), quoting
 * it; undefined when nothing is. It must name at least one namespace, each a DNS-1123 label, each once.
 */
export function watchedNamespacesProblem(namespaces: readonly string[]): string | undefined {
  const quoted = `"${namespaces.join(',')}"`;
  if (namespaces.length === 0) return `${quoted} names no namespace (leave it out to watch all namespaces)`;
  const invalid = namespaces.find((name) => !NAMESPACE_NAME.test(name));
  if (invalid !== undefined) return `"${invalid}" is not a namespace name (a DNS-1123 label) in ${quoted}`;
  const twice = namespaces.find((name, index) => namespaces.indexOf(name) !== index);
  if (twice !== undefined) return `${quoted} names the namespace "${twice}" twice`;
  return undefined;
}
