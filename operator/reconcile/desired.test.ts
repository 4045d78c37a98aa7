// Tests of the desired-state builders: the Deployment and Service a CustomApp should have, and how drift is found.
import test from 'ava';
import { CONFIG_HASH_ANNOTATION, SECRET_HASH_ANNOTATION } from '../../api/customapp.js';
import { TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import { restrictedViolations } from '../../test/support/pod-security.js';
import type { CustomApp } from '../customapp/custom-app.js';
import { DEFAULT_RESOURCES, DEPLOYMENT_OPTIONAL_KEYS, desiredDeployment, runningWith } from './desired-deployment.js';
import { projectionRef, projections } from './projections.js';
import { desiredService, serviceNameProblem } from './desired-service.js';
import { driftPaths, withDesired } from './drift.js';
import { controllingAppName, isControlledBy, labelValue } from '../customapp/labels.js';

const app = (spec: Partial<CustomApp['spec']> = {}, name = 'shop'): CustomApp => ({
  apiVersion: 'app.example.com/v1',
  kind: 'CustomApp',
  metadata: { name, namespace: 'team-a', uid: 'uid-1', generation: 1 },
  spec: { image: 'registry.example.com/shop:1.0', replicas: 2, ...spec },
});

test('the Deployment runs the image with envFrom for the ConfigMap and the Secret, and their hashes on the pod template', (t) => {
  const deployment = desiredDeployment({
    app: app({ configMapName: 'shop-config', secretName: 'shop-secret' }),
    configMap: { name: 'shop-config', hash: 'c0ffee' },
    secret: { name: 'shop-secret', hash: 'beef' },
  });
  t.is(deployment.metadata.name, 'shop');
  t.is(deployment.metadata.namespace, 'team-a');
  t.is(deployment.spec.replicas, 2);
  const container = deployment.spec.template.spec.containers[0]!;
  t.is(container.image, 'registry.example.com/shop:1.0');
  t.deepEqual(container.envFrom, [{ configMapRef: { name: 'shop-config' } }, { secretRef: { name: 'shop-secret' } }]);
  t.deepEqual(deployment.spec.template.metadata?.annotations, { [CONFIG_HASH_ANNOTATION]: 'c0ffee', [SECRET_HASH_ANNOTATION]: 'beef' });
});

test('the Deployment is controlled by its CustomApp, with blockOwnerDeletion, and carries the app.kubernetes.io labels', (t) => {
  const deployment = desiredDeployment({ app: app() });
  t.deepEqual(deployment.metadata.ownerReferences, [
    {
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      name: 'shop',
      uid: 'uid-1',
      controller: true,
      blockOwnerDeletion: true,
    },
  ]);
  t.like(deployment.metadata.labels, {
    'app.kubernetes.io/name': 'shop',
    'app.kubernetes.io/instance': 'shop',
    'app.kubernetes.io/managed-by': 'customapp-operator',
  });
  t.deepEqual(deployment.spec.selector.matchLabels, { 'app.kubernetes.io/name': 'shop', 'app.kubernetes.io/instance': 'shop' });
  t.like(deployment.spec.template.metadata?.labels ?? {}, deployment.spec.selector.matchLabels ?? {});
  t.true(isControlledBy(deployment, app()));
  t.false(isControlledBy(deployment, { metadata: { uid: 'another-uid' } }));
  t.is(controllingAppName(deployment), 'shop');
});

test('the pod passes the restricted Pod Security Standard and has requests and a memory limit', (t) => {
  const deployment = desiredDeployment({ app: app({ port: 8080 }), configMap: { name: 'c', hash: 'h' } });
  t.deepEqual(restrictedViolations(deployment.spec.template.spec), []);
  const container = deployment.spec.template.spec.containers[0]!;
  t.deepEqual(container.resources, { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } });
  t.deepEqual(container.ports, [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
  t.false(deployment.spec.template.spec.automountServiceAccountToken);
});

test('without references there is no envFrom and no hash annotation', (t) => {
  const deployment = desiredDeployment({ app: app() });
  t.is(deployment.spec.template.spec.containers[0]!.envFrom, undefined);
  t.deepEqual(deployment.spec.template.metadata?.annotations, {});
  t.is(deployment.spec.template.spec.containers[0]!.ports, undefined);
});

test('replicas unset in the spec are left out of the Deployment, so whoever scales it (an HPA) is not fought', (t) => {
  const desired = desiredDeployment({ app: app({ replicas: undefined }) });
  t.false('replicas' in desired.spec);
  const scaled = { ...desired, spec: { ...desired.spec, replicas: 7 } };
  t.deepEqual(driftPaths(scaled, desired, DEPLOYMENT_OPTIONAL_KEYS), []);
  t.is(withDesired(scaled, desired, DEPLOYMENT_OPTIONAL_KEYS).spec.replicas, 7);
  t.is(desiredDeployment({ app: app({ replicas: 0 }) }).spec.replicas, 0, 'zero is a count, not unset');
});

test('a Service exposes spec.port, selects the pods, and is owned; no port, no Service', (t) => {
  const service = desiredService(app({ port: 8080 }))!;
  t.deepEqual(service.spec.ports, [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }]);
  t.deepEqual(service.spec.selector, { 'app.kubernetes.io/name': 'shop', 'app.kubernetes.io/instance': 'shop' });
  t.is(service.metadata.ownerReferences?.[0]?.uid, 'uid-1');
  t.is(desiredService(app()), undefined);
});

test('a name that cannot name a Service is reported with the name quoted', (t) => {
  t.is(serviceNameProblem('shop'), undefined);
  t.regex(serviceNameProblem('shop.v2') ?? '', /"shop\.v2" is not a DNS-1035 label/);
  t.regex(serviceNameProblem('1shop') ?? '', /"1shop"/);
});

test('a name longer than a label value becomes a 63-character value with a digest, distinct per name', (t) => {
  const long = `${'a'.repeat(60)}.example.long-name`;
  const value = labelValue(long);
  t.true(value.length <= 63);
  t.regex(value, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
  t.not(labelValue(`${long}-2`), value);
  t.is(labelValue('short'), 'short');
});

test('drift ignores server defaults and finds changed, added and removed owned fields', (t) => {
  const desired = desiredDeployment({ app: app({ configMapName: 'c' }), configMap: { name: 'c', hash: 'h1' } });
  const live = structuredClone(desired) as unknown as Record<string, any>;
  live.metadata.resourceVersion = '42';
  live.metadata.labels.extra = 'kept';
  live.spec.strategy = { type: 'RollingUpdate' };
  live.spec.template.spec.containers[0].imagePullPolicy = 'IfNotPresent';
  live.spec.template.spec.containers[0].terminationMessagePath = '/dev/termination-log';
  live.spec.template.spec.containers[0].ports = undefined;
  t.deepEqual(driftPaths(live, desired), []);

  const rehashed = desiredDeployment({ app: app({ configMapName: 'c' }), configMap: { name: 'c', hash: 'h2' } });
  t.deepEqual(driftPaths(live, rehashed), [`spec.template.metadata.annotations.${CONFIG_HASH_ANNOTATION}`]);

  const unreferenced = desiredDeployment({ app: app() });
  t.deepEqual(driftPaths(live, unreferenced, DEPLOYMENT_OPTIONAL_KEYS), [
    `spec.template.metadata.annotations.${CONFIG_HASH_ANNOTATION}`,
    'spec.template.spec.containers[0].envFrom',
  ]);
  t.deepEqual(
    driftPaths(live, desiredDeployment({ app: app({ replicas: 3, configMapName: 'c' }), configMap: { name: 'c', hash: 'h1' } })),
    ['spec.replicas'],
  );
});

test('writing the desired fields over the live object keeps the server fields and removes dropped owned keys', (t) => {
  const desired = desiredDeployment({ app: app({ configMapName: 'c' }), configMap: { name: 'c', hash: 'h1' } });
  const live = structuredClone(desired) as unknown as Record<string, any>;
  live.metadata.resourceVersion = '42';
  live.spec.strategy = { type: 'RollingUpdate' };
  const unreferenced = desiredDeployment({ app: app({ image: 'registry.example.com/shop:2.0' }) });
  const merged = withDesired(live, unreferenced as unknown as Record<string, any>, DEPLOYMENT_OPTIONAL_KEYS);
  t.is(merged.metadata.resourceVersion, '42');
  t.deepEqual(merged.spec.strategy, { type: 'RollingUpdate' });
  t.deepEqual(merged.spec.template.metadata.annotations, {});
  t.is(merged.spec.template.spec.containers[0].image, 'registry.example.com/shop:2.0');
  t.is(merged.spec.template.spec.containers[0].envFrom, undefined, 'the containers list is replaced as a whole');
  t.deepEqual(driftPaths(merged, unreferenced, DEPLOYMENT_OPTIONAL_KEYS), []);
  t.is(live.spec.template.metadata.annotations[CONFIG_HASH_ANNOTATION], 'h1', 'the live object is not mutated');
});

test('spec.env: plain variables after envFrom, an empty value left out as the API server stores it; removing them is drift', (t) => {
  const withEnv = desiredDeployment({
    app: app({ env: [{ name: 'MODE', value: 'prod' }, { name: 'EMPTY', value: '' }, { name: 'BARE' }] }),
  });
  t.deepEqual(withEnv.spec.template.spec.containers[0]!.env, [{ name: 'MODE', value: 'prod' }, { name: 'EMPTY' }, { name: 'BARE' }]);
  const without = desiredDeployment({ app: app() });
  t.is(without.spec.template.spec.containers[0]!.env, undefined);
  t.deepEqual(driftPaths(withEnv, without, DEPLOYMENT_OPTIONAL_KEYS), ['spec.template.spec.containers[0].env']);
  t.deepEqual(driftPaths(withEnv, withEnv, DEPLOYMENT_OPTIONAL_KEYS), []);
});

test('spec.resources: as given, each quantity as the API server stores it; absent, the defaults', (t) => {
  const given = desiredDeployment({
    app: app({ resources: { requests: { cpu: '1000m', memory: '1024Mi' }, limits: { memory: '2Gi' } } }),
  });
  t.deepEqual(given.spec.template.spec.containers[0]!.resources, { requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '2Gi' } });
  t.deepEqual(desiredDeployment({ app: app() }).spec.template.spec.containers[0]!.resources, DEFAULT_RESOURCES);
});

test('spec.resources: a whole number (an unquoted YAML quantity) is written as the string the API server stores for it', (t) => {
  const given = desiredDeployment({
    app: app({ resources: { requests: { cpu: 1, memory: 1073741824 }, limits: { cpu: 2000, memory: '2Gi' } } }),
  });
  t.deepEqual(given.spec.template.spec.containers[0]!.resources, {
    requests: { cpu: '1', memory: '1073741824' },
    limits: { cpu: '2k', memory: '2Gi' },
  });
  const zero = desiredDeployment({ app: app({ resources: { requests: { cpu: 0, memory: '0' } } }) });
  t.deepEqual(zero.spec.template.spec.containers[0]!.resources, { requests: { cpu: '0', memory: '0' } }, 'zero is a quantity too');
});

test('spec.resources: a quantity or a section removed is drift (the live Deployment must lose it too)', (t) => {
  const before = desiredDeployment({ app: app({ resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2' } } }) });
  const fewer = desiredDeployment({ app: app({ resources: { requests: { memory: '1Gi' } } }) });
  t.deepEqual(driftPaths(before, fewer, DEPLOYMENT_OPTIONAL_KEYS).sort(), [
    'spec.template.spec.containers[0].resources.limits',
    'spec.template.spec.containers[0].resources.requests.cpu',
  ]);
});

test('listed ConfigMaps and Secrets: envFrom without keys, a variable per listed key, a read-only volume with items for a mountPath', (t) => {
  const shop = app({
    configMapName: 'seed-config',
    configMaps: [{ name: 'web' }, { name: 'flags', keys: ['MODE', 'LEVEL'], optional: true }, { name: 'files', mountPath: '/etc/app' }],
    secrets: [
      { name: 'tls', mountPath: '/etc/tls', keys: ['tls.crt'] },
      { name: 'db', keys: ['PASSWORD'] },
    ],
  });
  const projected = projections(shop).map((each, index) => ({ ...each, hash: index === 1 ? null : `h${index}` }));
  const deployment = desiredDeployment({ app: shop, configMap: { name: 'seed-config', hash: 'seed' }, projected });
  const container = deployment.spec.template.spec.containers[0]!;
  t.deepEqual(container.envFrom, [{ configMapRef: { name: 'seed-config' } }, { configMapRef: { name: 'web', optional: false } }]);
  t.deepEqual(container.env, [
    { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'flags', key: 'MODE', optional: true } } },
    { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'flags', key: 'LEVEL', optional: true } } },
    { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'PASSWORD', optional: false } } },
  ]);
  t.deepEqual(deployment.spec.template.spec.volumes, [
    { name: 'configmap-0', configMap: { name: 'files', optional: false } },
    { name: 'secret-0', secret: { secretName: 'tls', items: [{ key: 'tls.crt', path: 'tls.crt' }], optional: false } },
  ]);
  t.deepEqual(container.volumeMounts, [
    { name: 'configmap-0', mountPath: '/etc/app', readOnly: true },
    { name: 'secret-0', mountPath: '/etc/tls', readOnly: true },
  ]);
  t.deepEqual(deployment.spec.template.metadata?.annotations, {
    [CONFIG_HASH_ANNOTATION]: 'seed',
    [TEMPLATE_HASHES_ANNOTATION]: '{"ConfigMap/files":"h2","ConfigMap/flags":null,"ConfigMap/web":"h0","Secret/db":"h4","Secret/tls":"h3"}',
  });
  t.deepEqual(restrictedViolations(deployment.spec.template.spec), []);
  t.deepEqual(
    [...runningWith(deployment).projected],
    [
      ['ConfigMap/files', 'h2'],
      ['ConfigMap/flags', null],
      ['ConfigMap/web', 'h0'],
      ['Secret/db', 'h4'],
      ['Secret/tls', 'h3'],
    ],
  );
});

test('listed objects are followed by refs with their keys; a plain spec.env variable comes after the listed keys', (t) => {
  const shop = app({ configMaps: [{ name: 'flags', keys: ['MODE'] }], secrets: [{ name: 'db' }], env: [{ name: 'MODE', value: 'x' }] });
  t.deepEqual(
    projections(shop).map((each) => projectionRef('team-a', each)),
    [
      { kind: 'ConfigMap', namespace: 'team-a', name: 'flags', keys: ['MODE'] },
      { kind: 'Secret', namespace: 'team-a', name: 'db' },
    ],
  );
  const projected = projections(shop).map((each) => ({ ...each, hash: 'h' }));
  const env = desiredDeployment({ app: shop, projected }).spec.template.spec.containers[0]!.env;
  t.deepEqual(
    env?.map((variable) => variable.name),
    ['MODE', 'MODE'],
  );
  t.is(env?.[1]?.value, 'x');
});

test('removing the last listed object is drift: its volumes, mounts and hashes go from the live Deployment', (t) => {
  const listed = app({ configMaps: [{ name: 'files', mountPath: '/etc/app' }] });
  const live = desiredDeployment({ app: listed, projected: projections(listed).map((each) => ({ ...each, hash: 'h' })) });
  const desired = desiredDeployment({ app: app() });
  t.deepEqual(driftPaths(live, desired, DEPLOYMENT_OPTIONAL_KEYS).sort(), [
    `spec.template.metadata.annotations.${TEMPLATE_HASHES_ANNOTATION}`,
    'spec.template.spec.containers[0].volumeMounts',
    'spec.template.spec.volumes',
  ]);
  t.deepEqual(driftPaths(withDesired(live, desired, DEPLOYMENT_OPTIONAL_KEYS), desired, DEPLOYMENT_OPTIONAL_KEYS), []);
});
