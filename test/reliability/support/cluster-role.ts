// The operator's ClusterRole and Roles as dist/ (or an install synthesized with `namespaces`) ships them, split into
// single grants, and swapped live in a test cluster.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../../api/customapp.js';
import type { KubeClient } from '../../../operator/kube/client.js';
import type { KubeObject } from '../../../operator/kube/objects.js';
import type { Resource } from '../../../operator/kube/resources.js';
import { eventually } from '../../support/operator-harness.js';

const DIST = resolve(import.meta.dirname, '../../../dist');
const OPERATOR_FILE = 'customapp-operator.k8s.yaml';

/** An rbac.authorization.k8s.io/v1 resource. */
const rbacResource = (plural: string, kind: string, namespaced: boolean): Resource => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural,
  kind,
  namespaced,
});
export const CLUSTER_ROLES = rbacResource('clusterroles', 'ClusterRole', false);
const ROLES = rbacResource('roles', 'Role', true);
const ROLE_BINDINGS = rbacResource('rolebindings', 'RoleBinding', true);
const SUBJECT_ACCESS_REVIEWS: Resource = {
  group: 'authorization.k8s.io',
  version: 'v1',
  plural: 'subjectaccessreviews',
  kind: 'SubjectAccessReview',
  namespaced: false,
};

/** The user the operator's ServiceAccount token authenticates as. */
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_NAME}`;

/** One RBAC rule, as in a ClusterRole or a Role. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

/**
 * The rules of the operator's roles: the ClusterRole, the Role in its own namespace and, for an install that watches
 * some namespaces, the Role of each of them (the same rules in each).
 */
export interface OperatorRules {
  readonly clusterRole: readonly PolicyRule[];
  readonly role: readonly PolicyRule[];
  /** @default none: the install watches every namespace */
  readonly watchedRole?: readonly PolicyRule[];
}

/** One verb on one resource of one group: the unit the minimality test removes. */
export interface Grant {
  readonly apiGroup: string;
  /** `resource` or `resource/subresource`. */
  readonly resource: string;
  readonly verb: string;
  /** The names it is limited to. @default every name */
  readonly resourceNames?: readonly string[];
  /** Granted by the Role in the operator's namespace. @default false: by the ClusterRole */
  readonly inOperatorNamespace?: boolean;
  /** Granted by the Role of a watched namespace (an install with `namespaces`). @default false */
  readonly inWatchedNamespace?: boolean;
}

interface RbacRole extends KubeObject {
  rules?: PolicyRule[];
}

/**
 * `verb resource.group` (e.g. `get configmaps`, `update customapps/finalizers.app.example.com`), then the names it is
 * limited to and, for the Role's grants, the namespace (`get leases.coordination.k8s.io "x" in customapp-system`).
 */
export function grantLabel(grant: Grant): string {
  const names = (grant.resourceNames ?? []).map((name) => ` "${name}"`).join('');
  const where = grant.inOperatorNamespace ? ` in ${OPERATOR_NAMESPACE}` : grant.inWatchedNamespace ? ' in the watched namespace' : '';
  return `${grant.verb} ${grant.resource}${grant.apiGroup ? `.${grant.apiGroup}` : ''}${names}${where}`;
}

/**
 * The rules of the operator's ClusterRole and Roles in dist/customapp-operator.k8s.yaml, or in the same file of an
 * install synthesized into `dir` (test/support/namespaced-install.ts).
 */
export function distOperatorRules(dir = DIST): OperatorRules {
  const file = resolve(dir, OPERATOR_FILE);
  const documents = parseAllDocuments(readFileSync(file, 'utf8')).map((document) => document.toJS() as RbacRole);
  const find = (kind: string, namespace?: (namespace: string | undefined) => boolean): RbacRole | undefined =>
    documents.find(
      (document) =>
        document.kind === kind && document.metadata.name === OPERATOR_NAME && (namespace?.(document.metadata.namespace) ?? true),
    );
  const rulesOf = (kind: string, namespace?: (namespace: string | undefined) => boolean): PolicyRule[] => {
    const role = find(kind, namespace);
    if (!role?.rules) throw new Error(`${file}: no ${kind} "${OPERATOR_NAME}" with rules`);
    return role.rules;
  };
  const watched = find('Role', (namespace) => namespace !== OPERATOR_NAMESPACE);
  return {
    clusterRole: rulesOf('ClusterRole'),
    role: rulesOf('Role', (namespace) => namespace === OPERATOR_NAMESPACE),
    ...(watched ? { watchedRole: rulesOf('Role', (namespace) => namespace === watched.metadata.namespace) } : {}),
  };
}

/** Every single grant of `rules`, the ClusterRole's, the operator namespace Role's, then a watched one's, in their order. */
export function grantsOf(rules: OperatorRules): Grant[] {
  const split = (of: readonly PolicyRule[], where: Pick<Grant, 'inOperatorNamespace' | 'inWatchedNamespace'>): Grant[] =>
    of.flatMap((rule) =>
      rule.apiGroups.flatMap((apiGroup) =>
        rule.resources.flatMap((resource) =>
          rule.verbs.map((verb) => ({
            apiGroup,
            resource,
            verb,
            ...(rule.resourceNames ? { resourceNames: rule.resourceNames } : {}),
            ...where,
          })),
        ),
      ),
    );
  return [
    ...split(rules.clusterRole, {}),
    ...split(rules.role, { inOperatorNamespace: true }),
    ...split(rules.watchedRole ?? [], { inWatchedNamespace: true }),
  ];
}

/** `rules` with one grant taken out (a rule left with no verb is dropped). */
export function rulesWithout(rules: OperatorRules, grant: Grant): OperatorRules {
  const kept = grantsOf(rules).filter((each) => grantLabel(each) !== grantLabel(grant));
  const asRules = (where: (grant: Grant) => boolean): PolicyRule[] =>
    kept.filter(where).map((each) => ({
      apiGroups: [each.apiGroup],
      resources: [each.resource],
      verbs: [each.verb],
      ...(each.resourceNames ? { resourceNames: each.resourceNames } : {}),
    }));
  return {
    clusterRole: asRules((each) => !each.inOperatorNamespace && !each.inWatchedNamespace),
    role: asRules((each) => each.inOperatorNamespace === true),
    ...(rules.watchedRole ? { watchedRole: asRules((each) => each.inWatchedNamespace === true) } : {}),
  };
}

/**
 * Whether the operator's ServiceAccount may do `grant` now, as the API server's authorizer answers: in the operator's
 * namespace, in `watchedNamespace`, or in `default` for a grant of the ClusterRole (undefined: at cluster scope).
 */
export async function allowed(
  admin: KubeClient,
  grant: Grant,
  watchedNamespace?: string,
  clusterNamespace: string | undefined = 'default',
): Promise<boolean> {
  const [resource, subresource] = grant.resource.split('/');
  const namespace = grant.inOperatorNamespace ? OPERATOR_NAMESPACE : grant.inWatchedNamespace ? watchedNamespace : clusterNamespace;
  const review = await admin.create<KubeObject & { status?: { allowed?: boolean } }>(SUBJECT_ACCESS_REVIEWS, undefined, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: {},
    spec: {
      user: OPERATOR_USER,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${OPERATOR_NAMESPACE}`, 'system:authenticated'],
      resourceAttributes: { group: grant.apiGroup, resource, subresource, verb: grant.verb, namespace, name: grant.resourceNames?.[0] },
    },
  } as KubeObject);
  return review.status?.allowed === true;
}

/** Replaces the rules of one of the operator's roles. */
async function replaceRules(
  admin: KubeClient,
  resource: Resource,
  namespace: string | undefined,
  rules: readonly PolicyRule[],
): Promise<void> {
  const role = await admin.get<RbacRole>(resource, namespace, OPERATOR_NAME);
  await admin.replace<RbacRole>(resource, namespace, OPERATOR_NAME, { ...role, rules: rules.map((rule) => ({ ...rule })) });
}

/**
 * Replaces the rules of the operator's ClusterRole and Role (and of the Role in `watchedNamespace`, with the rules'
 * `watchedRole`), and waits until the authorizer answers accordingly for `probe` (RBAC changes reach kube-apiserver's
 * authorizer through an informer, a few milliseconds later).
 */
export async function setOperatorRules(admin: KubeClient, rules: OperatorRules, probe?: Grant, watchedNamespace?: string): Promise<void> {
  await replaceRules(admin, CLUSTER_ROLES, undefined, rules.clusterRole);
  await replaceRules(admin, ROLES, OPERATOR_NAMESPACE, rules.role);
  if (rules.watchedRole && watchedNamespace) await replaceRules(admin, ROLES, watchedNamespace, rules.watchedRole);
  if (!probe) return;
  const expected = grantsOf(rules).some((grant) => grantLabel(grant) === grantLabel(probe));
  await eventually(
    `the authorizer answers ${expected} for ${grantLabel(probe)}`,
    async () => (await allowed(admin, probe, watchedNamespace)) === expected,
    10_000,
    20,
  );
}

/**
 * Lets the operator's ServiceAccount get and update the named Leases of its namespace too (a Role and a RoleBinding
 * called `name`), for tests that elect on Leases of their own: dist/'s Role grants get and update on the operator's
 * Lease alone (and create on any). Returns once the authorizer allows them.
 */
export async function grantOperatorLeases(admin: KubeClient, name: string, leases: readonly string[]): Promise<void> {
  const rbac = 'rbac.authorization.k8s.io';
  const metadata = { name, namespace: OPERATOR_NAMESPACE };
  await admin.create<RbacRole>(ROLES, OPERATOR_NAMESPACE, {
    apiVersion: `${rbac}/v1`,
    kind: 'Role',
    metadata,
    rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: leases }],
  });
  await admin.create(ROLE_BINDINGS, OPERATOR_NAMESPACE, {
    apiVersion: `${rbac}/v1`,
    kind: 'RoleBinding',
    metadata,
    roleRef: { apiGroup: rbac, kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: OPERATOR_NAMESPACE }],
  } as KubeObject);
  for (const lease of leases) {
    const grant = {
      apiGroup: 'coordination.k8s.io',
      resource: 'leases',
      verb: 'update',
      resourceNames: [lease],
      inOperatorNamespace: true,
    };
    await eventually(`the authorizer allows ${grantLabel(grant)}`, () => allowed(admin, grant), 10_000, 20);
  }
}
