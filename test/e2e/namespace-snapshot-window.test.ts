// A slow namespace LIST in a collapsed namespace: a ConfigMap created, and one changed, inside its window still reach their Deployments.
import test from 'ava';
import { CONFIG_HASH_ANNOTATION } from '../../infra/customapp-api.js';
import { contentHash } from '../../operator/deps/content-hash.js';
import { CONFIGMAPS, DEPLOYMENTS } from '../../operator/kube/resources.js';
import type { Deployment } from '../../operator/kube/objects.js';
import { startFaultProxy, type FaultProxy, type ProxiedRequest } from '../reliability/support/fault-proxy.js';
import { selectedTargets, startCluster, type TestCluster } from '../support/cluster.js';
import { assertInvariants } from '../support/invariants.js';
import {
  adminClient,
  createAll,
  createNamespace,
  eventually,
  getIfExists,
  installOperatorResources,
  objects,
  startTestOperator,
  type TestOperator,
} from '../support/operator-harness.js';

/** How long the proxy holds every answer to a ConfigMap LIST in the namespace: the window. */
const SLOW_LIST_MS = 3_000;

for (const target of selectedTargets()) {
  test(`[${target}] a ConfigMap created and one modified while a namespace LIST is slow reach their Deployments, with no stale hash`, async (t) => {
    const ns = 'snapshot-window';
    let cluster: TestCluster | undefined;
    let proxy: FaultProxy | undefined;
    let running: TestOperator | undefined;
    const admin = { client: undefined as Awaited<ReturnType<typeof adminClient>> | undefined };
    try {
      cluster = await startCluster(target, { envtest: { controllerManager: true } });
      await installOperatorResources(cluster);
      admin.client = await adminClient(cluster);
      const client = admin.client;
      proxy = await startFaultProxy(cluster.server);
      // Past 2 refs the namespace collapses into one watch; 2 one-name lists in flight make the next new ref list
      // the whole namespace instead.
      running = await startTestOperator(cluster, { registry: { collapseThreshold: 2, splitThreshold: 1 } }, { server: proxy.url });
      const hashOf = async (name: string): Promise<string | undefined> =>
        (await getIfExists<Deployment>(client, DEPLOYMENTS, ns, name))?.spec.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION];

      await createNamespace(client, ns);
      const settled = ['one', 'two', 'three'];
      await createAll(client, ...settled.map((name) => objects.configMap(ns, `${name}-config`, { V: name })));
      await createAll(
        client,
        ...settled.map((name) => objects.customApp(ns, name, { image: 'example/app:1', configMapName: `${name}-config` })),
      );
      // `late-config` exists before the window and nobody references it yet: the namespace watch drops its changes.
      await createAll(client, objects.configMap(ns, 'late-config', { V: 'before' }));
      await eventually('the namespace collapsed into one synced watch', () =>
        running!.operator.registry!.streams().some((stream) => stream.namespace === ns && stream.scope === 'namespace' && stream.synced),
      );
      for (const name of settled)
        await eventually(`${name} rolled out`, async () => (await hashOf(name)) === contentHash({ data: { V: name } }));

      // The window: every ConfigMap LIST in the namespace is evaluated at once and answered SLOW_LIST_MS later.
      const configMapList = (request: ProxiedRequest): boolean =>
        request.method === 'GET' && !request.watch && request.path === `/api/v1/namespaces/${ns}/configmaps`;
      const slowNamespaceLists = proxy.add({
        match: (request) => configMapList(request) && !request.query.has('fieldSelector'),
        answer: { kind: 'delayed-answer', ms: SLOW_LIST_MS },
      });
      const slowNameLists = proxy.add({ match: configMapList, answer: { kind: 'delayed-answer', ms: SLOW_LIST_MS } });
      // Two new refs take the two one-name list slots; the third lists the whole namespace (slow).
      await createAll(
        client,
        ...['four', 'five', 'six'].map((name) => objects.customApp(ns, name, { image: 'example/app:1', configMapName: `${name}-config` })),
      );
      await eventually(
        'the namespace LIST went out',
        () => proxy!.hits(slowNamespaceLists) === 1 && proxy!.hits(slowNameLists) === 2,
        10_000,
      );
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
      await eventually('both new CustomApps hold their refs', () =>
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
      await assertInvariants(t, cluster, running.operator, client);
    } finally {
      await running?.operator.stop();
      admin.client?.close();
      await proxy?.close();
      await cluster?.stop();
    }
  });
}
