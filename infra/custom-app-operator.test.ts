// Tests of the CustomAppOperator construct in a user's chart: the same install as dist/, the CRD on request, and its props.
import test from 'ava';
import { type App, Chart, Testing } from 'cdk8s';
import { CrdChart } from './crd-chart.js';
import { CustomAppOperator, type CustomAppOperatorProps } from './custom-app-operator.js';
import { OperatorChart } from './operator-chart.js';
import { testApp } from './testing/test-app.js';

type Manifest = Record<string, any>;

/** The manifests of a user's chart `platform` holding one CustomAppOperator, and its synth errors. */
function install(props?: CustomAppOperatorProps): { manifests: Manifest[]; errors: string[] } {
  const app = testApp();
  const chart = new Chart(app, 'platform');
  new CustomAppOperator(chart, 'operator', props);
  const errors = (app as App).node.findAll().flatMap((construct) => construct.node.validate());
  return { manifests: errors.length ? [] : Testing.synth(chart), errors };
}

const kinds = (manifests: Manifest[]): string[] => manifests.map((m) => `${m.kind}/${m.metadata.name}`);
/** Without the label cdk8s-plus derives from the construct path, which differs between two charts by design. */
const withoutAddress = (manifests: Manifest[]): Manifest[] =>
  manifests.map((manifest) => {
    const copy = structuredClone(manifest);
    delete copy.spec?.template?.metadata?.labels?.['cdk8s.io/metadata.addr'];
    return copy;
  });

test('GIVEN the defaults WHEN added to a user chart THEN exactly the objects OperatorChart puts in dist/, and no CRD', (t) => {
  const { manifests, errors } = install();
  t.deepEqual(errors, []);
  t.deepEqual(withoutAddress(manifests), withoutAddress(Testing.synth(new OperatorChart(testApp(), 'customapp-operator'))));
  t.false(kinds(manifests).some((kind) => kind.startsWith('CustomResourceDefinition/')));
});

test('GIVEN crd: true WHEN synthesized THEN the CRD of the CRD chart comes first, then the install', (t) => {
  const { manifests } = install({ crd: true });
  t.deepEqual(manifests[0], Testing.synth(new CrdChart(testApp(), 'crd'))[0]);
  t.deepEqual(kinds(manifests.slice(1)), kinds(install().manifests));
});

test('GIVEN createNamespace false and metrics false WHEN synthesized THEN no Namespace, metrics Service or reader ClusterRole', (t) => {
  const { manifests } = install({ namespace: 'platform-ops', createNamespace: false, metrics: false });
  t.deepEqual(kinds(manifests), [
    'ServiceAccount/customapp-operator',
    'ClusterRole/customapp-operator',
    'ClusterRoleBinding/customapp-operator',
    'Role/customapp-operator',
    'RoleBinding/customapp-operator',
    'Deployment/customapp-operator',
    'NetworkPolicy/customapp-operator',
  ]);
  for (const manifest of manifests.filter((m) => m.metadata.namespace !== undefined)) t.is(manifest.metadata.namespace, 'platform-ops');
});

test('GIVEN metrics false WHEN synthesized THEN the operator serves no /metrics: the flag off, no port, no metrics ingress', (t) => {
  const { manifests } = install({ metrics: false });
  const deployment = manifests.find((m) => m.kind === 'Deployment')!;
  const [container] = deployment.spec.template.spec.containers;
  t.true(container.args.includes('--metrics-bind-address=0'), container.args.join(' '));
  t.deepEqual(container.ports, [{ containerPort: 8081, name: 'health' }]);
  const policy = manifests.find((m) => m.kind === 'NetworkPolicy')!;
  t.deepEqual(policy.spec.ingress, [{ ports: [{ port: 8081, protocol: 'TCP' }] }]);
});
