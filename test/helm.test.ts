// The Helm chart in dist-helm/ with the real helm binary: it lints, its defaults render exactly dist/, its values render
// what the operator chart synthesizes with the same props, and `helm install` into envtest installs a working operator.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { Testing } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { OperatorChart, type OperatorChartProps } from '../infra/operator-chart.js';
import { CRD_NAME, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../api/customapp.js';
import { DEPLOYMENTS } from '../operator/kube/resources.js';
import type { Deployment } from '../operator/kube/objects.js';
import { helmBinary, runHelm } from './support/helm.js';
import { createAll, eventually, getIfExists, objects, startTestOperator, targetSuite } from './support/operator-harness.js';
import { testApp } from '../infra/testing/test-app.js';

const CHART = resolve(import.meta.dirname, '../dist-helm');
const DIST = resolve(import.meta.dirname, '../dist');
const RELEASE = 'customapp-operator';

type Manifest = Record<string, any>;

/** The documents of a YAML stream, empty ones (a template whose condition is false) left out. */
const documentsOf = (text: string): Manifest[] =>
  parseAllDocuments(text)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
/** Manifests by `Kind namespace/name`, sorted: helm renders in its install order, cdk8s in construct order. */
const byKey = (manifests: readonly Manifest[]): [string, Manifest][] =>
  manifests
    .map((manifest): [string, Manifest] => [`${manifest.kind} ${manifest.metadata.namespace ?? ''}/${manifest.metadata.name}`, manifest])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

async function helmTemplate(t: { is(a: unknown, b: unknown, message?: string): void }, ...args: string[]): Promise<Manifest[]> {
  const rendered = await runHelm(['template', RELEASE, CHART, ...args]);
  t.is(rendered.code, 0, rendered.stderr);
  return documentsOf(rendered.stdout);
}

test.before('the helm binary is built (once; cached under ~/.cache/customapp-operator/helm)', async (t) => {
  t.timeout(1_800_000);
  await helmBinary();
});

test('helm lint --strict passes', async (t) => {
  const linted = await runHelm(['lint', '--strict', CHART]);
  t.is(linted.code, 0, linted.stdout + linted.stderr);
  t.regex(linted.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
});

test('helm template with the default values renders exactly dist/ (the CRD from crds/ with --include-crds)', async (t) => {
  const rendered = await helmTemplate(t, '--include-crds');
  const dist = ['customapp-crd.k8s.yaml', 'customapp-operator.k8s.yaml'].flatMap((file) =>
    documentsOf(readFileSync(resolve(DIST, file), 'utf8')),
  );
  t.deepEqual(byKey(rendered), byKey(dist));
});

const VALUES: readonly { readonly set: readonly string[]; readonly props: OperatorChartProps }[] = [
  {
    set: ['--set', 'replicas=3,image=registry.local/op:v2,namespace=ops', '--set', 'workloads={rollouts,statefulsets}'],
    props: { replicas: 3, image: 'registry.local/op:v2', operatorNamespace: 'ops', workloads: ['rollouts', 'statefulsets'] },
  },
  {
    set: ['--set', 'replicas=2,serviceMonitor.enabled=true', '--set', 'workloads={deployments,daemonsets}'],
    props: { replicas: 2, serviceMonitor: true, workloads: ['deployments', 'daemonsets'] },
  },
  { set: ['--set', 'replicas=1,serviceMonitor.enabled=true'], props: { serviceMonitor: true } },
  { set: ['--set', 'sharding=true'], props: { sharding: true } },
  { set: ['--set', 'sharding=true,replicas=1'], props: { sharding: true, replicas: 1 } },
  { set: ['--set', 'namespaces={a,b}'], props: { namespaces: ['a', 'b'] } },
  {
    set: ['--set', 'namespaces={team-b,ops},namespace=ops,sharding=true', '--set', 'workloads={statefulsets,deployments}'],
    props: { namespaces: ['team-b', 'ops'], operatorNamespace: 'ops', sharding: true, workloads: ['statefulsets', 'deployments'] },
  },
  {
    set: ['--set', 'namespaces={a,b},sharding=true,replicas=2', '--set', 'workloads={rollouts,deployments,daemonsets}'],
    props: { namespaces: ['a', 'b'], sharding: true, replicas: 2, workloads: ['rollouts', 'deployments', 'daemonsets'] },
  },
];

for (const { set, props } of VALUES) {
  test(`helm template ${set.filter((arg) => arg !== '--set').join(' ')} renders what OperatorChart synthesizes with the same props`, async (t) => {
    const rendered = await helmTemplate(t, ...set);
    t.deepEqual(byKey(rendered), byKey(Testing.synth(new OperatorChart(testApp(), OPERATOR_NAME, props))));
  });
}

test('helm refuses values outside values.schema.json, naming the value', async (t) => {
  for (const [value, field] of [
    ['replicas=0', 'replicas'],
    ['workloads={pods}', 'workloads'],
    ['namespace=Bad_Name', 'namespace'],
    ['replica=2', 'replica'],
    ['sharding=yes', 'sharding'],
    ['namespaces={Bad_Name}', 'namespaces'],
    ['namespaces={a,a}', 'namespaces'],
  ] as const) {
    const refused = await runHelm(['template', RELEASE, CHART, '--set', value]);
    t.not(refused.code, 0, value);
    t.regex(refused.stderr, new RegExp(`values don't meet the specifications of the schema[\\s\\S]*${field}`), value);
  }
});

// helm install needs envtest: a real API server applies the chart's CRD and runs the garbage collector on uninstall.
// Nothing is installed beforehand: the chart installs it all.
const { onTarget: onEnvtest, scenario } = targetSuite(test, 'envtest', { envtest: { controllerManager: true }, install: async () => {} });

onEnvtest(
  '[envtest] helm install creates the CRD and the operator objects, the operator works with their RBAC, an upgrade to 2 replicas adds the PodDisruptionBudget, and uninstall removes them but the CRD',
  async (t) => {
    const { cluster, admin } = scenario;
    const installed = await runHelm(['install', RELEASE, CHART], cluster.kubeconfigPath);
    t.is(installed.code, 0, installed.stderr);
    t.regex(installed.stdout, /STATUS: deployed/);
    const get = async (...args: string[]) => cluster.kubectl(['get', ...args, '-o', 'name']);
    t.is((await get('crd', CRD_NAME)).stdout.trim(), `customresourcedefinition.apiextensions.k8s.io/${CRD_NAME}`);
    for (const [kind, name] of [
      ['namespace', OPERATOR_NAMESPACE],
      ['clusterrole', OPERATOR_NAME],
      ['clusterrolebinding', OPERATOR_NAME],
      ['clusterrole', 'customapp-metrics-reader'],
    ]) {
      t.is((await get(kind!, name!)).code, 0, `${kind} ${name}`);
    }
    for (const [kind, name] of [
      ['serviceaccount', OPERATOR_NAME],
      ['role', OPERATOR_NAME],
      ['rolebinding', OPERATOR_NAME],
      ['deployment', OPERATOR_NAME],
      ['service', 'customapp-operator-metrics'],
      ['networkpolicy', OPERATOR_NAME],
    ]) {
      t.is((await get('-n', OPERATOR_NAMESPACE, kind!, name!)).code, 0, `${kind} ${name}`);
    }
    t.not((await get('-n', OPERATOR_NAMESPACE, 'pdb', OPERATOR_NAME)).code, 0, 'one replica: no budget');

    // The operator, as the chart's ServiceAccount: what the chart granted is enough to reconcile a CustomApp.
    const running = await startTestOperator(cluster);
    try {
      const app = await scenario.createNamespace('helm-app', objects.customApp('helm-app', 'web', { image: 'example/web:1' }));
      await app.deploymentCreated('web');
    } finally {
      await running.operator.stop();
    }

    const upgraded = await runHelm(['upgrade', RELEASE, CHART, '--set', 'replicas=2'], cluster.kubeconfigPath);
    t.is(upgraded.code, 0, upgraded.stderr);
    t.is((await get('-n', OPERATOR_NAMESPACE, 'pdb', OPERATOR_NAME)).stdout.trim(), `poddisruptionbudget.policy/${OPERATOR_NAME}`);
    t.is((await getIfExists<Deployment>(admin, DEPLOYMENTS, OPERATOR_NAMESPACE, OPERATOR_NAME))?.spec.replicas, 2);

    const uninstalled = await runHelm(['uninstall', RELEASE], cluster.kubeconfigPath);
    t.is(uninstalled.code, 0, uninstalled.stderr);
    await eventually(
      'the operator Deployment is gone',
      async () => (await getIfExists(admin, DEPLOYMENTS, OPERATOR_NAMESPACE, OPERATOR_NAME)) === undefined,
    );
    await eventually('the ClusterRole is gone', async () => (await get('clusterrole', OPERATOR_NAME)).code !== 0);
    t.is((await get('crd', CRD_NAME)).code, 0, 'Helm never deletes what crds/ installed');
  },
);

onEnvtest(
  '[envtest] helm install with namespaces puts the grants in a Role there, the operator works with them, its identity cannot list Secrets elsewhere, and uninstall removes the Role',
  async (t) => {
    const { cluster, admin } = scenario;
    const get = async (...args: string[]) => cluster.kubectl(['get', ...args, '-o', 'name']);
    // The install before this one uninstalled the chart's namespace: a namespace being deleted takes no new objects.
    await eventually(
      `namespace ${OPERATOR_NAMESPACE} of an earlier install is gone`,
      async () => (await get('namespace', OPERATOR_NAMESPACE)).code !== 0,
      120_000,
    );
    const watched = await scenario.createNamespace('helm-watched');
    await scenario.createNamespace('helm-other');
    const installed = await runHelm(
      ['install', RELEASE, CHART, '--set', 'namespaces={helm-watched}', '--set', 'workloads={statefulsets}'],
      cluster.kubeconfigPath,
    );
    t.is(installed.code, 0, installed.stderr);
    for (const kind of ['role', 'rolebinding'])
      t.is((await get('-n', 'helm-watched', kind, OPERATOR_NAME)).code, 0, `${kind} in helm-watched`);
    t.not((await get('-n', 'helm-other', 'role', OPERATOR_NAME)).code, 0, 'no Role outside the watched namespaces');

    const running = await startTestOperator(cluster, { namespaces: ['helm-watched'], workloads: ['statefulsets'] });
    try {
      await createAll(admin, objects.customApp('helm-watched', 'web', { image: 'example/web:1' }));
      await watched.deploymentCreated('web');
    } finally {
      await running.operator.stop();
    }
    const { kubeConfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await t.notThrowsAsync(core.listNamespacedSecret({ namespace: 'helm-watched' }), 'the Role in the watched namespace reads Secrets');
    const denied = await t.throwsAsync(core.listNamespacedSecret({ namespace: 'helm-other' }));
    t.is((denied as { code?: number }).code, 403, 'the chart grants no read of Secrets outside its namespaces');

    const uninstalled = await runHelm(['uninstall', RELEASE], cluster.kubeconfigPath);
    t.is(uninstalled.code, 0, uninstalled.stderr);
    await eventually('the watched namespace Role is gone', async () => (await get('-n', 'helm-watched', 'role', OPERATOR_NAME)).code !== 0);
  },
);
