// A cluster without our CRD, or whose RBAC forbids our list: one clear error line, /readyz says why, recovery with no restart.
import test from 'ava';
import { resolve } from 'node:path';
import { CRD_NAME, OPERATOR_NAME } from '../../api/customapp.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import { isNotFound } from '../../operator/kube/errors.js';
import type { KubeObject } from '../../operator/kube/objects.js';
import type { Resource } from '../../operator/kube/resources.js';
import { distOperatorRules, rulesWithout, setOperatorRules } from '../reliability/support/cluster-role.js';
import { selectedTargets } from '../support/targets.js';
import { clusterScenario, eventually, objects, readyz, startTestOperator, withTimeout } from '../support/operator-harness.js';

const DIST = resolve(import.meta.dirname, '../../dist');
const CRD_FILE = `${DIST}/customapp-crd.k8s.yaml`;
const CRDS: Resource = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};
/** How long two of the gate's re-checks take at most (DEFAULT_RECHECK_MS apart), with room for a loaded machine. */
const TWO_RECHECKS_MS = 2 * 2_000 + 10_000;
const CRD_PROBLEM = `${CRD_NAME} is not served: the API server has no API group app.example.com`;
const CRD_FIX = `install the CRD ${CRD_NAME}: kubectl apply -f dist/`;

for (const target of selectedTargets()) {
  // dist/ without its CRD: the namespace, the ServiceAccount and its RBAC, as after a partial install.
  const scenario = clusterScenario(test, target, {
    install: async ({ cluster }) => {
      const applied = await cluster.kubectl(['apply', '-f', `${DIST}/customapp-operator.k8s.yaml`]);
      if (applied.code !== 0) throw new Error(`kubectl apply failed: ${applied.stderr}`);
    },
  });

  test.serial(
    `[${target}] started before its CRD exists: one error line naming the CRD and kubectl apply -f dist/, /readyz says why, and the CRD applied later (or deleted and applied again) needs no restart`,
    async (t) => {
      const { cluster, admin } = scenario;
      const running = await startTestOperator(cluster, { healthProbeBindAddress: { host: '127.0.0.1', port: 0 } }, { waitForStart: false });
      t.teardown(() => running.operator.stop());
      const { logs } = running;
      await eventually('the missing CRD is reported', () => logs.find('api.unavailable').length > 0, 10_000);
      // Discovery answers 404 for the missing group alone: the first check's count, then two re-checks more.
      const notServed = () => running.requests.filter((sample) => sample.resource === 'discovery' && sample.code === 404).length;
      const perCheck = notServed();
      await eventually('two re-checks of the missing CRD', () => notServed() >= 3 * perCheck, TWO_RECHECKS_MS);
      const errors = logs.find('api.unavailable');
      t.is(errors.length, 1, 'one line, however long it lasts');
      t.like(errors[0], { level: 50, resource: 'customapps.app.example.com', reason: 'NotServed', problem: CRD_PROBLEM, fix: CRD_FIX });
      const notReady = await readyz(running);
      t.is(notReady.status, 503);
      t.true(notReady.text.includes(`[-]api failed: ${CRD_PROBLEM}; fix: ${CRD_FIX}\n`), notReady.text);
      t.false(running.operator.synced);
      const customAppRequests = running.requests.filter((sample) => sample.resource === 'customapps.app.example.com');
      t.deepEqual(customAppRequests, [], 'nothing is sent for CustomApps while they are not served: no 404 loop');
      t.is(logs.find('retry', { stream: 'customapp *' }).length, 0, 'and no retry warnings');

      const crd = await cluster.kubectl(['apply', '-f', CRD_FILE]);
      t.is(crd.code, 0, crd.stderr);
      await withTimeout(running.operator.started, 15_000, 'the operator did not start once the CRD was applied');
      t.is((await readyz(running)).status, 200);
      t.like(logs.find('api.available')[0], { resource: 'customapps.app.example.com', was: 'NotServed' });
      const reads = await scenario.createNamespace('late-crd', objects.customApp('late-crd', 'app', { image: 'example/app:1' }));
      await reads.deploymentCreated('app', 15_000);

      // Deleted while running: the watch meets a 404, discovery confirms it, and a new apply recovers.
      await admin.delete(CUSTOM_APPS, 'late-crd', 'app');
      await eventually('the CustomApp is finalized', async () => (await reads.app('app')) === undefined);
      await admin.delete(CRDS, undefined, CRD_NAME);
      await eventually(
        'the CRD is gone',
        async () =>
          (await admin.get<KubeObject>(CRDS, undefined, CRD_NAME).catch((error: unknown) => (isNotFound(error) ? undefined : 'error'))) ===
          undefined,
        30_000,
      );
      await eventually('the deletion is reported', () => logs.find('api.unavailable').length === 2, 30_000);
      t.is((await readyz(running)).status, 503);
      const again = await cluster.kubectl(['apply', '-f', CRD_FILE]);
      t.is(again.code, 0, again.stderr);
      await eventually('ready again', async () => (await readyz(running)).status === 200, 15_000);
      t.is(logs.find('api.available').length, 2);
    },
  );

  test.serial(
    `[${target}] a 403 on the CustomApp list: one error line naming the permission, /readyz says why, and the grant restored needs no restart`,
    async (t) => {
      const { cluster, admin } = scenario;
      await cluster.kubectl(['apply', '-f', CRD_FILE]);
      await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=30s', `crd/${CRD_NAME}`]);
      const rules = distOperatorRules();
      const listCustomApps = { apiGroup: 'app.example.com', resource: 'customapps', verb: 'list' };
      await setOperatorRules(admin, rulesWithout(rules, listCustomApps), listCustomApps);
      t.teardown(() => setOperatorRules(admin, rules));
      const running = await startTestOperator(cluster, { healthProbeBindAddress: { host: '127.0.0.1', port: 0 } }, { waitForStart: false });
      t.teardown(() => running.operator.stop());
      const { logs, requests } = running;
      await eventually('the 403 is reported', () => logs.find('api.unavailable').length > 0, 10_000);
      // Each re-check after a 403 asks the API server with a SelfSubjectAccessReview of the denied verb.
      const reviews = () =>
        requests.filter((sample) => sample.verb === 'create' && sample.resource === 'selfsubjectaccessreviews.authorization.k8s.io').length;
      await eventually('two re-checks of the denied list', () => reviews() >= 2, TWO_RECHECKS_MS);
      const errors = logs.find('api.unavailable');
      t.is(errors.length, 1);
      const permission = 'list customapps.app.example.com (all namespaces)';
      t.like(errors[0], { level: 50, resource: 'customapps.app.example.com', reason: 'Forbidden', permission });
      const problem = String(errors[0]!.problem);
      t.true(problem.startsWith(`missing RBAC permission: ${permission} (the API server said: `), problem);
      t.true(problem.includes(`User "system:serviceaccount:customapp-system:${OPERATOR_NAME}" cannot list resource "customapps"`), problem);
      t.regex(String(errors[0]!.fix), /kubectl apply -f dist\/ grants it to the ServiceAccount customapp-system\/customapp-operator/);
      const notReady = await readyz(running);
      t.is(notReady.status, 503);
      t.true(notReady.text.includes(`[-]api failed: ${problem}; fix: `), notReady.text);
      const denied = () =>
        requests.filter((sample) => sample.code === 403 && sample.verb === 'list' && sample.resource === 'customapps.app.example.com');
      t.is(denied().length, 1, 'held after its 403: not retried into more 403s');

      await setOperatorRules(admin, rules, listCustomApps);
      await withTimeout(running.operator.started, 15_000, 'the operator did not start once the grant was restored');
      t.is((await readyz(running)).status, 200);
      t.like(logs.find('api.available')[0], { resource: 'customapps.app.example.com', was: 'Forbidden' });
      t.is(denied().length, 1);
    },
  );
}
