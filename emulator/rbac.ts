// The RBAC authorizer over the stored Roles, ClusterRoles and bindings (rbac/v1 semantics, ClusterRole aggregation
// evaluated live), its Forbidden messages, and the apiserver's bootstrap policy.
import type { Attributes, Decision, UserInfo } from './authz.js';
import { ApiError } from './errors.js';
import type { KubeObject } from './object.js';
import { labelSelectorFromObject, labelsMatch } from './selectors.js';
import type { Store } from './store.js';

type Obj = Record<string, any>;

export interface PolicyRule {
  readonly verbs?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

function subjectMatches(subject: Obj, user: UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.username;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return user.username === `system:serviceaccount:${namespace}:${subject.name}`;
    }
    default:
      return false;
  }
}

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return (rule.verbs ?? []).some((v) => v === '*' || v === verb);
}

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  return (rule.resources ?? []).some((r) => r === '*' || r === combined || (subresource !== '' && r === `*/${subresource}`));
}

/** One rule against one request, as rbac.RuleAllows does. */
export function ruleAllows(rule: PolicyRule, a: Attributes): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.resourceRequest) {
    return (rule.nonResourceURLs ?? []).some(
      (url) => url === '*' || url === a.path || (url.endsWith('*') && a.path.startsWith(url.slice(0, -1))),
    );
  }
  if (!(rule.apiGroups ?? []).some((g) => g === '*' || g === a.apiGroup)) return false;
  if (!resourceMatches(rule, a.resource, a.subresource)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (a.name !== '' && names.includes(a.name));
}

/** Go's %q of a plain string. */
function quote(value: unknown): string {
  return JSON.stringify(String(value ?? ''));
}

/** rbac describeSubject: `ServiceAccount "name/namespace"`, `User "name"`, `Group "name"`. */
function describeSubject(subject: Obj, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') return `${subject.kind} ${quote(`${subject.name}/${subject.namespace || bindingNamespace}`)}`;
  return `${subject.kind} ${quote(subject.name)}`;
}

export class RbacAuthorizer {
  constructor(private readonly store: Store) {}

  private objects(storage: string): KubeObject[] {
    return [...this.store.collection(storage).objects.values()].map((s) => s.object);
  }

  private clusterRole(name: string): Obj | undefined {
    return this.store.collection('rbac.authorization.k8s.io/clusterroles').objects.get(name)?.object as Obj | undefined;
  }

  /** A ClusterRole's rules, with aggregationRule evaluated against the current ClusterRoles. */
  private clusterRoleRules(name: string, seen = new Set<string>()): PolicyRule[] {
    const role = this.clusterRole(name);
    if (role === undefined || seen.has(name)) return [];
    seen.add(name);
    const rules: PolicyRule[] = [...(role.rules ?? [])];
    for (const selector of role.aggregationRule?.clusterRoleSelectors ?? []) {
      const parsed = labelSelectorFromObject(selector);
      for (const other of this.objects('rbac.authorization.k8s.io/clusterroles')) {
        if (other.metadata.name !== name && labelsMatch(parsed, other.metadata.labels))
          rules.push(...this.clusterRoleRules(other.metadata.name!, seen));
      }
    }
    return rules;
  }

  private roleRules(namespace: string, name: string): PolicyRule[] {
    return ((this.store.collection('rbac.authorization.k8s.io/roles').objects.get(`${namespace}/${name}`)?.object as Obj | undefined)
      ?.rules ?? []) as PolicyRule[];
  }

  /** Every rule that applies to the user in a namespace ("" = cluster-wide rules only). */
  rulesFor(user: UserInfo, namespace: string): PolicyRule[] {
    const rules: PolicyRule[] = [];
    for (const binding of this.objects('rbac.authorization.k8s.io/clusterrolebindings') as Obj[]) {
      if ((binding.subjects ?? []).some((s: Obj) => subjectMatches(s, user, '')))
        rules.push(...this.clusterRoleRules(binding.roleRef?.name));
    }
    if (namespace !== '') {
      for (const binding of this.objects('rbac.authorization.k8s.io/rolebindings') as Obj[]) {
        if (binding.metadata.namespace !== namespace) continue;
        if (!(binding.subjects ?? []).some((s: Obj) => subjectMatches(s, user, namespace))) continue;
        const ref = binding.roleRef ?? {};
        rules.push(...(ref.kind === 'ClusterRole' ? this.clusterRoleRules(ref.name) : this.roleRules(namespace, ref.name)));
      }
    }
    return rules;
  }

  /**
   * The decision, with the RBAC authorizer's reason: the first binding (ClusterRoleBindings, then the namespace's
   * RoleBindings, in store order; the apiserver's lister order is not defined either) whose role has an allowing rule,
   * described as `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to ServiceAccount "name/namespace"`.
   */
  authorize(a: Attributes): Decision {
    if (a.user.groups.includes('system:masters')) return { allowed: true, reason: '' };
    for (const binding of this.objects('rbac.authorization.k8s.io/clusterrolebindings') as Obj[]) {
      const subject = (binding.subjects ?? []).find((s: Obj) => subjectMatches(s, a.user, ''));
      if (subject === undefined || !this.clusterRoleRules(binding.roleRef?.name).some((rule) => ruleAllows(rule, a))) continue;
      const describe = `ClusterRoleBinding ${quote(binding.metadata.name)} of ${binding.roleRef.kind} ${quote(binding.roleRef.name)}`;
      return { allowed: true, reason: `RBAC: allowed by ${describe} to ${describeSubject(subject, '')}` };
    }
    const namespace = a.resourceRequest ? a.namespace : '';
    if (namespace !== '') {
      for (const binding of this.objects('rbac.authorization.k8s.io/rolebindings') as Obj[]) {
        if (binding.metadata.namespace !== namespace) continue;
        const subject = (binding.subjects ?? []).find((s: Obj) => subjectMatches(s, a.user, namespace));
        if (subject === undefined) continue;
        const ref = binding.roleRef ?? {};
        const rules = ref.kind === 'ClusterRole' ? this.clusterRoleRules(ref.name) : this.roleRules(namespace, ref.name);
        if (!rules.some((rule) => ruleAllows(rule, a))) continue;
        const describe = `RoleBinding ${quote(`${binding.metadata.name}/${namespace}`)} of ${ref.kind} ${quote(ref.name)}`;
        return { allowed: true, reason: `RBAC: allowed by ${describe} to ${describeSubject(subject, namespace)}` };
      }
    }
    return { allowed: false, reason: '' };
  }
}

/** The 403 of a denied request, worded as the apiserver's forbidden responder does. */
export function forbiddenFor(a: Attributes): ApiError {
  const user = `User ${JSON.stringify(a.user.username)}`;
  if (!a.resourceRequest) {
    return new ApiError(403, 'Forbidden', `forbidden: ${user} cannot ${a.verb} path ${JSON.stringify(a.path)}`, {});
  }
  const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  const scope = a.namespace === '' ? 'at the cluster scope' : `in the namespace ${JSON.stringify(a.namespace)}`;
  const qualified = a.apiGroup === '' ? a.resource : `${a.resource}.${a.apiGroup}`;
  const subject = a.name === '' ? qualified : `${qualified} ${JSON.stringify(a.name)}`;
  return new ApiError(
    403,
    'Forbidden',
    `${subject} is forbidden: ${user} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`,
    {
      name: a.name,
      group: a.apiGroup,
      kind: a.resource,
    },
  );
}

const bootstrapLabels = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const bootstrapAnnotations = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };

function clusterRole(name: string, rules: PolicyRule[], extra: Obj = {}): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: { ...bootstrapLabels, ...(extra.labels ?? {}) }, annotations: bootstrapAnnotations },
    rules,
    ...(extra.aggregationRule ? { aggregationRule: extra.aggregationRule } : {}),
  } as KubeObject;
}

function clusterRoleBinding(name: string, role: string, groups: string[]): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: bootstrapLabels, annotations: bootstrapAnnotations },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  } as KubeObject;
}

const aggregate = (to: string) => ({
  clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${to}`]: 'true' } }],
});

/** The subset of the apiserver's bootstrap RBAC policy that tests and kubectl rely on. */
export function bootstrapPolicy(): KubeObject[] {
  const discoveryUrls = [
    '/api',
    '/api/*',
    '/apis',
    '/apis/*',
    '/healthz',
    '/livez',
    '/openapi',
    '/openapi/*',
    '/readyz',
    '/version',
    '/version/',
  ];
  return [
    clusterRole('cluster-admin', [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]),
    clusterRole('system:discovery', [{ nonResourceURLs: discoveryUrls, verbs: ['get'] }]),
    clusterRole('system:public-info-viewer', [
      { nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] },
    ]),
    clusterRole('system:basic-user', [
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    ]),
    clusterRole('admin', [], { aggregationRule: aggregate('admin') }),
    clusterRole('edit', [], { aggregationRule: aggregate('edit'), labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }),
    clusterRole('view', [], { aggregationRule: aggregate('view'), labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }),
    clusterRoleBinding('cluster-admin', 'cluster-admin', ['system:masters']),
    clusterRoleBinding('system:discovery', 'system:discovery', ['system:authenticated']),
    clusterRoleBinding('system:basic-user', 'system:basic-user', ['system:authenticated']),
    clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  ];
}
