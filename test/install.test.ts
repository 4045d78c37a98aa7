// `kubectl apply -f dist/` against each target: the CRD is accepted and validates, and the RBAC does what it says.
import test from 'ava';
import { resolve } from 'node:path';
import { CoreV1Api, Watch } from '@kubernetes/client-node';
import { clusterScenario } from './support/operator-harness.js';
import { selectedTargets } from './support/targets.js';

const DIST = resolve(import.meta.dirname, '../dist');

for (const target of selectedTargets()) {
  // Nothing installed beforehand: applying dist/ is what the file tests.
  const scenario = clusterScenario(test, target, { install: async () => {} });

  // Serial: later steps build on what `kubectl apply -f dist/` installed.
  test.serial(`[${target}] kubectl apply -f dist/ installs the CRD, namespace, RBAC and operator Deployment`, async (t) => {
    const applied = await scenario.cluster.kubectl(['apply', '-f', DIST]);
    t.is(applied.code, 0, applied.stderr);
    t.regex(
      applied.stdout,
      /customresourcedefinition\.apiextensions\.k8s\.io\/customapps\.app\.example\.com (created|configured|unchanged)/,
    );
    t.regex(applied.stdout, /clusterrole\.rbac\.authorization\.k8s\.io\/customapp-operator created/);
    t.regex(applied.stdout, /deployment\.apps\/customapp-operator created/);
    const established = await scenario.cluster.kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=30s',
      'crd/customapps.app.example.com',
    ]);
    t.is(established.code, 0, established.stderr);
  });

  test.serial(`[${target}] the sample CustomApp from dist/samples/ is accepted, with its ConfigMap and Secret`, async (t) => {
    const applied = await scenario.cluster.kubectl(['apply', '-f', `${DIST}/samples/`]);
    t.is(applied.code, 0, applied.stderr);
    t.regex(applied.stdout, /customapp\.app\.example\.com\/hello created/);
    const got = await scenario.cluster.kubectl(['get', 'customapp', 'hello', '-o', 'json']);
    t.is(got.code, 0, got.stderr);
    const app = JSON.parse(got.stdout);
    t.is(app.spec.configMapName, 'hello-config');
    t.is(app.spec.replicas, 1);
  });

  test.serial(`[${target}] kubectl get ca shows the printer columns`, async (t) => {
    const got = await scenario.cluster.kubectl(['get', 'ca']);
    t.is(got.code, 0, got.stderr);
    const [header, row] = got.stdout.trim().split('\n');
    t.deepEqual(header!.trim().split(/\s+/), ['NAME', 'IMAGE', 'CONFIGMAP', 'READY', 'ROLLOUT', 'WAITING', 'AGE']);
    t.regex(row!, /^hello\s+nginxinc\/nginx-unprivileged:1\.27-alpine\s+hello-config\s+/);
  });

  const invalid: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an empty image', { image: '' }, /spec\.image/],
    ['a missing image', { configMapName: 'x' }, /spec\.image: Required value/],
    ['an upper-case configMapName', { image: 'nginx', configMapName: 'Bad' }, /spec\.configMapName/],
    ['a configMapName with a slash', { image: 'nginx', configMapName: 'other-ns/config' }, /spec\.configMapName/],
    ['a 254-character secretName', { image: 'nginx', secretName: 'a'.repeat(254) }, /spec\.secretName/],
    ['negative replicas', { image: 'nginx', replicas: -1 }, /spec\.replicas/],
    ['port 0', { image: 'nginx', port: 0 }, /spec\.port/],
    ['port 70000', { image: 'nginx', port: 70000 }, /spec\.port/],
  ];
  for (const [what, spec, field] of invalid) {
    test(`[${target}] a CustomApp with ${what} is rejected with 422 Invalid naming the field`, async (t) => {
      const name = `invalid-${what.replace(/[^a-z0-9]+/g, '-').replace(/-$/, '')}`;
      const manifest = JSON.stringify({
        apiVersion: 'app.example.com/v1',
        kind: 'CustomApp',
        metadata: { name, namespace: 'default' },
        spec,
      });
      const created = await scenario.cluster.kubectl(['create', '-f', '-', '-o', 'name'], { input: manifest });
      t.not(created.code, 0);
      t.regex(created.stderr, /is invalid/);
      t.regex(created.stderr, field);
    });
  }

  test.serial(
    `[${target}] as the operator's ServiceAccount, dist/'s RBAC allows watching configmaps and denies creating them`,
    async (t) => {
      const { kubeConfig } = await scenario.cluster.serviceAccount('customapp-system', 'customapp-operator');
      const watch = new Watch(kubeConfig);
      let watchError: unknown;
      const controller = await watch.watch(
        '/api/v1/namespaces/default/configmaps',
        {},
        () => undefined,
        (error) => {
          watchError ??= error;
        },
      );
      controller.abort();
      t.is((watchError as { statusCode?: number } | undefined)?.statusCode, undefined, `watch failed: ${String(watchError)}`);

      const core = kubeConfig.makeApiClient(CoreV1Api);
      const denied = await t.throwsAsync(
        core.createNamespacedConfigMap({
          namespace: 'default',
          body: { metadata: { name: 'should-not-exist' }, data: { a: 'b' } },
        }),
      );
      t.is((denied as { code?: number }).code, 403);

      const forbiddenWatch = await scenario.cluster.serviceAccount('default', 'nobody');
      let forbiddenError: unknown;
      await new Watch(forbiddenWatch.kubeConfig).watch(
        '/api/v1/namespaces/default/configmaps',
        {},
        () => undefined,
        (error) => {
          forbiddenError ??= error;
        },
      );
      t.is((forbiddenError as { statusCode?: number } | undefined)?.statusCode, 403);
    },
  );
}
