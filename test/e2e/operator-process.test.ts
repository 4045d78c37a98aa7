// The operator as a process (operator/main.ts): flags, leader election between two processes, and graceful shutdown.
import test from 'ava';
import { LEADER_ELECTION_LEASE, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { LEASES } from '../../operator/kube/resources.js';
import type { Lease } from '../../operator/kube/objects.js';
import { selectedTargets } from '../support/targets.js';
import { createAll, objects, clusterScenario } from '../support/operator-harness.js';
import {
  FAST_ELECTION_FLAGS,
  NO_SERVER_FLAGS,
  OperatorProcess,
  PLAIN_METRICS_FLAGS,
  runOperatorOnce,
} from '../support/operator-process.js';

test('--help prints every flag and exits 0', async (t) => {
  const { code, stdout } = await runOperatorOnce(['--help']);
  t.is(code, 0);
  t.regex(stdout, /--leader-elect\b/);
  t.regex(stdout, /--metrics-bind-address/);
});

test('a bad flag exits 2 with a message quoting it', async (t) => {
  const { code, stderr } = await runOperatorOnce(['--log-format=xml']);
  t.is(code, 2);
  t.is(stderr, 'error: --log-format: "xml" is not one of auto, json, pretty\n');
});

for (const target of selectedTargets()) {
  let kubeconfig: string;
  const scenario = clusterScenario(test, target, undefined, async ({ cluster }) => {
    kubeconfig = (await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME)).path;
  });

  const start = (): OperatorProcess =>
    new OperatorProcess([
      `--kubeconfig=${kubeconfig}`,
      '--leader-elect',
      ...PLAIN_METRICS_FLAGS,
      '--health-probe-bind-address=127.0.0.1:0',
      ...FAST_ELECTION_FLAGS,
    ]);
  const reconciled = (process: OperatorProcess, key: string): boolean => process.find('reconcile.start', { key }).length > 0;

  test.serial(
    `[${target}] of two processes with --leader-elect only one reconciles; the other takes over when it is killed, and SIGTERM releases the Lease`,
    async (t) => {
      const first = start();
      t.teardown(() => first.dispose());
      await first.waitFor('the first process leads', () => first.find('leader.acquired').length > 0);
      const second = start();
      t.teardown(() => second.dispose());
      await second.waitFor('the second process has synced its caches', () => second.find('caches synced').length > 0);

      const ns = 'processes';
      const reads = await scenario.createNamespace(ns, objects.customApp(ns, 'before-kill', { image: 'example/a:1' }));
      await reads.deploymentCreated('before-kill');
      await first.waitFor('the leader finished the reconcile', () => first.find('reconcile.end', { key: `${ns}/before-kill` }).length > 0);
      t.false(reconciled(second, `${ns}/before-kill`), 'the standby does not reconcile');
      t.is(second.find('leader.acquired').length, 0);
      const probes = second.find('started')[0]!.probes as string;
      t.is((await fetch(`${probes}/readyz`)).status, 200, 'a synced standby is ready: readiness does not depend on leadership');
      t.is((await fetch(`${probes}/healthz`)).status, 200);
      const metrics = await (await fetch(`${first.find('started')[0]!.metrics as string}/metrics`)).text();
      t.regex(metrics, /^leader_election_master_status\{name="customapp-operator-leader"\} 1$/m);
      t.regex(metrics, /^controller_runtime_reconcile_total\{controller="customapp",result="success"\} [1-9]/m);
      t.regex(metrics, /^rest_client_requests_total\{verb="create",resource="deployments.apps",code="201"\} 1$/m);

      first.kill('SIGKILL');
      await first.exited;
      await second.waitFor('the second process takes over', () => second.find('leader.acquired').length > 0, 15_000);
      await createAll(scenario.admin, objects.customApp(ns, 'after-kill', { image: 'example/b:1' }));
      await reads.deploymentCreated('after-kill');
      await second.waitFor('the new leader logged the reconcile', () => reconciled(second, `${ns}/after-kill`));
      const lease = await scenario.admin.get<Lease>(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE);
      t.is(lease.spec?.holderIdentity, second.find('leader.acquired')[0]!.identity as string);

      second.kill('SIGTERM');
      const exit = await second.exited;
      t.deepEqual(exit, { code: 0, signal: null }, second.stderr);
      t.true(second.find('leader.released').length > 0);
      t.is((await scenario.admin.get<Lease>(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE)).spec?.holderIdentity, '');
      const order = second.lines
        .map((line) => line.msg)
        .filter((msg) => ['signal: shutting down', 'controller.stopped', 'leader.released', 'stopped', 'exit'].includes(msg as string));
      t.deepEqual(order, ['signal: shutting down', 'controller.stopped', 'leader.released', 'stopped', 'exit']);
    },
  );

  test.serial(`[${target}] without --leader-elect the process reconciles at once and runs until SIGTERM`, async (t) => {
    const alone = new OperatorProcess([`--kubeconfig=${kubeconfig}`, ...NO_SERVER_FLAGS, '--namespace=alone']);
    t.teardown(() => alone.dispose());
    await alone.waitFor('the workers start', () => alone.find('controller.start').length > 0);
    const reads = await scenario.createNamespace('alone', objects.customApp('alone', 'solo', { image: 'example/solo:1' }));
    await reads.deploymentCreated('solo');
    await new Promise((done) => setTimeout(done, 300));
    t.is(alone.find('exit').length, 0, 'it keeps running');
    alone.kill('SIGTERM');
    t.deepEqual(await alone.exited, { code: 0, signal: null }, alone.stderr);
  });
}
