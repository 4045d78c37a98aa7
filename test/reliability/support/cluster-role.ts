// The operator's ClusterRole as dist/ ships it, split into single grants, and swapped live in a test cluster.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../../infra/customapp-api.js';
import type { KubeClient } from '../../../operator/kube/client.js';
import type { KubeObject } from '../../../operator/kube/objects.js';
import type { Resource } from '../../../operator/kube/resources.js';
import { eventually } from '../../support/operator-harness.js';

const DIST_OPERATOR = resolve(import.meta.dirname, '../../../dist/customapp-operator.k8s.yaml');

export const CLUSTER_ROLES: Resource = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural: 'clusterroles',
  kind: 'ClusterRole',
  namespaced: false,
};
const SUBJECT_ACCESS_REVIEWS: Resource = {
  group: 'authorization.k8s.io',
  version: 'v1',
  plural: 'subjectaccessreviews',
  kind: 'SubjectAccessReview',
  namespaced: false,
};

/** The user the operator's ServiceAccount token authenticates as. */
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_NAME}`;

/** One RBAC rule, as in a ClusterRole. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/** One verb on one resource of one group: the unit the minimality test removes. */
export interface Grant {
  readonly apiGroup: string;
  /** `resource` or `resource/subresource`. */
  readonly resource: string;
  readonly verb: string;
}

interface ClusterRole extends KubeObject {
  rules?: PolicyRule[];
}

/** `verb resource.group` (e.g. `get configmaps`, `update customapps/finalizers.app.example.com`). */
export function grantLabel(grant: Grant): string {
  return `${grant.verb} ${grant.resource}${grant.apiGroup ? `.${grant.apiGroup}` : ''}`;
}

/** The rules of the operator's ClusterRole in dist/customapp-operator.k8s.yaml. */
export function distOperatorRules(): PolicyRule[] {
  const documents = parseAllDocuments(readFileSync(DIST_OPERATOR, 'utf8')).map((document) => document.toJS() as ClusterRole);
  const role = documents.find((document) => document.kind === 'ClusterRole' && document.metadata.name === OPERATOR_NAME);
  if (!role?.rules) throw new Error(`${DIST_OPERATOR}: no ClusterRole "${OPERATOR_NAME}" with rules`);
  return role.rules;
}

/** Every single grant of `rules`, in their order. */
export function grantsOf(rules: readonly PolicyRule[]): Grant[] {
  return rules.flatMap((rule) =>
    rule.apiGroups.flatMap((apiGroup) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => ({ apiGroup, resource, verb })))),
  );
}

/** `rules` with one grant taken out (a rule left with no verb is dropped). */
export function rulesWithout(rules: readonly PolicyRule[], grant: Grant): PolicyRule[] {
  return grantsOf(rules)
    .filter((each) => grantLabel(each) !== grantLabel(grant))
    .map((each) => ({ apiGroups: [each.apiGroup], resources: [each.resource], verbs: [each.verb] }));
}

/** Whether the operator's ServiceAccount may do `grant` now, as the API server's authorizer answers. */
async function allowed(admin: KubeClient, grant: Grant): Promise<boolean> {
  const [resource, subresource] = grant.resource.split('/');
  const review = await admin.create<KubeObject & { status?: { allowed?: boolean } }>(SUBJECT_ACCESS_REVIEWS, undefined, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: {},
    spec: {
      user: OPERATOR_USER,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${OPERATOR_NAMESPACE}`, 'system:authenticated'],
      resourceAttributes: { group: grant.apiGroup, resource, subresource, verb: grant.verb, namespace: 'default' },
    },
  } as KubeObject);
  return review.status?.allowed === true;
}

/**
 * Replaces the rules of the operator's ClusterRole, and waits until the authorizer answers accordingly for
 * `probe` (RBAC changes reach kube-apiserver's authorizer through an informer, a few milliseconds later).
 */
export async function setOperatorRules(admin: KubeClient, rules: readonly PolicyRule[], probe?: Grant): Promise<void> {
  const role = await admin.get<ClusterRole>(CLUSTER_ROLES, undefined, OPERATOR_NAME);
  await admin.replace<ClusterRole>(CLUSTER_ROLES, undefined, OPERATOR_NAME, { ...role, rules: rules.map((rule) => ({ ...rule })) });
  if (!probe) return;
  const expected = grantsOf(rules).some((grant) => grantLabel(grant) === grantLabel(probe));
  await eventually(
    `the authorizer answers ${expected} for ${grantLabel(probe)}`,
    async () => (await allowed(admin, probe)) === expected,
    10_000,
    20,
  );
}
