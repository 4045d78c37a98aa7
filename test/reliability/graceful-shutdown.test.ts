// Graceful shutdown: SIGTERM mid-burst drains, releases the Lease and exits 0; a restart converges with nothing lost.
import test from 'ava';
import { CONFIG_HASH_ANNOTATION, LEADER_ELECTION_LEASE, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import type { KubeClient } from '../../operator/kube/client.js';
import { CONFIGMAPS, DEPLOYMENTS, LEASES } from '../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { Deployment, Lease } from '../../operator/kube/objects.js';
import { selectedTargets } from '../support/targets.js';
import { clusterForTest, createAll, eventually, objects, startTestOperator } from '../support/operator-harness.js';
import { NO_SERVER_FLAGS, OperatorProcess, UNGOVERNED_FLAGS } from '../support/operator-process.js';
import { OPERATOR_USER } from './support/cluster-role.js';
import { startFaultProxy } from './support/fault-proxy.js';
import { podAnnotation } from '../support/cluster-reads.js';

/** CustomApps in the burst. */
const BURST = 120;
/** The pod's termination grace period in dist/ (Kubernetes' default), which the exit must beat. */
const GRACE_PERIOD_MS = 30_000;
/** Latency the emulator adds to the operator's writes, so that reconciles are surely in flight at SIGTERM. */
const WRITE_LATENCY_MS = 40;

/** Reconciles started but not ended among `lines` (by key: one reconcile per key at a time). */
function unfinished(lines: readonly Record<string, unknown>[]): string[] {
  const open = new Map<string, number>();
  for (const line of lines) {
    const key = String(line.key);
    if (line.msg === 'reconcile.start') open.set(key, (open.get(key) ?? 0) + 1);
    if (line.msg === 'reconcile.end') open.set(key, (open.get(key) ?? 0) - 1);
  }
  return [...open].filter(([, count]) => count > 0).map(([key]) => key);
}

/** Every CustomApp in `namespace` runs the content of its ConfigMap and has a status for its generation. */
async function converged(admin: KubeClient, namespace: string): Promise<string[]> {
  const apps = (await admin.list<CustomApp>(CUSTOM_APPS, { namespace })).items;
  const deployments = new Map(
    (await admin.list<Deployment>(DEPLOYMENTS, { namespace })).items.map((deployment) => [deployment.metadata.name, deployment]),
  );
  const configs = new Map(
    (await admin.list<{ metadata: { name?: string }; data?: Record<string, string> }>(CONFIGMAPS, { namespace })).items.map((config) => [
      config.metadata.name,
      config,
    ]),
  );
  return apps
    .filter((app) => {
      const deployment = deployments.get(app.metadata.name);
      return (
        podAnnotation(deployment, CONFIG_HASH_ANNOTATION) !== contentHash({ data: configs.get(app.spec.configMapName)?.data }) ||
        app.status?.observedGeneration !== app.metadata.generation
      );
    })
    .map((app) => app.metadata.name!);
}

for (const target of selectedTargets()) {
  test(`[${target}] SIGTERM during a burst drains the reconciles in flight, releases the Lease and exits 0; a restart converges with nothing lost`, async (t) => {
    const scenario = await clusterForTest(t, target);
    const { cluster, admin } = scenario;
    const { path: kubeconfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
    const start = (): OperatorProcess =>
      new OperatorProcess([`--kubeconfig=${kubeconfig}`, '--leader-elect', ...NO_SERVER_FLAGS, ...UNGOVERNED_FLAGS]);
    if (cluster.emulator)
      cluster.emulator.faults.addLatency({ match: { verb: ['create', 'update', 'patch'], user: OPERATOR_USER }, ms: WRITE_LATENCY_MS });

    const first = start();
    t.teardown(() => first.dispose());
    await first.waitFor('the first operator leads', () => first.find('controller.start').length > 0);
    const ns = 'shutdown';
    const configs = Array.from({ length: 10 }, (_, index) => objects.configMap(ns, `config-${index}`, { V: `${index}` }));
    await scenario.createNamespace(ns, ...configs);
    const creates: Promise<void>[] = [];
    for (let index = 0; index < BURST; index += 1)
      creates.push(
        createAll(admin, objects.customApp(ns, `app-${index}`, { image: 'example/app:1', configMapName: `config-${index % 10}` })),
      );
    await Promise.all(creates);
    await first.waitFor('a quarter of the burst is reconciled', () => first.find('reconcile.end').length >= BURST / 4);

    const signalled = performance.now();
    first.kill('SIGTERM');
    const exit = await first.exited;
    const exitMs = performance.now() - signalled;
    t.deepEqual(exit, { code: 0, signal: null }, first.stderr);
    t.true(exitMs < GRACE_PERIOD_MS, `exited ${exitMs.toFixed(0)} ms after SIGTERM`);
    t.log(`exit 0, ${exitMs.toFixed(0)} ms after SIGTERM`);

    const signalAt = first.lines.findIndex((line) => line.msg === 'signal: shutting down');
    const inFlight = unfinished(first.lines.slice(0, signalAt));
    if (cluster.emulator) t.true(inFlight.length > 0, 'reconciles were in flight when the signal arrived');
    t.log(`${inFlight.length} reconciles in flight at SIGTERM, ${first.find('reconcile.end').length} finished in all`);
    const stoppedAt = first.lines.findIndex((line) => line.msg === 'controller.stopped');
    t.deepEqual(unfinished(first.lines.slice(0, stoppedAt)), [], 'every reconcile that started had ended when the controller stopped');
    t.true(
      first.lines.slice(stoppedAt).every((line) => line.msg !== 'reconcile.start'),
      'nothing starts after the drain',
    );
    const order = first.lines
      .map((line) => line.msg)
      .filter((msg) => ['signal: shutting down', 'controller.stopped', 'leader.released', 'stopped', 'exit'].includes(msg as string));
    t.deepEqual(
      order,
      ['signal: shutting down', 'controller.stopped', 'leader.released', 'stopped', 'exit'],
      JSON.stringify(first.find('leader.release-failed')),
    );
    t.is((await admin.get<Lease>(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE)).spec?.holderIdentity, '', 'the Lease is released');
    t.true((await converged(admin, ns)).length > 0, 'the burst was cut short (the restart has work left)');

    // While no operator runs: one more CustomApp and a ConfigMap edit, which the restart must not lose.
    await createAll(admin, objects.customApp(ns, 'while-down', { image: 'example/app:1', configMapName: 'config-3' }));
    await admin.patch(CONFIGMAPS, ns, 'config-7', 'merge', { data: { V: 'edited while down' } });

    const second = start();
    t.teardown(() => second.dispose());
    await second.waitFor('the restarted operator takes the Lease', () => second.find('leader.acquired').length > 0);
    // From its first log line, by its own clock: the process's start (tsx compiling the operator, slow on a loaded
    // machine) is not the Lease's business.
    const takeoverMs = Date.parse(String(second.find('leader.acquired')[0]!.time)) - Date.parse(String(second.lines[0]!.time));
    t.true(takeoverMs < 10_000, `took the Lease ${takeoverMs.toFixed(0)} ms after its first log line, without waiting out its 15 s`);
    const lagging = await eventually(
      'every CustomApp converges',
      async () => {
        const left = await converged(admin, ns);
        return left.length === 0 ? left : undefined;
      },
      60_000,
      250,
    ).catch(async () => converged(admin, ns));
    t.deepEqual(lagging, [], 'nothing lost');
    t.is((await admin.list<CustomApp>(CUSTOM_APPS, { namespace: ns })).items.length, BURST + 1);

    second.kill('SIGTERM');
    t.deepEqual(await second.exited, { code: 0, signal: null }, second.stderr);
  });
}

test('[emulator] a Lease renewal that the server applied but whose answer never came does not keep the Lease held after shutdown', async (t) => {
  const { cluster, admin } = await clusterForTest(t, 'emulator');
  const proxy = await startFaultProxy(cluster.emulator!.url);
  t.teardown(() => proxy.close());
  const running = await startTestOperator(
    cluster,
    {
      leaderElection: {
        namespace: OPERATOR_NAMESPACE,
        name: LEADER_ELECTION_LEASE,
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 100,
      },
    },
    { server: proxy.url },
  );
  t.teardown(() => running.operator.stop());
  const renewal = proxy.add({
    match: (request) =>
      request.method === 'PUT' &&
      request.path === `/apis/coordination.k8s.io/v1/namespaces/${OPERATOR_NAMESPACE}/leases/${LEADER_ELECTION_LEASE}`,
    answer: { kind: 'lost-answer' },
    times: 1,
  });
  await eventually('a renewal is in flight, applied by the server, its answer lost', () => proxy.hits(renewal) === 1);
  await running.operator.stop();
  t.deepEqual(running.logs.find('leader.release-failed'), []);
  t.is(running.logs.find('leader.released').length, 1);
  t.is(
    (await admin.get<Lease>(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE)).spec?.holderIdentity,
    '',
    'a successor need not wait out the lease duration',
  );
});
