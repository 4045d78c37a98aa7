// A slow namespace LIST in a collapsed namespace: a ConfigMap created, or changed, inside its window (seen as an event or by a relist) still reaches its Deployment.
import test, { type ExecutionContext } from 'ava';
import { CONFIG_HASH_ANNOTATION } from '../../api/customapp.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import type { DependencyWatchConfig } from '../../operator/dependencies/dependency-watch.js';
import type { KubeClient } from '../../operator/kube/client.js';
import { CONFIGMAPS } from '../../operator/kube/resources.js';
import { podAnnotation } from '../support/cluster-reads.js';
import { startFaultProxy, type FaultProxy, type ProxiedRequest } from '../reliability/support/fault-proxy.js';
import { type ApiTarget, selectedTargets } from '../support/targets.js';
import { assertInvariants } from '../support/invariants.js';
import { clusterForTest, createAll, eventually, objects, startTestOperator, type TestOperator } from '../support/operator-harness.js';

/** How long the proxy holds every answer to a ConfigMap LIST in the namespace: the window. */
const SLOW_LIST_MS = 3_000;

/** The window of the relist test: long enough for the namespace watch to break, miss a change and relist. */
const RELIST_WINDOW_MS = 8_000;

/** What each test gets: a namespace collapsed into one synced watch, behind a fault proxy. */
interface CollapsedNamespace {
  readonly ns: string;
  readonly proxy: FaultProxy;
  readonly running: TestOperator;
  readonly client: KubeClient;
  /** The config hash on the pod template of the Deployment of CustomApp `name`. */
  readonly hashOf: (name: string) => Promise<string | undefined>;
  /** True for a ConfigMap LIST in the namespace; with `wholeNamespace`, only one of them all (no name selector). */
  readonly configMapList: (request: ProxiedRequest, wholeNamespace?: boolean) => boolean;
}

/**
 * Runs `body` against an operator (collapse past 2 refs, split below 1, the given watch settings) whose namespace
 * `ns` holds the CustomApps one, two and three, rolled out, and `late-config`, which nobody references yet (the
 * namespace watch drops its changes); then checks the invariants. All of it is stopped when the test ends.
 */
async function withCollapsedNamespace(
  t: ExecutionContext,
  target: ApiTarget,
  ns: string,
  watch: DependencyWatchConfig,
  body: (context: CollapsedNamespace) => Promise<void>,
): Promise<void> {
  const scenario = await clusterForTest(t, target, { envtest: { controllerManager: true } });
  const { cluster, admin } = scenario;
  const proxy = await startFaultProxy(cluster.server);
  t.teardown(() => proxy.close());
  // Past 2 refs the namespace collapses into one watch; 2 one-name lists in flight make the next new ref list
  // the whole namespace instead.
  const running = await startTestOperator(cluster, { registry: { collapseThreshold: 2, splitThreshold: 1, watch } }, { server: proxy.url });
  t.teardown(() => running.operator.stop());
  const operator = running.operator;
  const settled = ['one', 'two', 'three'];
  const reads = await scenario.createNamespace(
    ns,
    ...settled.map((name) => objects.configMap(ns, `${name}-config`, { V: name })),
    ...settled.map((name) => objects.customApp(ns, name, { image: 'example/app:1', configMapName: `${name}-config` })),
    objects.configMap(ns, 'late-config', { V: 'before' }),
  );
  const hashOf = async (name: string): Promise<string | undefined> => podAnnotation(await reads.deployment(name), CONFIG_HASH_ANNOTATION);
  await eventually('the namespace collapsed into one synced watch', () =>
    operator.registry!.streams().some((stream) => stream.namespace === ns && stream.scope === 'namespace' && stream.synced),
  );
  for (const name of settled)
    await eventually(`${name} rolled out`, async () => (await hashOf(name)) === contentHash({ data: { V: name } }));
  const configMapList = (request: ProxiedRequest, wholeNamespace = false): boolean =>
    request.method === 'GET' &&
    !request.watch &&
    request.path === `/api/v1/namespaces/${ns}/configmaps` &&
    !(wholeNamespace && request.query.has('fieldSelector'));
  await body({ ns, proxy, running, client: admin, hashOf, configMapList });
  await assertInvariants(t, cluster, operator, admin);
}

/** Two new refs take the two one-name list slots, the third lists the whole namespace: answers when all went out. */
async function startNamespaceSnapshot(
  { ns, client, proxy }: CollapsedNamespace,
  lists: { readonly namespace: number; readonly names: number },
): Promise<void> {
  await createAll(
    client,
    ...['four', 'five', 'six'].map((name) => objects.customApp(ns, name, { image: 'example/app:1', configMapName: `${name}-config` })),
  );
  await eventually('the namespace LIST went out', () => proxy.hits(lists.namespace) === 1 && proxy.hits(lists.names) === 2, 10_000);
}

for (const target of selectedTargets()) {
  test(`[${target}] a ConfigMap created and one modified while a namespace LIST is slow reach their Deployments, with no stale hash`, async (t) => {
    await withCollapsedNamespace(t, target, 'snapshot-window', {}, async (context) => {
      const { ns, client, proxy, running, hashOf, configMapList } = context;
      // The window: every ConfigMap LIST in the namespace is evaluated at once and answered SLOW_LIST_MS later.
      const slowNamespaceLists = proxy.add({
        match: (request) => configMapList(request, true),
        answer: { kind: 'delayed-answer', ms: SLOW_LIST_MS },
      });
      const slowNameLists = proxy.add({ match: configMapList, answer: { kind: 'delayed-answer', ms: SLOW_LIST_MS } });
      await startNamespaceSnapshot(context, { namespace: slowNamespaceLists, names: slowNameLists });
      const opened = Date.now();
      // Inside the window: a ConfigMap is created and another changes; the namespace watch sees both while no
      // CustomApp references them yet, and then CustomApps that do are created.
      await createAll(client, objects.configMap(ns, 'new-config', { V: 'created in the window' }));
      await client.patch(CONFIGMAPS, ns, 'late-config', 'merge', { data: { V: 'changed in the window' } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await createAll(
        client,
        objects.customApp(ns, 'created', { image: 'example/app:1', configMapName: 'new-config' }),
        objects.customApp(ns, 'changed', { image: 'example/app:1', configMapName: 'late-config' }),
      );
      await eventually('both new CustomApps acquired their refs', () =>
        ['ConfigMap/new-config', 'ConfigMap/late-config'].every((ref) =>
          running!.operator.dependencies.watched().some((watched) => `${watched.kind}/${watched.name}` === ref),
        ),
      );
      t.true(Date.now() - opened < SLOW_LIST_MS, 'the refs were taken while the namespace LIST was still unanswered');

      await eventually('the ConfigMap created in the window reached its Deployment', async () => {
        return (await hashOf('created')) === contentHash({ data: { V: 'created in the window' } });
      });
      await eventually('the ConfigMap changed in the window reached its Deployment', async () => {
        return (await hashOf('changed')) === contentHash({ data: { V: 'changed in the window' } });
      });
      proxy.remove(slowNamespaceLists);
      proxy.remove(slowNameLists);
      // A later revert to the content before the window is a change too, and rolls.
      await client.patch(CONFIGMAPS, ns, 'late-config', 'merge', { data: { V: 'before' } });
      await eventually(
        'the revert reached its Deployment',
        async () => (await hashOf('changed')) === contentHash({ data: { V: 'before' } }),
      );
    });
  });

  test(`[${target}] a ConfigMap referenced after the namespace watch relisted during a slow namespace LIST gets the content that relist saw`, async (t) => {
    // Watches the server ends every 2 s, so that the namespace watch comes back (and meets the faults) within the window.
    await withCollapsedNamespace(t, target, 'snapshot-relist', { timeoutSeconds: 2 }, async (context) => {
      const { ns, client, proxy, running, hashOf, configMapList } = context;
      const slowNamespaceList = proxy.add({
        match: (request) => configMapList(request, true),
        answer: { kind: 'delayed-answer', ms: RELIST_WINDOW_MS },
        times: 1,
      });
      const slowNameLists = proxy.add({ match: configMapList, answer: { kind: 'delayed-answer', ms: RELIST_WINDOW_MS }, times: 2 });
      await startNamespaceSnapshot(context, { namespace: slowNamespaceList, names: slowNameLists });
      const opened = Date.now();
      const namespaceWatch = (request: ProxiedRequest): boolean =>
        request.watch && request.path === `/api/v1/namespaces/${ns}/configmaps` && !request.query.has('fieldSelector');

      // The namespace watch breaks (500s, so it backs off and would resume where it was); late-config changes
      // meanwhile; then its resume meets a 410, so the change reaches it only through a relist, never as an event.
      const down = proxy.add({ match: namespaceWatch, answer: { kind: 'status', code: 500, reason: 'InternalError', message: 'down' } });
      await eventually('the namespace watch is down', () => proxy.hits(down) > 0, 5_000);
      await client.patch(CONFIGMAPS, ns, 'late-config', 'merge', { data: { V: 'changed while the watch was down' } });
      proxy.remove(down);
      const sentBefore = proxy.exchanges.length;
      const gone = proxy.add({
        match: namespaceWatch,
        answer: { kind: 'watch-error', code: 410, reason: 'Expired', message: 'too old resource version' },
        times: 1,
      });
      await eventually('the namespace watch met the 410', () => proxy.hits(gone) === 1, 5_000);
      await eventually('its relist was answered', () =>
        proxy.exchanges
          .slice(sentBefore)
          .some(
            (exchange) => exchange.method === 'GET' && exchange.path === `/api/v1/namespaces/${ns}/configmaps` && exchange.code === 200,
          ),
      );

      await createAll(client, objects.customApp(ns, 'changed', { image: 'example/app:1', configMapName: 'late-config' }));
      await eventually('the new CustomApp acquired its ref', () =>
        running.operator.dependencies.watched().some((watched) => watched.kind === 'ConfigMap' && watched.name === 'late-config'),
      );
      t.true(Date.now() - opened < RELIST_WINDOW_MS, 'the ref was taken while the namespace LIST was still unanswered');

      const changed = contentHash({ data: { V: 'changed while the watch was down' } });
      await eventually('the change the relist saw reached the Deployment', async () => (await hashOf('changed')) === changed);
      // Past the window the older namespace LIST has answered; the Deployment still has the newer content, and a
      // revert to the content before the window is a change, and rolls.
      await new Promise((resolve) => setTimeout(resolve, opened + RELIST_WINDOW_MS + 500 - Date.now()));
      t.is(await hashOf('changed'), changed);
      await client.patch(CONFIGMAPS, ns, 'late-config', 'merge', { data: { V: 'before' } });
      await eventually(
        'the revert reached its Deployment',
        async () => (await hashOf('changed')) === contentHash({ data: { V: 'before' } }),
      );
    });
  });
}
