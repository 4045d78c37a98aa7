// Tests of the synthesized charts: snapshots, plus exact assertions on the fields that matter.
import test from 'ava';
import { Testing } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { CrdChart } from './crd-chart.js';
import { OperatorChart } from './operator-chart.js';
import { SamplesChart } from './samples-chart.js';
import { OPERATOR_PERMISSIONS } from './permissions.js';
import { CUSTOM_APP_SCHEMA, DNS1123_SUBDOMAIN, MAX_WHOLE_QUANTITY, RESOURCE_QUANTITY } from '../api/customapp.js';
import { restrictedViolations } from '../test/support/pod-security.js';
import { testApp } from './testing/test-app.js';

type Manifest = Record<string, any>;
const byKind = (manifests: Manifest[], kind: string): Manifest[] => manifests.filter((m) => m.kind === kind);
const one = (manifests: Manifest[], kind: string, name?: string): Manifest => {
  const found = byKind(manifests, kind).filter((m) => name === undefined || m.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` "${name}"` : ''}, found ${found.length}`);
  return found[0]!;
};

const crdManifests = (): Manifest[] => Testing.synth(new CrdChart(testApp(), 'crd'));
const operatorManifests = (): Manifest[] => Testing.synth(new OperatorChart(testApp(), 'operator'));
const samplesManifests = (): Manifest[] => Testing.synth(new SamplesChart(testApp(), 'samples'));

test('each chart matches its snapshot', (t) => {
  t.snapshot(crdManifests(), 'crd chart');
  t.snapshot(operatorManifests(), 'operator chart');
  t.snapshot(samplesManifests(), 'samples chart');
});

test('the CRD is customapps.app.example.com v1, namespaced, short name ca, with the status and scale subresources', (t) => {
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
  t.deepEqual(version.subresources, {
    status: {},
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
  });
});

test("the CRD's schema is api/'s CUSTOM_APP_SCHEMA field for field: the conversion to cdk8s' types loses none", (t) => {
  const schema = one(crdManifests(), 'CustomResourceDefinition').spec.versions[0].schema.openAPIV3Schema;
  t.deepEqual(schema, JSON.parse(JSON.stringify(CUSTOM_APP_SCHEMA)));
});

test('the CRD schema takes each quantity of spec.resources as a string of the pattern or a whole number (x-kubernetes-int-or-string)', (t) => {
  const resources = one(crdManifests(), 'CustomResourceDefinition').spec.versions[0].schema.openAPIV3Schema.properties.spec.properties
    .resources;
  for (const section of ['requests', 'limits']) {
    for (const name of ['cpu', 'memory']) {
      const quantity = resources.properties[section].properties[name];
      t.like(quantity, { 'x-kubernetes-int-or-string': true, pattern: RESOURCE_QUANTITY, minimum: 0, maximum: MAX_WHOLE_QUANTITY }, name);
      t.is(quantity.type, undefined, `${section}.${name}: an int-or-string node has no type`);
    }
  }
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
  t.like(spec.properties.replicas, { type: 'integer', format: 'int32', minimum: 0 });
  t.is(spec.properties.replicas.maximum, undefined);
  t.false('default' in spec.properties.replicas, 'a default would fight an HPA that scales the Deployment');
  t.like(spec.properties.port, { type: 'integer', minimum: 1, maximum: 65535 });
  t.false(spec.required.includes('port'));
});

test('the DNS-1123 pattern accepts subdomains and rejects upper case, slashes and edge dashes', (t) => {
  const pattern = new RegExp(DNS1123_SUBDOMAIN);
  for (const good of ['a', 'app-config', 'app.config.v2', '0abc']) t.true(pattern.test(good), good);
  for (const bad of ['App', 'other-ns/config', '-a', 'a-', 'a..b', '', 'a_b']) t.false(pattern.test(bad), bad);
});

test('the CRD schema validates spec.configMaps and spec.secrets: unique names, absolute mountPath, at most 16, keys a set', (t) => {
  const spec = one(crdManifests(), 'CustomResourceDefinition').spec.versions[0].schema.openAPIV3Schema.properties.spec;
  for (const field of ['configMaps', 'secrets']) {
    const list = spec.properties[field];
    t.like(list, { type: 'array', maxItems: 16, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }, field);
    t.deepEqual(list.items.required, ['name'], field);
    t.like(list.items.properties.name, { type: 'string', maxLength: 253, pattern: DNS1123_SUBDOMAIN }, field);
    t.like(list.items.properties.mountPath, { type: 'string', pattern: '^/' }, field);
    t.like(list.items.properties.keys, { type: 'array', maxItems: 64, 'x-kubernetes-list-type': 'set' }, field);
    t.is(list.items.properties.keys.xKubernetesListType, undefined, `${field}: the API server reads only the JSON spelling`);
    t.like(list.items.properties.optional, { type: 'boolean' }, field);
  }
});

test('the CRD status schema has every observed field and map-keyed conditions', (t) => {
  const status = one(crdManifests(), 'CustomResourceDefinition').spec.versions[0].schema.openAPIV3Schema.properties.status;
  t.deepEqual(Object.keys(status.properties).sort(), [
    'conditions',
    'configHash',
    'lastRollout',
    'observedConfigMapName',
    'observedConfigMaps',
    'observedGeneration',
    'observedSecretName',
    'observedSecrets',
    'pendingRollout',
    'readyReplicas',
    'replicas',
    'secretHash',
    'selector',
  ]);
  t.like(status.properties.replicas, { type: 'integer', format: 'int32' });
  t.like(status.properties.selector, { type: 'string' });
  t.deepEqual(status.properties.lastRollout.required, ['trigger', 'startTime', 'result']);
  t.deepEqual(status.properties.lastRollout.properties.trigger.enum, ['ConfigMap', 'Secret', 'Spec']);
  t.deepEqual(status.properties.lastRollout.properties.result.enum, ['InProgress', 'Succeeded', 'Failed']);
  t.deepEqual(status.properties.pendingRollout.properties.reason.enum, ['Queued', 'Flapping', 'Paused', 'Debouncing']);
  t.is(status.properties.conditions['x-kubernetes-list-type'], 'map');
  t.deepEqual(status.properties.conditions['x-kubernetes-list-map-keys'], ['type']);
  t.deepEqual(status.properties.conditions.items.properties.status.enum, ['True', 'False', 'Unknown']);
});

test('the CRD schema validates spec.rollout and spec.readinessPath (which needs port), with their defaults', (t) => {
  const spec = one(crdManifests(), 'CustomResourceDefinition').spec.versions[0].schema.openAPIV3Schema.properties.spec;
  const rollout = spec.properties.rollout;
  t.like(rollout.properties.debounceSeconds, { type: 'integer', minimum: 0, maximum: 3600, default: 0 });
  t.like(rollout.properties.paused, { type: 'boolean', default: false });
  t.like(rollout.properties.progressDeadlineSeconds, { type: 'integer', minimum: 1 });
  t.is(rollout.properties.progressDeadlineSeconds.default, undefined, "unset means Kubernetes' 600, set explicitly by the operator");
  t.like(spec.properties.readinessPath, { type: 'string', pattern: '^/' });
  t.deepEqual(spec.anyOf, [{ not: { required: ['readinessPath'] } }, { required: ['port'] }], 'readinessPath needs port');
});

test('the printer columns are Image, ConfigMap, Ready, Rollout, Waiting and Age', (t) => {
  const columns = one(crdManifests(), 'CustomResourceDefinition').spec.versions[0].additionalPrinterColumns;
  t.deepEqual(columns, [
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'ConfigMap', type: 'string', jsonPath: '.spec.configMapName' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Rollout', type: 'string', jsonPath: '.status.lastRollout.result' },
    { name: 'Waiting', type: 'string', jsonPath: '.status.pendingRollout.reason' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ]);
});

/** `group|resource=verbs`, with `@names` when the rule is limited to some names. */
const ruleLabel = (rule: Manifest): string =>
  `${rule.apiGroups.join(',')}|${rule.resources.join(',')}=${rule.verbs.join(',')}${rule.resourceNames ? `@${rule.resourceNames.join(',')}` : ''}`;

test('the ClusterRole grants exactly the cluster-wide rows of the permission table, and nothing on leases', (t) => {
  const role = one(operatorManifests(), 'ClusterRole', 'customapp-operator');
  const granted = role.rules.map(ruleLabel);
  t.deepEqual(granted, [
    '|configmaps=get,list,watch',
    '|secrets=list,watch',
    'app.example.com|customapps=list,watch,update,patch',
    'app.example.com|customapps/status=update,patch',
    'app.example.com|customapps/finalizers=update',
    'apps|deployments=get,list,watch,create,update',
    '|services=get,list,watch,create,update,delete',
    '|events=create,patch',
    'authentication.k8s.io|tokenreviews=create',
    'authorization.k8s.io|subjectaccessreviews=create',
  ]);
  t.is(granted.length, OPERATOR_PERMISSIONS.filter((permission) => permission.scope !== 'operator-namespace').length);
  for (const rule of role.rules) {
    t.false(rule.verbs.includes('*'), 'no wildcard verbs');
    t.false(rule.resources.includes('*'), 'no wildcard resources');
    t.is(rule.resourceNames, undefined);
  }
});

test('the Role in customapp-system grants get and update on the operator Lease by name, and create (which resourceNames cannot limit)', (t) => {
  const role = one(operatorManifests(), 'Role', 'customapp-operator');
  t.is(role.metadata.namespace, 'customapp-system');
  t.deepEqual(role.rules, [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: ['customapp-operator-leader'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
  ]);
  t.is(role.rules.length, OPERATOR_PERMISSIONS.filter((permission) => permission.scope === 'operator-namespace').length);
});

test('the bindings give the operator ServiceAccount in customapp-system the ClusterRole everywhere and the Role in its namespace', (t) => {
  const manifests = operatorManifests();
  const account = one(manifests, 'ServiceAccount');
  const subjects = [{ kind: 'ServiceAccount', name: account.metadata.name, namespace: 'customapp-system' }];
  t.is(one(manifests, 'Namespace').metadata.name, 'customapp-system');
  t.is(account.metadata.namespace, 'customapp-system');
  const clusterBinding = one(manifests, 'ClusterRoleBinding');
  t.deepEqual(clusterBinding.roleRef, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    name: one(manifests, 'ClusterRole', 'customapp-operator').metadata.name,
  });
  t.deepEqual(clusterBinding.subjects, subjects);
  const binding = one(manifests, 'RoleBinding');
  t.is(binding.metadata.namespace, 'customapp-system');
  t.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: one(manifests, 'Role').metadata.name });
  t.deepEqual(binding.subjects, subjects);
});

test('installed into another namespace, the Role, its binding and the leader-election namespace all follow it', (t) => {
  const manifests = Testing.synth(new OperatorChart(testApp(), 'operator', { operatorNamespace: 'ops' }));
  t.is(one(manifests, 'Role').metadata.namespace, 'ops');
  t.is(one(manifests, 'RoleBinding').metadata.namespace, 'ops');
  t.deepEqual(one(manifests, 'RoleBinding').subjects, [{ kind: 'ServiceAccount', name: 'customapp-operator', namespace: 'ops' }]);
  t.true(one(manifests, 'Deployment').spec.template.spec.containers[0].args.includes('--leader-election-namespace=ops'));
});

test('the operator Deployment runs leader-elected with HTTPS metrics on 8443, HTTP probes on 8081, and real resources', (t) => {
  const deployment = one(operatorManifests(), 'Deployment');
  t.is(deployment.spec.replicas, 1);
  const pod = deployment.spec.template.spec;
  t.is(pod.serviceAccountName, 'customapp-operator');
  t.true(pod.automountServiceAccountToken);
  t.is(pod.containers.length, 1);
  const [container] = pod.containers;
  t.deepEqual(container.args, [
    '--leader-elect',
    '--leader-election-namespace=customapp-system',
    '--metrics-bind-address=:8443',
    '--health-probe-bind-address=:8081',
  ]);
  t.deepEqual(container.ports, [
    { containerPort: 8443, name: 'metrics' },
    { containerPort: 8081, name: 'health' },
  ]);
  t.like(container.livenessProbe, { httpGet: { path: '/healthz', port: 8081 }, timeoutSeconds: 5, periodSeconds: 10, failureThreshold: 3 });
  t.like(container.readinessProbe, { httpGet: { path: '/readyz', port: 8081 }, timeoutSeconds: 5 });
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
    new OperatorChart(testApp(), 'operator', {
      image: 'registry.local/op:v9.9.9',
      replicas: 2,
      permissions: [OPERATOR_PERMISSIONS[0]!],
    }),
  );
  const deployment = one(manifests, 'Deployment');
  t.is(deployment.spec.replicas, 2);
  t.is(deployment.spec.template.spec.containers[0].image, 'registry.local/op:v9.9.9');
  t.is(one(manifests, 'ClusterRole', 'customapp-operator').rules.length, 1);
  t.deepEqual(one(manifests, 'Role', 'customapp-operator').rules, [], 'the one row given is cluster-wide');
});

test('a PodDisruptionBudget of maxUnavailable 1 comes with replicas >= 2, and none with one replica', (t) => {
  t.deepEqual(byKind(operatorManifests(), 'PodDisruptionBudget'), [], 'with one replica a budget would block every drain');
  for (const replicas of [2, 3]) {
    const manifests = Testing.synth(new OperatorChart(testApp(), 'operator', { replicas }));
    t.deepEqual(one(manifests, 'PodDisruptionBudget'), {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: {
        name: 'customapp-operator',
        namespace: 'customapp-system',
        labels: one(manifests, 'Deployment').metadata.labels,
      },
      spec: {
        maxUnavailable: 1,
        selector: { matchLabels: one(manifests, 'Deployment').spec.selector.matchLabels },
        unhealthyPodEvictionPolicy: 'AlwaysAllow',
      },
    });
  }
});

test('the ServiceMonitor is off by default; on, it scrapes the metrics Service over HTTPS with the scraper token', (t) => {
  t.deepEqual(byKind(operatorManifests(), 'ServiceMonitor'), []);
  const manifests = Testing.synth(new OperatorChart(testApp(), 'operator', { serviceMonitor: true }));
  const service = one(manifests, 'Service', 'customapp-operator-metrics');
  t.deepEqual(one(manifests, 'ServiceMonitor'), {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: 'customapp-operator-metrics', namespace: 'customapp-system', labels: service.metadata.labels },
    spec: {
      selector: { matchLabels: service.metadata.labels },
      namespaceSelector: { matchNames: ['customapp-system'] },
      endpoints: [
        {
          port: 'https',
          scheme: 'https',
          path: '/metrics',
          bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
          tlsConfig: { insecureSkipVerify: true },
        },
      ],
    },
  });
  const tuned = Testing.synth(
    new OperatorChart(testApp(), 'operator', {
      serviceMonitor: {
        labels: { release: 'prometheus' },
        interval: '30s',
        tlsConfig: { serverName: 'op', ca: { configMap: { name: 'ca', key: 'ca.crt' } } },
      },
    }),
  );
  const monitor = one(tuned, 'ServiceMonitor');
  t.is(monitor.metadata.labels.release, 'prometheus');
  t.deepEqual(monitor.spec.selector.matchLabels, service.metadata.labels, 'the labels mark the monitor, not the Service it selects');
  t.like(monitor.spec.endpoints[0], { interval: '30s', tlsConfig: { serverName: 'op', ca: { configMap: { name: 'ca', key: 'ca.crt' } } } });
  t.false('insecureSkipVerify' in monitor.spec.endpoints[0].tlsConfig);
});

test("the metrics Service serves https 8443 to the operator pods' metrics port", (t) => {
  const manifests = operatorManifests();
  const service = one(manifests, 'Service', 'customapp-operator-metrics');
  t.is(service.metadata.namespace, 'customapp-system');
  t.deepEqual(service.spec.selector, one(manifests, 'Deployment').spec.selector.matchLabels);
  t.deepEqual(service.spec.ports, [{ name: 'https', port: 8443, protocol: 'TCP', targetPort: 'metrics' }]);
  t.is(service.spec.type, undefined, 'ClusterIP');
});

test('customapp-metrics-reader grants get on /metrics and nothing else, and is bound to no one', (t) => {
  const manifests = operatorManifests();
  const role = one(manifests, 'ClusterRole', 'customapp-metrics-reader');
  t.deepEqual(role.rules, [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
  t.false(byKind(manifests, 'ClusterRoleBinding').some((binding) => binding.roleRef.name === 'customapp-metrics-reader'));
});

test('the NetworkPolicy admits only metrics from labelled namespaces and the probe port, and leaves egress open', (t) => {
  const manifests = operatorManifests();
  const policy = one(manifests, 'NetworkPolicy');
  t.is(policy.apiVersion, 'networking.k8s.io/v1');
  t.is(policy.metadata.namespace, 'customapp-system');
  t.deepEqual(policy.spec.podSelector, one(manifests, 'Deployment').spec.selector);
  t.deepEqual(policy.spec.policyTypes, ['Ingress']);
  t.deepEqual(policy.spec.ingress, [
    { from: [{ namespaceSelector: { matchLabels: { 'app.example.com/metrics': 'enabled' } } }], ports: [{ port: 8443, protocol: 'TCP' }] },
    { ports: [{ port: 8081, protocol: 'TCP' }] },
  ]);
  t.is(policy.spec.egress, undefined);
  const container = one(manifests, 'Deployment').spec.template.spec.containers[0];
  const ports = Object.fromEntries(container.ports.map((port: Manifest) => [port.name, port.containerPort]));
  t.is(policy.spec.ingress[0].ports[0].port, ports.metrics, "the metrics rule opens the container's metrics port");
  t.is(policy.spec.ingress[1].ports[0].port, ports.health, "the probe rule opens the container's probe port");
  t.is(container.livenessProbe.httpGet.port, ports.health);
  t.is(container.readinessProbe.httpGet.port, ports.health);
});

test('the NetworkPolicy props: other namespace labels and ports, restricted egress, or no policy', (t) => {
  const tuned = one(
    Testing.synth(
      new OperatorChart(testApp(), 'operator', {
        networkPolicy: {
          metricsNamespaceLabels: { 'kubernetes.io/metadata.name': 'monitoring' },
          metricsPort: 9443,
          healthPort: 9081,
          egress: [{ to: [{ ipBlock: { cidr: '10.0.0.1/32' } }], ports: [{ port: k8s.IntOrString.fromNumber(6443), protocol: 'TCP' }] }],
        },
      }),
    ),
    'NetworkPolicy',
  );
  t.deepEqual(tuned.spec.policyTypes, ['Ingress', 'Egress']);
  t.deepEqual(tuned.spec.ingress, [
    {
      from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
      ports: [{ port: 9443, protocol: 'TCP' }],
    },
    { ports: [{ port: 9081, protocol: 'TCP' }] },
  ]);
  t.deepEqual(tuned.spec.egress, [{ to: [{ ipBlock: { cidr: '10.0.0.1/32' } }], ports: [{ port: 6443, protocol: 'TCP' }] }]);
  const denyAll = one(Testing.synth(new OperatorChart(testApp(), 'operator', { networkPolicy: { egress: [] } })), 'NetworkPolicy');
  t.deepEqual(denyAll.spec.policyTypes, ['Ingress', 'Egress']);
  t.deepEqual(denyAll.spec.egress, []);
  t.deepEqual(byKind(Testing.synth(new OperatorChart(testApp(), 'operator', { networkPolicy: false })), 'NetworkPolicy'), []);
  t.throws(() => new OperatorChart(testApp(), 'operator', { networkPolicy: { metricsNamespaceLabels: {} } }), {
    message: /metricsNamespaceLabels \{\} would admit metrics scrapes from every namespace/,
  });
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

test('sharding: --sharding in place of one leader, 3 replicas, the ring Leases in its namespace only, and one pod disrupted at a time', (t) => {
  // GIVEN the operator chart with sharding on
  const manifests = Testing.synth(new OperatorChart(testApp(), 'operator', { sharding: true }));
  // THEN its replicas all work (--sharding), 3 of them
  const deployment = one(manifests, 'Deployment', 'customapp-operator');
  t.is(deployment.spec.replicas, 3);
  t.true(deployment.spec.template.spec.containers[0].args.includes('--sharding'));
  // AND the Role in its namespace (never the ClusterRole) lets each replica renew its own Lease and watch the ring's
  t.deepEqual(one(manifests, 'Role').rules.at(-1), {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'update', 'delete'],
  });
  t.false(JSON.stringify(one(manifests, 'ClusterRole', 'customapp-operator').rules).includes('leases'));
  // AND a drain takes one operator pod at a time
  const budget = one(manifests, 'PodDisruptionBudget');
  t.like(budget, { metadata: { name: 'customapp-operator', namespace: 'customapp-system' }, spec: { maxUnavailable: 1 } });
  t.deepEqual(budget.spec.selector, { matchLabels: { 'app.kubernetes.io/name': 'customapp-operator' } });
  // AND without the prop nothing of it is there
  const plain = operatorManifests();
  t.is(byKind(plain, 'PodDisruptionBudget').length, 0);
  t.false(one(plain, 'Deployment').spec.template.spec.containers[0].args.includes('--sharding'));
});

test('sharding keeps replicas the chart is given', (t) => {
  const manifests = Testing.synth(new OperatorChart(testApp(), 'operator', { sharding: true, replicas: 5 }));
  t.is(one(manifests, 'Deployment', 'customapp-operator').spec.replicas, 5);
});
