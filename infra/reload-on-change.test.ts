// Tests of reloadOnChange: the workload annotations it writes on cdk8s-plus workloads, and the inputs it refuses.
import test from 'ava';
import { Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { reloadOnChange } from './reload-on-change.js';
import { RELOAD_ANNOTATION, RELOAD_CONFIGMAPS_ANNOTATION, RELOAD_SECRETS_ANNOTATION } from '../api/workload.js';
import { testChart } from './testing/test-app.js';

const container = { image: 'nginx:1.27', securityContext: { ensureNonRoot: false } };

test("GIVEN 'auto' WHEN synthesized THEN app.example.com/reload: true on the Deployment, and nothing on its pod template", (t) => {
  const chart = testChart();
  const deployment = new kplus.Deployment(chart, 'web', { containers: [container] });
  reloadOnChange(deployment);
  const [manifest] = Testing.synth(chart);
  t.deepEqual(manifest.metadata.annotations, { 'app.example.com/reload': 'true' });
  t.is(manifest.spec.template.metadata.annotations, undefined);
  t.is(RELOAD_ANNOTATION, 'app.example.com/reload');
});

test('GIVEN named objects WHEN synthesized THEN the comma-separated lists, each name once, and the governance annotations', (t) => {
  const chart = testChart();
  const config = new kplus.ConfigMap(chart, 'config', { metadata: { name: 'db-config' } });
  const set = new kplus.StatefulSet(chart, 'db', { containers: [{ ...container, portNumber: 5432 }] });
  reloadOnChange(
    set,
    { configMaps: [config, 'db-flags', 'db-config'], secrets: [kplus.Secret.fromSecretName(chart, 'pw', 'db-password')] },
    { paused: true, debounce: Duration.seconds(20) },
  );
  const manifest = Testing.synth(chart).find((m: Record<string, any>) => m.kind === 'StatefulSet');
  t.deepEqual(manifest.metadata.annotations, {
    [RELOAD_CONFIGMAPS_ANNOTATION]: 'db-config,db-flags',
    [RELOAD_SECRETS_ANNOTATION]: 'db-password',
    'app.example.com/rollout-paused': 'true',
    'app.example.com/rollout-debounce-seconds': '20',
  });
});

test('GIVEN a DaemonSet and Secrets only WHEN synthesized THEN reload-secrets alone', (t) => {
  const chart = testChart();
  const daemons = new kplus.DaemonSet(chart, 'agent', { containers: [container] });
  reloadOnChange(daemons, { secrets: ['agent-token'] });
  t.deepEqual(Testing.synth(chart)[0].metadata.annotations, { [RELOAD_SECRETS_ANNOTATION]: 'agent-token' });
});

test('GIVEN bad input WHEN called THEN it throws quoting it', (t) => {
  const chart = testChart();
  const deployment = new kplus.Deployment(chart, 'web', { containers: [container] });
  t.throws(() => reloadOnChange(deployment, { configMaps: ['Web'] }), {
    message: `reloadOnChange(test/web): configMaps "Web" is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.')`,
  });
  t.throws(() => reloadOnChange(deployment, {}), {
    message: "reloadOnChange(test/web): no ConfigMap and no Secret named; pass 'auto' for every one the pod template uses",
  });
  t.throws(() => reloadOnChange(deployment, 'auto', { debounce: Duration.millis(1500) }), {
    message: 'reloadOnChange(test/web): debounce 1.5s is not a whole number of seconds from 0 to 3600',
  });
});
