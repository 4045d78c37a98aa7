// Tests of the synthesized charts: snapshots, plus exact assertions on the fields that matter.
import test from 'ava';
import { Testing } from 'cdk8s';
import { CrdChart } from './crd-chart.js';
import { OperatorChart } from './operator-chart.js';
import { SamplesChart } from './samples-chart.js';
import { OPERATOR_PERMISSIONS } from './permissions.js';
import { DNS1123_SUBDOMAIN } from './customapp-api.js';
import { restrictedViolations } from '../test/support/pod-security.js';

type Manifest = Record<string, any>;
const byKind = (manifests: Manifest[], kind: string): Manifest[] => manifests.filter((m) => m.kind === kind);
const one = (manifests: Manifest[], kind: string): Manifest => {
  const found = byKind(manifests, kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0]!;
};

const crdManifests = (): Manifest[] => Testing.synth(new CrdChart(Testing.app(), 'crd'));
const operatorManifests = (): Manifest[] => Testing.synth(new OperatorChart(Testing.app(), 'operator'));
const samplesManifests = (): Manifest[] => Testing.synth(new SamplesChart(Testing.app(), 'samples'));

test('each chart matches its snapshot', (t) => {
  t.snapshot(crdManifests(), 'crd chart');
  t.snapshot(operatorManifests(), 'operator chart');
  t.snapshot(samplesManifests(), 'samples chart');
});

test('the CRD is customapps.app.example.com v1, namespaced, short name ca, with the status subresource', (t) => {
  const crd = one(crdManifests(), 'CustomResourceDefinition');
  t.is(crd.apiVersion, 'apiextensions.k8s.io/v1');
  t.is(crd.metadata.name, 'customapps.app.example.com');
  t.is(crd.spec.group, 'app.example.com');
  t.is(crd.spec.scope, 'Namespaced');
  t.deepEqual(crd.spec.names.shortNames, ['ca']);
  t.is(crd.spec.names.kind, 'CustomApp');
  t.is(crd.spec.versions.length, 1);
  const [version] = crd.spec.versions;
  t.like(version, { name: 'v1', served: true, storage: true });
  t.deepEqual(version.subresources, { status: {} });
});

test('the CRD schema validates image, names, replicas and port', (t) => {
  const schema = one(crdManifests(), 'CustomResourceDefinition').spec.versions[0].schema.openAPIV3Schema;
  t.deepEqual(schema.required, ['spec']);
  const spec = schema.properties.spec;
  t.deepEqual(spec.required, ['image']);
  t.like(spec.properties.image, { type: 'string', minLength: 1 });
  for (const field of ['configMapName', 'secretName']) {
    t.like(spec.properties[field], { type: 'string', maxLength: 253, pattern: DNS1123_SUBDOMAIN }, field);
  }
  t.like(spec.properties.replicas, { type: 'integer', minimum: 0, default: 1 });
  t.is(spec.properties.replicas.maximum, undefined);
  t.like(spec.properties.port, { type: 'integer', minimum: 1, maximum: 65535 });
  t.false(spec.required.includes('port'));
});

test('the DNS-1123 pattern accepts subdomains and rejects upper case, slashes and edge dashes', (t) => {
  const pattern = new RegExp(DNS1123_SUBDOMAIN);
  for (const good of ['a', 'app-config', 'app.config.v2', '0abc']) t.true(pattern.test(good), good);
  for (const bad of ['App', 'other-ns/config', '-a', 'a-', 'a..b', '', 'a_b']) t.false(pattern.test(bad), bad);
});

test('the CRD status schema has every observed field and map-keyed conditions', (t) => {
  const status = one(crdManifests(), 'CustomResourceDefinition').spec.versions[0].schema.openAPIV3Schema.properties.status;
  t.deepEqual(Object.keys(status.properties).sort(), [
    'conditions',
    'configHash',
    'observedConfigMapName',
    'observedGeneration',
    'observedSecretName',
    'readyReplicas',
    'secretHash',
  ]);
  t.is(status.properties.conditions['x-kubernetes-list-type'], 'map');
  t.deepEqual(status.properties.conditions['x-kubernetes-list-map-keys'], ['type']);
  t.deepEqual(status.properties.conditions.items.properties.status.enum, ['True', 'False', 'Unknown']);
});

test('the printer columns are Image, ConfigMap, Ready and Age', (t) => {
  const columns = one(crdManifests(), 'CustomResourceDefinition').spec.versions[0].additionalPrinterColumns;
  t.deepEqual(columns, [
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'ConfigMap', type: 'string', jsonPath: '.spec.configMapName' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ]);
});

test('the ClusterRole grants exactly the permission table, with configmaps get, list and watch only', (t) => {
  const role = one(operatorManifests(), 'ClusterRole');
  const granted = role.rules.map((rule: Manifest) => `${rule.apiGroups.join(',')}|${rule.resources.join(',')}=${rule.verbs.join(',')}`);
  t.deepEqual(granted, [
    '|configmaps=get,list,watch',
    '|secrets=list,watch',
    'app.example.com|customapps=list,watch,patch',
    'app.example.com|customapps/status=patch',
    'app.example.com|customapps/finalizers=update',
    'apps|deployments=get,list,watch,create,update',
    '|services=get,list,watch,create,update,delete',
    '|events=create,patch',
    'coordination.k8s.io|leases=get,create,update',
  ]);
  t.is(granted.length, OPERATOR_PERMISSIONS.length);
  for (const rule of role.rules) {
    t.false(rule.verbs.includes('*'), 'no wildcard verbs');
    t.false(rule.resources.includes('*'), 'no wildcard resources');
    t.is(rule.resourceNames, undefined);
  }
});

test('the ClusterRoleBinding binds the ClusterRole to the operator ServiceAccount in customapp-system', (t) => {
  const manifests = operatorManifests();
  const account = one(manifests, 'ServiceAccount');
  const binding = one(manifests, 'ClusterRoleBinding');
  t.is(one(manifests, 'Namespace').metadata.name, 'customapp-system');
  t.is(account.metadata.namespace, 'customapp-system');
  t.deepEqual(binding.roleRef, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    name: one(manifests, 'ClusterRole').metadata.name,
  });
  t.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: account.metadata.name, namespace: 'customapp-system' }]);
});

test('the operator Deployment runs leader-elected with metrics and probe endpoints and real resources', (t) => {
  const deployment = one(operatorManifests(), 'Deployment');
  t.is(deployment.spec.replicas, 1);
  const pod = deployment.spec.template.spec;
  t.is(pod.serviceAccountName, 'customapp-operator');
  t.true(pod.automountServiceAccountToken);
  t.is(pod.containers.length, 1);
  const [container] = pod.containers;
  t.deepEqual(container.args, ['--leader-elect', '--metrics-bind-address=:8080', '--health-probe-bind-address=:8081']);
  t.like(container.livenessProbe, { httpGet: { path: '/healthz', port: 8081 } });
  t.like(container.readinessProbe, { httpGet: { path: '/readyz', port: 8081 } });
  t.deepEqual(container.resources, { requests: { cpu: '50m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } });
  t.regex(container.image, /^[^:]+:v\d+\.\d+\.\d+$/);
  t.deepEqual(deployment.spec.selector, { matchLabels: { 'app.kubernetes.io/name': 'customapp-operator' } });
});

test('the operator Deployment is hardened: read-only root, non-root, no escalation, no capabilities, seccomp', (t) => {
  const pod = one(operatorManifests(), 'Deployment').spec.template.spec;
  t.like(pod.containers[0].securityContext, {
    runAsNonRoot: true,
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    privileged: false,
    capabilities: { drop: ['ALL'] },
  });
  t.deepEqual(pod.securityContext.seccompProfile, { type: 'RuntimeDefault' });
  t.deepEqual(restrictedViolations(pod), []);
});

test('the operator chart honours its props: image, replicas and permissions', (t) => {
  const manifests = Testing.synth(
    new OperatorChart(Testing.app(), 'operator', {
      image: 'registry.local/op:v9.9.9',
      replicas: 2,
      permissions: [OPERATOR_PERMISSIONS[0]!],
    }),
  );
  const deployment = one(manifests, 'Deployment');
  t.is(deployment.spec.replicas, 2);
  t.is(deployment.spec.template.spec.containers[0].image, 'registry.local/op:v9.9.9');
  t.is(one(manifests, 'ClusterRole').rules.length, 1);
});

test('the samples chart holds a ConfigMap, a Secret and a CustomApp that references them', (t) => {
  const manifests = samplesManifests();
  const configMap = one(manifests, 'ConfigMap');
  const secret = one(manifests, 'Secret');
  const app = one(manifests, 'CustomApp');
  t.is(app.apiVersion, 'app.example.com/v1');
  t.is(app.spec.configMapName, configMap.metadata.name);
  t.is(app.spec.secretName, secret.metadata.name);
  t.truthy(app.spec.image);
  for (const manifest of manifests) t.is(manifest.metadata.namespace, 'default');
});
