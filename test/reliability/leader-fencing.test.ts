// Two operators, one Lease: when the leader loses it mid-burst, or stops while an Event write is on its way, none of its
// writes lands after it let the Lease go.
import test from 'ava';
import { LEADER_ELECTION_LEASE, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { CONFIGMAPS, DEPLOYMENTS, LEASES } from '../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { Deployment, Lease } from '../../operator/kube/objects.js';
import { selectedTargets } from '../support/targets.js';
import { clusterForTest, eventually, objects, startTestOperator } from '../support/operator-harness.js';
import { startFaultProxy, type Exchange, type ProxiedRequest } from './support/fault-proxy.js';

/**
 * The leader that is made to lose its Lease has the shorter timings: the successor may take over 1 s after it must
 * have given up. Everyone else has long ones: the test's API server and both operators share one event loop, which a loaded
 * machine stalls for seconds, and a renewal answered late loses the Lease like any other.
 */
const SHORT_TIMINGS = { leaseDurationMs: 7_000, renewDeadlineMs: 6_000, retryPeriodMs: 200 };
const LONG_TIMINGS = { leaseDurationMs: 20_000, renewDeadlineMs: 15_000, retryPeriodMs: 200 };
/** How late the old leader hears back from each of its writes (the server applies them at once). */
const SLOW_WRITE_MS = 1_500;
const APPS = 24;

const isLease = (request: Pick<ProxiedRequest, 'path'>): boolean => request.path.startsWith('/apis/coordination.k8s.io/');
const isEventWrite = (exchange: Pick<Exchange, 'method' | 'path'>): boolean =>
  exchange.method !== 'GET' && /\/events(\/|$)/.test(exchange.path);
/** How long an Event write of the stopping operator travels to the server: longer than the stop's 5 s Event flush. */
const EVENT_TRANSIT_MS = 7_000;
const isWrite = (exchange: Pick<Exchange, 'method' | 'path'>): boolean =>
  exchange.method !== 'GET' && !exchange.path.startsWith('/apis/coordination.k8s.io/');

for (const target of selectedTargets()) {
  test(`[${target}] a leader that loses its Lease mid-burst writes nothing after its successor's first write, and the successor converges everything`, async (t) => {
    const scenario = await clusterForTest(t, target, { envtest: { controllerManager: true } });
    const { cluster, admin: client } = scenario;
    const [oldProxy, newProxy] = [await startFaultProxy(cluster.server), await startFaultProxy(cluster.server)];
    t.teardown(() => Promise.all([oldProxy.close(), newProxy.close()]));
    const lease = { namespace: OPERATOR_NAMESPACE, name: LEADER_ELECTION_LEASE };

    const old = await startTestOperator(
      cluster,
      { leaderElection: { ...lease, ...SHORT_TIMINGS }, maxConcurrentReconciles: 4 },
      { server: oldProxy.url },
    );
    t.teardown(() => old.operator.stop());
    // Every write of the old leader but its Lease renewals is applied by the server at once and answered late, so
    // its reconciles are mid-way through their writes whenever it loses the Lease.
    oldProxy.add({ match: (request) => isWrite(request) && !isLease(request), answer: { kind: 'delayed-answer', ms: SLOW_WRITE_MS } });
    const successor = await startTestOperator(
      cluster,
      { leaderElection: { ...lease, ...LONG_TIMINGS }, maxConcurrentReconciles: 4 },
      { server: newProxy.url, waitForStart: false },
    );
    t.teardown(() => successor.operator.stop());

    const ns = 'fencing';
    await scenario.createNamespace(
      ns,
      objects.configMap(ns, 'shared', { V: '1' }),
      ...Array.from({ length: APPS }, (_, i) => objects.customApp(ns, `app-${i}`, { image: 'example/app:1', configMapName: 'shared' })),
    );
    await eventually('the old leader is writing', () => oldProxy.exchanges.filter(isWrite).length >= 4, 30_000);

    // The old leader's renewals now reach the server, but their answers never come back: it cannot know it
    // still holds the Lease, and must give up after the renew deadline.
    oldProxy.add({ match: (request) => isLease(request) && request.method === 'PUT', answer: { kind: 'lost-answer' } });
    const lostAt = performance.now();
    await t.throwsAsync(old.operator.done, { message: /leader election lost/ });
    t.truthy(old.operator.client.fenced, 'the old leader fenced its client');
    t.is(old.logs.find('fenced: leadership lost, writes refused').length, 1);
    await old.operator.stop();

    await successor.operator.started;
    const converged = async (): Promise<boolean> => {
      const deployments = await client.list<Deployment>(DEPLOYMENTS, { namespace: ns });
      return deployments.items.length === APPS;
    };
    await eventually('the successor converged every CustomApp', converged, 60_000);

    const successorWrites = newProxy.exchanges.filter(isWrite);
    t.true(successorWrites.length > 0, 'the successor wrote');
    const firstSuccessorWrite = Math.min(...successorWrites.map((exchange) => exchange.sentAt));
    const oldWrites = oldProxy.exchanges.filter(isWrite);
    const late = oldWrites.filter((exchange) => (exchange.settledAt ?? Number.POSITIVE_INFINITY) >= firstSuccessorWrite);
    t.log(
      `old leader: ${oldWrites.length} writes, the last settled ${Math.round(Math.max(...oldWrites.map((w) => w.settledAt ?? 0)) - lostAt)} ms after its renewals broke; ` +
        `successor: first write ${Math.round(firstSuccessorWrite - lostAt)} ms after`,
    );
    t.deepEqual(
      late.map((exchange) => `${exchange.method} ${exchange.path} +${Math.round((exchange.settledAt ?? 0) - firstSuccessorWrite)} ms`),
      [],
      'no write of the old leader landed after the successor began writing',
    );
    const apps = await client.list(CUSTOM_APPS, { namespace: ns });
    t.is(apps.items.length, APPS);
  });

  test(`[${target}] a stop whose Event flush times out aborts the Event write still on its way before it releases the Lease`, async (t) => {
    const scenario = await clusterForTest(t, target);
    const { cluster, admin: client } = scenario;
    const proxy = await startFaultProxy(cluster.server);
    t.teardown(() => proxy.close());
    const lease = LEADER_ELECTION_LEASE;
    const running = await startTestOperator(
      cluster,
      { leaderElection: { namespace: OPERATOR_NAMESPACE, name: lease, ...LONG_TIMINGS } },
      { server: proxy.url },
    );
    t.teardown(() => running.operator.stop());
    const ns = 'stop-fence';
    await scenario.createNamespace(
      ns,
      objects.configMap(ns, 'config', { V: '1' }),
      objects.customApp(ns, 'app', { image: 'example/app:1', configMapName: 'config' }),
    );
    await eventually(
      'the Deployment exists',
      async () => (await client.list<Deployment>(DEPLOYMENTS, { namespace: ns })).items.length === 1,
    );
    // From now on an Event write reaches the server only long after it was sent, unless its sender gives up first.
    const slowEvents = proxy.add({ match: isEventWrite, answer: { kind: 'delayed-request', ms: EVENT_TRANSIT_MS } });
    await client.patch(CONFIGMAPS, ns, 'config', 'merge', { data: { V: '2' } });
    await eventually('an Event write is on its way', () => proxy.hits(slowEvents) > 0);
    const sentAt = performance.now();
    await running.operator.stop();
    t.is((await client.get<Lease>(LEASES, OPERATOR_NAMESPACE, lease)).spec?.holderIdentity, '', 'the Lease was released');
    await new Promise((done) => setTimeout(done, Math.max(0, sentAt + EVENT_TRANSIT_MS + 500 - performance.now())));

    const release = proxy.exchanges.filter((exchange) => exchange.method === 'PUT' && isLease(exchange)).at(-1);
    t.truthy(release, 'the release went through the proxy');
    const releasedAt = release?.sentAt ?? 0;
    const late = proxy.exchanges.filter((exchange) => isEventWrite(exchange) && exchange.sentAt >= releasedAt);
    t.deepEqual(
      late.map((exchange) => `${exchange.method} ${exchange.path}`),
      [],
      'no Event write reached the server after the release',
    );
    // The abort and the release go on two connections, so the proxy may see them in either order within a moment;
    // what matters is that the Event write was withdrawn before the server had applied (and answered) the release.
    const answeredAt = release?.settledAt ?? 0;
    const abandoned = proxy.abandoned.filter(isEventWrite);
    t.true(abandoned.length > 0, 'the Event write was given up');
    t.deepEqual(
      abandoned
        .filter((request) => request.at >= answeredAt)
        .map((request) => `${request.method} ${request.path} +${Math.round(request.at - answeredAt)} ms after the release was answered`),
      [],
      'every Event write still on its way was aborted before the release took effect',
    );
  });
}
