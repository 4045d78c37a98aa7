// The operator chart's `namespaces` prop: Roles in exactly those namespaces, a ClusterRole that reads nothing, and --namespaces.
import test from 'ava';
import { Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { OperatorChart, type OperatorChartProps } from './operator-chart.js';
import { testApp } from './testing/test-app.js';

type Manifest = Record<string, any>;

function synth(props: OperatorChartProps): Manifest[] {
  return Testing.synth(new OperatorChart(testApp(), 'operator', props));
}

const rbacKinds = new Set(['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
const SUBJECTS = [{ kind: 'ServiceAccount', name: 'customapp-operator', namespace: 'customapp-system' }];
const LABELS = {
  'app.kubernetes.io/name': 'customapp-operator',
  'app.kubernetes.io/component': 'operator',
  'app.kubernetes.io/part-of': 'customapp-operator',
  'app.kubernetes.io/managed-by': 'cdk8s',
};

/** What a watched namespace's Role holds: everything the operator reads and writes for the CustomApps there. */
const WATCHED_RULES = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['list', 'watch'] },
  { apiGroups: ['app.example.com'], resources: ['customapps'], verbs: ['list', 'watch', 'update', 'patch'] },
  { apiGroups: ['app.example.com'], resources: ['customapps/status'], verbs: ['update', 'patch'] },
  { apiGroups: ['app.example.com'], resources: ['customapps/finalizers'], verbs: ['update'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
  { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];
const LEASE_RULES = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: ['customapp-operator-leader'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
];

test('GIVEN namespaces team-a and team-b WHEN synthesized THEN the RBAC is exactly these YAML documents', (t) => {
  const rbac = synth({ namespaces: ['team-a', 'team-b'] }).filter((manifest) => rbacKinds.has(manifest.kind));
  const role = (namespace: string, rules: unknown[]): Manifest[] => [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { labels: LABELS, name: 'customapp-operator', namespace },
      rules,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { labels: LABELS, name: 'customapp-operator', namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'customapp-operator' },
      subjects: SUBJECTS,
    },
  ];
  t.deepEqual(rbac, [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { labels: LABELS, name: 'customapp-operator' },
      rules: [
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { labels: LABELS, name: 'customapp-operator' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'customapp-operator' },
      subjects: SUBJECTS,
    },
    ...role('customapp-system', LEASE_RULES),
    ...role('team-a', WATCHED_RULES),
    ...role('team-b', WATCHED_RULES),
    // The metrics reader is for scrapers, bound to no one: it grants get on /metrics alone.
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { labels: LABELS, name: 'customapp-metrics-reader' },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    },
  ]);
});

test('GIVEN namespaces THEN no ClusterRole of the operator names a Secret, a ConfigMap or any namespaced resource', (t) => {
  const yaml = stringify(
    synth({ namespaces: ['team-a'], workloads: ['statefulsets', 'deployments'] }).filter((m) => m.kind === 'ClusterRole'),
  );
  for (const resource of ['secrets', 'configmaps', 'customapps', 'deployments', 'services', 'events', 'statefulsets', 'leases']) {
    t.false(yaml.includes(resource), `a ClusterRole names ${resource}`);
  }
});

test('GIVEN namespaces and workloads THEN the workload grants go into each watched namespace Role, after the table', (t) => {
  const manifests = synth({ namespaces: ['team-a', 'team-b'], workloads: ['statefulsets', 'deployments'] });
  for (const namespace of ['team-a', 'team-b']) {
    const role = manifests.find((m) => m.kind === 'Role' && m.metadata.namespace === namespace)!;
    t.deepEqual(role.rules, [
      ...WATCHED_RULES,
      { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['list', 'watch', 'patch'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['patch'] },
    ]);
  }
  const args: string[] = manifests.find((m) => m.kind === 'Deployment')!.spec.template.spec.containers[0].args;
  t.deepEqual(
    args.filter((arg) => arg.startsWith('--workloads') || arg.startsWith('--namespace')),
    ['--workloads=statefulsets,deployments', '--namespaces=team-a,team-b'],
  );
});

test("GIVEN the operator's own namespace among the watched THEN its one Role holds the Lease's rules and the watched ones", (t) => {
  const roles = synth({ namespaces: ['customapp-system', 'team-a'] }).filter((m) => m.kind === 'Role');
  t.deepEqual(
    roles.map((role) => [role.metadata.namespace, role.rules.length]),
    [
      ['customapp-system', LEASE_RULES.length + WATCHED_RULES.length],
      ['team-a', WATCHED_RULES.length],
    ],
  );
  t.deepEqual(roles[0]!.rules, [...WATCHED_RULES, ...LEASE_RULES], 'in the order of the permission table');
});

test('GIVEN no namespaces THEN the operator watches every namespace: no --namespaces and one Role, its Lease', (t) => {
  const manifests = synth({});
  t.deepEqual(
    manifests.filter((m) => m.kind === 'Role').map((role) => role.metadata.namespace),
    ['customapp-system'],
  );
  const args: string[] = manifests.find((m) => m.kind === 'Deployment')!.spec.template.spec.containers[0].args;
  t.false(args.some((arg) => arg.startsWith('--namespace')));
});

const invalid: Array<[readonly string[], string]> = [
  [[], 'CustomAppOperator namespaces: "" names no namespace (leave it out to watch all namespaces)'],
  [['team-a', 'Team_B'], 'CustomAppOperator namespaces: "Team_B" is not a namespace name (a DNS-1123 label) in "team-a,Team_B"'],
  [['team-a', 'team-a'], 'CustomAppOperator namespaces: "team-a,team-a" names the namespace "team-a" twice'],
];
for (const [namespaces, message] of invalid) {
  test(`GIVEN namespaces ${JSON.stringify(namespaces)} THEN the synth fails quoting them`, (t) => {
    t.throws(() => synth({ namespaces }), { message });
  });
}
