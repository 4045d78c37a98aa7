// Leader election against each target, as the operator's ServiceAccount (get/create/update on leases only).
import test from 'ava';
import { pino } from 'pino';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { selectedTargets } from '../../test/support/targets.js';
import { clusterScenario, eventually, LogLines, withTimeout } from '../../test/support/operator-harness.js';
import { grantOperatorLeases } from '../../test/reliability/support/cluster-role.js';
import { KubeClient } from '../kube/client.js';
import { LEASES } from '../kube/resources.js';
import type { Lease } from '../kube/objects.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-elector.js';

const FAST = { leaseDurationMs: 1_000, renewDeadlineMs: 600, retryPeriodMs: 100 };

for (const target of selectedTargets()) {
  let operatorClient: KubeClient;
  const scenario = clusterScenario(test, target, undefined, async ({ cluster, admin }) => {
    // Each test elects on a Lease of its own, so that they run at once.
    await grantOperatorLeases(admin, 'leader-election-tests', ['lease-handover', 'lease-expired', 'lease-stolen']);
    operatorClient = await KubeClient.fromKubeConfig((await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME)).kubeConfig);
  });
  test.after.always(() => operatorClient?.close());

  const candidate = (name: string, identity: string, overrides: Partial<LeaderElectionOptions> = {}): LeaderElector =>
    new LeaderElector({
      client: operatorClient,
      namespace: OPERATOR_NAMESPACE,
      name,
      identity,
      logger: pino({ level: 'silent' }),
      ...FAST,
      ...overrides,
    });
  const holder = async (name: string): Promise<Lease['spec']> => (await scenario.admin.get<Lease>(LEASES, OPERATOR_NAMESPACE, name)).spec;

  test(`[${target}] one of two candidates leads; when it releases, the other takes over at once`, async (t) => {
    // Slower than FAST: the first must keep renewing for a whole lease duration on a loaded machine.
    const timings = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 200 };
    const first = candidate('lease-handover', 'first', timings);
    const second = candidate('lease-handover', 'second', timings);
    const stopSecond = new AbortController();
    t.true(await first.acquire(AbortSignal.timeout(5_000)));
    t.is((await holder('lease-handover'))?.holderIdentity, 'first');
    const secondAcquired = second.acquire(stopSecond.signal);
    // Renewed for longer than a lease duration: had the first stopped renewing, the second would lead by then.
    const renewedByFirst = async (): Promise<boolean> => {
      const spec = await holder('lease-handover');
      const renewedFor = Date.parse(spec!.renewTime!) - Date.parse(spec!.acquireTime!);
      return spec?.holderIdentity === 'first' && renewedFor > timings.leaseDurationMs + timings.retryPeriodMs;
    };
    const lease = async (): Promise<string> => `the Lease: ${JSON.stringify(await holder('lease-handover'))}`;
    await eventually('the first renews past a lease duration', renewedByFirst, 20_000, 25, lease);
    t.false(second.isLeader, 'the Lease is renewed, so the second candidate waits');
    t.true(first.isLeader);

    const released = Date.now();
    await first.release();
    t.false(first.isLeader);
    t.true(await secondAcquired);
    t.true(Date.now() - released < timings.leaseDurationMs, 'a released Lease is taken over before it would expire');
    const spec = await holder('lease-handover');
    t.is(spec?.holderIdentity, 'second');
    t.is(spec?.leaseTransitions, 1);
    await second.release();
    t.is((await holder('lease-handover'))?.holderIdentity, '');
  });

  test(`[${target}] a Lease whose holder stopped renewing is taken over after the lease duration`, async (t) => {
    const at = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    await scenario.admin.create<Lease>(LEASES, OPERATOR_NAMESPACE, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'lease-expired', namespace: OPERATOR_NAMESPACE },
      spec: { holderIdentity: 'crashed', leaseDurationSeconds: 1, acquireTime: at, renewTime: at, leaseTransitions: 4 },
    });
    const started = Date.now();
    const successor = candidate('lease-expired', 'successor');
    t.true(await successor.acquire(AbortSignal.timeout(10_000)));
    t.true(Date.now() - started >= 1_000, 'it waited a whole lease duration, measured on its own clock');
    t.like(await holder('lease-expired'), { holderIdentity: 'successor', leaseTransitions: 5 });
    await successor.release();
  });

  test(`[${target}] a leader that cannot renew within the renew deadline loses leadership`, async (t) => {
    // A deadline long beside a retry period and a round trip, so that the two behaviours below are far apart.
    const deadlines = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500 };
    const leader = candidate('lease-stolen', 'leader', deadlines);
    t.true(await leader.acquire(AbortSignal.timeout(5_000)));
    // Someone else keeps the Lease fresh under another name: every renewal of ours now fails. The write carries the
    // resourceVersion it read, so the renewTime read is that of the leader's last successful renewal.
    const lease = await scenario.admin.get<Lease>(LEASES, OPERATOR_NAMESPACE, 'lease-stolen');
    const lastRenewal = Date.parse(lease.spec!.renewTime!.replace(/(\.\d{3})\d*Z$/, '$1Z'));
    const at = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    await scenario.admin.replace<Lease>(LEASES, OPERATOR_NAMESPACE, 'lease-stolen', {
      ...lease,
      spec: { ...lease.spec, holderIdentity: 'usurper', renewTime: at, leaseDurationSeconds: 30 },
    });
    await withTimeout(leader.lost, 5_000, 'leadership was not lost');
    // The deadline runs from the start of the last renewal that succeeded (a GET's round trip before its renewTime,
    // on this same clock): about 1,500 ms after that renewTime. A leader that gave up at its first failed renewal would
    // be gone a retry period (100 ms) and a round trip after it. Measured from the Lease rather than from the
    // usurpation, a slow round trip of this test under load does not shorten it.
    const heldFor = Date.now() - lastRenewal;
    t.true(
      heldFor >= deadlines.renewDeadlineMs / 2,
      `it kept retrying until the renew deadline (lost ${heldFor} ms after its last renewal)`,
    );
    t.false(leader.isLeader);
    await leader.release();
    t.is((await holder('lease-stolen'))?.holderIdentity, 'usurper', 'release does not touch a Lease held by another');
  });

  test(`[${target}] a Lease its identity may not read is reported once at error level with the API server's words, then retried quietly`, async (t) => {
    const logs = new LogLines();
    const denied = candidate('lease-not-granted', 'denied', { logger: pino({ level: 'debug' }, logs.destination) });
    const stop = new AbortController();
    t.teardown(() => stop.abort());
    const acquiring = denied.acquire(stop.signal);
    await eventually('the 403 is reported', () => logs.find('leader.forbidden').length > 0, 5_000);
    await eventually('it kept trying', () => logs.find('leader.get-failed').length >= 4, 5_000);
    stop.abort();
    t.false(await acquiring);
    const reported = logs.find('leader.forbidden');
    t.is(reported.length, 1, 'once, not at every retry');
    t.like(reported[0], { level: 50, verb: 'get', lease: `${OPERATOR_NAMESPACE}/lease-not-granted` });
    t.regex(
      String(reported[0]!.problem),
      /leases\.coordination\.k8s\.io "lease-not-granted" is forbidden: User ".*customapp-operator" cannot get/,
    );
  });
}
