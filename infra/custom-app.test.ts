// Tests of the CustomApp construct: the spec it synthesizes from each prop, and the errors bad props give at synth.
import test from 'ava';
import { type App, Chart, Duration, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { CustomApp, type CustomAppProps } from './custom-app.js';
import { l1 } from './index.js';
import { testApp } from './testing/test-app.js';

type Manifest = Record<string, any>;

/** A chart in namespace `apps` of a fresh test app. */
function chartOf(namespace = 'apps'): Chart {
  return new Chart(testApp(), 'test', { namespace });
}

/** The CustomApp manifests of the chart. */
function customApps(chart: Chart): Manifest[] {
  return Testing.synth(chart).filter((manifest: Manifest) => manifest.kind === 'CustomApp');
}

/** Every validation error of the app's constructs, as `cdk8s synth` reports them. */
function synthErrors(app: App): string[] {
  return app.node.findAll().flatMap((construct) => construct.node.validate());
}

/** The errors of one CustomApp `web` built from `props` in a fresh chart. */
function errorsOf(props: CustomAppProps, build?: (app: CustomApp, chart: Chart) => void): string[] {
  const chart = chartOf();
  const app = new CustomApp(chart, 'web', { metadata: { name: 'web' }, ...props });
  build?.(app, chart);
  return synthErrors(chart.node.root as App);
}

test('GIVEN the image alone WHEN synthesized THEN a CustomApp app.example.com/v1 in the chart namespace with only the image', (t) => {
  const chart = chartOf();
  new CustomApp(chart, 'web', { image: 'nginx:1.27' });
  const [app, ...others] = customApps(chart);
  t.deepEqual(others, []);
  t.is(app!.apiVersion, 'app.example.com/v1');
  t.is(app!.kind, 'CustomApp');
  t.is(app!.metadata.namespace, 'apps');
  t.regex(app!.metadata.name, /^test-web-c8[0-9a-f]+$/);
  t.deepEqual(app!.spec, { image: 'nginx:1.27' });
  t.deepEqual(synthErrors(chart.node.root as App), []);
});

test('GIVEN every prop WHEN synthesized THEN each spec field holds it, objects by name (snapshot beside)', (t) => {
  const chart = chartOf();
  const config = new kplus.ConfigMap(chart, 'config', { metadata: { name: 'web-config' }, data: { A: '1' } });
  const files = kplus.ConfigMap.fromConfigMapName(chart, 'files', 'web-files');
  const secret = new kplus.Secret(chart, 'secret', { metadata: { name: 'web-secret' }, stringData: { TOKEN: 't' } });
  const app = new CustomApp(chart, 'web', {
    metadata: { name: 'web', labels: { team: 'a' } },
    image: 'registry.example.com/web:1.2.3',
    configMapName: config,
    secretName: 'web-env',
    configMaps: [{ configMap: files, mountPath: '/etc/web', keys: ['app.yaml'] }],
    secrets: [{ secret, keys: ['TOKEN'], optional: true }],
    replicas: 3,
    port: 8080,
    readinessPath: '/healthz',
    rollout: { debounce: Duration.seconds(30), paused: false, progressDeadline: Duration.minutes(5) },
    resources: {
      cpu: { request: kplus.Cpu.millis(250), limit: kplus.Cpu.units(1.5) },
      memory: { request: Size.mebibytes(64), limit: Size.gibibytes(1) },
    },
    env: { LOG_LEVEL: 'info' },
  });
  app.addConfigMap('web-flags', { optional: true });
  app.addSecret(kplus.Secret.fromSecretName(chart, 'tls', 'web-tls'), { mountPath: '/etc/tls' });
  app.addEnv('MODE', 'prod');
  const [manifest] = customApps(chart);
  t.deepEqual(manifest!.metadata, { name: 'web', namespace: 'apps', labels: { team: 'a' } });
  t.deepEqual(manifest!.spec, {
    image: 'registry.example.com/web:1.2.3',
    configMapName: 'web-config',
    secretName: 'web-env',
    configMaps: [
      { name: 'web-files', mountPath: '/etc/web', keys: ['app.yaml'] },
      { name: 'web-flags', optional: true },
    ],
    secrets: [
      { name: 'web-secret', keys: ['TOKEN'], optional: true },
      { name: 'web-tls', mountPath: '/etc/tls' },
    ],
    env: [
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'MODE', value: 'prod' },
    ],
    replicas: 3,
    port: 8080,
    readinessPath: '/healthz',
    rollout: { debounceSeconds: 30, paused: false, progressDeadlineSeconds: 300 },
    resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '1.5', memory: '1Gi' } },
  });
  t.is(app.name, 'web');
  t.deepEqual(synthErrors(chart.node.root as App), []);
  t.snapshot(Testing.synth(chart), 'a CustomApp with every prop, its ConfigMap and Secret');
});

test('GIVEN bad props WHEN synthesized THEN cdk8s synth fails with an error quoting each one', (t) => {
  const chart = chartOf();
  new CustomApp(chart, 'web', { metadata: { name: 'web' }, image: 'nginx', readinessPath: '/ready' });
  const error = t.throws(() => (chart.node.root as App).synthYaml());
  t.regex(error!.message, /CustomApp "web": readinessPath "\/ready" needs a port to probe: set port/);
});

const invalid: Array<[string, CustomAppProps, string]> = [
  ['readinessPath without port', { image: 'nginx', readinessPath: '/ready' }, 'readinessPath "/ready" needs a port to probe: set port'],
  ['a relative readinessPath', { image: 'nginx', port: 80, readinessPath: 'ready' }, 'readinessPath "ready" does not start with "/"'],
  ['an empty image', { image: ' ' }, 'image is empty'],
  [
    'an upper-case configMapName',
    { image: 'nginx', configMapName: 'Web-Config' },
    `configMapName "Web-Config" is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253)`,
  ],
  [
    'a secretName in another namespace',
    { image: 'nginx', secretName: 'other/db' },
    `secretName "other/db" is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253)`,
  ],
  [
    'an empty key list',
    { image: 'nginx', configMaps: [{ configMap: 'cfg', keys: [] }] },
    'configMaps["cfg"].keys is empty: list at least one key, or leave keys out for every key',
  ],
  ['a key twice', { image: 'nginx', secrets: [{ secret: 'db', keys: ['a', 'a'] }] }, 'secrets["db"].keys lists a key twice'],
  [
    'a bad key',
    { image: 'nginx', secrets: [{ secret: 'db', keys: ['a/b'] }] },
    `secrets["db"].keys "a/b" is not a data key (letters, digits, '-', '_', '.')`,
  ],
  [
    'a relative mountPath',
    { image: 'nginx', configMaps: [{ configMap: 'cfg', mountPath: 'etc' }] },
    'configMaps["cfg"].mountPath "etc" is not an absolute path',
  ],
  [
    'a ConfigMap listed twice',
    { image: 'nginx', configMaps: [{ configMap: 'cfg' }, { configMap: 'cfg', mountPath: '/etc/cfg' }] },
    'configMaps["cfg"] is listed twice (merge its keys into one entry)',
  ],
  [
    '17 Secrets',
    { image: 'nginx', secrets: Array.from({ length: 17 }, (_, i) => ({ secret: `s${i}` })) },
    'secrets has 17 entries, more than 16',
  ],
  ['negative replicas', { image: 'nginx', replicas: -1 }, 'replicas -1 is not a whole number ≥ 0'],
  ['port 70000', { image: 'nginx', port: 70000 }, 'port 70000 is not a whole number from 1 to 65535'],
  [
    'a debounce over an hour',
    { image: 'nginx', rollout: { debounce: Duration.hours(2) } },
    'rollout.debounce 7200s is not a whole number of seconds from 0 to 3600',
  ],
  [
    'a debounce of a second and a half',
    { image: 'nginx', rollout: { debounce: Duration.millis(1500) } },
    'rollout.debounce 1.5s is not a whole number of seconds from 0 to 3600',
  ],
  [
    'a CPU finer than the schema takes',
    { image: 'nginx', resources: { cpu: { limit: kplus.Cpu.units(0.0000001) } } },
    'resources.limits.cpu "1e-7" is not a resource quantity such as "250m", "0.5" or "1.5Gi"',
  ],
  [
    'a bad variable name',
    { image: 'nginx', env: { '1ST': 'x' } },
    `env "1ST" is not a variable name (letters, digits, '_', '-', '.', no digit first)`,
  ],
];
for (const [what, props, message] of invalid) {
  test(`GIVEN ${what} WHEN validated THEN exactly: ${message}`, (t) => {
    t.deepEqual(errorsOf(props), [`CustomApp "web": ${message}`]);
  });
}

test('GIVEN a port and a name that is no DNS-1035 label WHEN validated THEN the Service name is the error', (t) => {
  const errors = errorsOf({ image: 'nginx', port: 80, metadata: { name: '1web' } });
  t.deepEqual(errors, [
    'CustomApp "1web": metadata.name "1web" with a port: the Service of that name needs a DNS-1035 label (a-z first, at most 63 characters)',
  ]);
  t.deepEqual(errorsOf({ image: 'nginx', metadata: { name: '1web' } }), [], 'without a port there is no Service to name');
});

test('GIVEN a cdk8s-plus ConfigMap of another namespace WHEN added THEN the error names both namespaces', (t) => {
  const errors = errorsOf({ image: 'nginx' }, (app, chart) => {
    app.addConfigMap(new kplus.ConfigMap(chart, 'other', { metadata: { name: 'cfg', namespace: 'ops' } }));
    app.addSecret(new kplus.Secret(chart, 'same', { metadata: { name: 'db' } }));
  });
  t.deepEqual(errors, [
    'CustomApp "web": configMaps["cfg"] is in namespace "ops", the CustomApp in "apps": it reads only its own namespace',
  ]);
});

test('GIVEN objects added after construction WHEN validated THEN they are checked too', (t) => {
  const errors = errorsOf({ image: 'nginx', configMaps: [{ configMap: 'cfg' }] }, (app) => {
    app.addConfigMap('cfg', { keys: ['A'] });
    app.addEnv('A B', '1');
  });
  t.deepEqual(errors, [
    'CustomApp "web": configMaps["cfg"] is listed twice (merge its keys into one entry)',
    `CustomApp "web": env "A B" is not a variable name (letters, digits, '_', '-', '.', no digit first)`,
  ]);
});

test('GIVEN the generated l1 class WHEN a quantity is a whole number or a string THEN each is synthesized as written, no wrapper class', (t) => {
  const chart = chartOf();
  new l1.CustomApp(chart, 'raw', {
    metadata: { name: 'raw' },
    spec: { image: 'nginx', resources: { requests: { cpu: 1, memory: 1073741824 }, limits: { cpu: '1500m', memory: '1Gi' } } },
  });
  t.deepEqual(customApps(chart)[0]!.spec.resources, {
    requests: { cpu: 1, memory: 1073741824 },
    limits: { cpu: '1500m', memory: '1Gi' },
  });
});
