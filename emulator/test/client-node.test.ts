// @kubernetes/client-node against the emulator: list-then-watch consistency, 410 after compaction, bookmarks,
// field selectors, conflicts, status and generation semantics, and garbage collection.
import test from 'ava';
import { ApiException, AppsV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { eventually } from '../../test/support/eventually.js';
import { distDir, emulatorFixture, type EmulatorFixture } from './support.js';

let fx: EmulatorFixture;
let core: CoreV1Api;
let apps: AppsV1Api;
let custom: CustomObjectsApi;

test.before(async () => {
  fx = await emulatorFixture({ bookmarkIntervalMs: 100 });
  await fx.apply(`${distDir}customapp-crd.k8s.yaml`);
  const kc = fx.kubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  for (const namespace of ['consistency', 'compaction', 'bookmarks', 'selectors', 'writes', 'gc'])
    await core.createNamespace({ body: { metadata: { name: namespace } } });
});

test.after.always(async () => {
  await fx?.close();
});

interface Seen {
  type: string;
  name: string;
  rv: number;
  data?: Record<string, string>;
}

function watchConfigMaps(
  namespace: string,
  query: Record<string, string | number | boolean | undefined>,
  seen: Seen[],
): Promise<AbortController> {
  return new Watch(fx.kubeConfig()).watch(
    `/api/v1/namespaces/${namespace}/configmaps`,
    query,
    (type, obj) => {
      seen.push({ type, name: obj.metadata?.name, rv: Number(obj.metadata?.resourceVersion), data: obj.data });
    },
    () => undefined,
  );
}

test('a list followed by a watch from its resourceVersion misses nothing and repeats nothing under concurrent writes', async (t) => {
  const ns = 'consistency';
  let lastWrite = 0;
  const noted = (o: { metadata?: { resourceVersion?: string } }) => {
    lastWrite = Math.max(lastWrite, Number(o.metadata?.resourceVersion ?? 0));
  };
  const writes = (async () => {
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: `cm-${round}-${i}` }, data: { v: '0' } } }).then(noted),
        ),
      );
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          core
            .patchNamespacedConfigMap(
              { namespace: ns, name: `cm-${round}-${i}`, body: { data: { v: '1' } } },
              setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
            )
            .then(noted),
        ),
      );
      await Promise.all(
        Array.from({ length: 10 }, (_, i) => core.deleteNamespacedConfigMap({ namespace: ns, name: `cm-${round}-${i * 2}` })),
      );
    }
  })();
  await new Promise((r) => setTimeout(r, 5));
  const list = await core.listNamespacedConfigMap({ namespace: ns });
  const listRv = Number(list.metadata!.resourceVersion);
  const seen: Seen[] = [];
  const controller = await watchConfigMaps(ns, { resourceVersion: String(listRv) }, seen);
  t.teardown(() => controller.abort());
  await writes;
  const final = await core.listNamespacedConfigMap({ namespace: ns });
  const expected = JSON.stringify(final.items.map((i) => [i.metadata!.name!, i.data]).sort());
  const replayed = () => {
    const state = new Map(list.items.map((i) => [i.metadata!.name!, i.data]));
    for (const e of seen) {
      if (e.type === 'DELETED') state.delete(e.name);
      else state.set(e.name, e.data);
    }
    return JSON.stringify([...state].sort());
  };
  await eventually('the list plus the watch to equal the final list', () => (replayed() === expected ? true : undefined), 5000);
  t.true(
    seen.some((e) => e.rv === lastWrite),
    'the last write was seen',
  );
  const rvs = seen.map((e) => e.rv);
  t.true(
    rvs.every((rv) => rv > listRv),
    'every event is newer than the list',
  );
  t.deepEqual(
    rvs,
    [...new Set(rvs)].sort((a, b) => a - b),
    'resourceVersions strictly increase, no duplicates',
  );
  t.is(final.items.length, 50);
});

// Serial: compaction forgets every collection's history, which would expire the other tests' watches.
test.serial('a watch from a compacted resourceVersion gets 410 Gone', async (t) => {
  const ns = 'compaction';
  const created = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'old' } } });
  await core.patchNamespacedConfigMap(
    { namespace: ns, name: 'old', body: { data: { a: '1' } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  fx.emulator.faults.compact();
  const error = await new Promise<unknown>((resolve) => {
    void new Watch(fx.kubeConfig())
      .watch(
        `/api/v1/namespaces/${ns}/configmaps`,
        { resourceVersion: created.metadata!.resourceVersion },
        (type, obj) => resolve({ type, obj }),
        (err) => resolve(err),
      )
      .then((c) => t.teardown(() => c.abort()));
  });
  t.like(error, { type: 'ERROR', obj: { kind: 'Status', code: 410, reason: 'Expired' } });
});

test('bookmarks arrive when requested, and not otherwise', async (t) => {
  const ns = 'bookmarks';
  const withBookmarks: Seen[] = [];
  const without: Seen[] = [];
  const a = await watchConfigMaps(ns, { allowWatchBookmarks: true, resourceVersion: String(fx.emulator.resourceVersion) }, withBookmarks);
  const b = await watchConfigMaps(ns, { resourceVersion: String(fx.emulator.resourceVersion) }, without);
  t.teardown(() => {
    a.abort();
    b.abort();
  });
  await eventually('a BOOKMARK', () => (withBookmarks.some((e) => e.type === 'BOOKMARK') ? true : undefined), 3000);
  await new Promise((r) => setTimeout(r, 250));
  t.true(withBookmarks.every((e) => e.type === 'BOOKMARK' && e.rv > 0));
  t.deepEqual(without, []);
});

test('fieldSelector=metadata.name=x delivers only x', async (t) => {
  const ns = 'selectors';
  const seen: Seen[] = [];
  const controller = await watchConfigMaps(
    ns,
    { fieldSelector: 'metadata.name=x', resourceVersion: String(fx.emulator.resourceVersion) },
    seen,
  );
  t.teardown(() => controller.abort());
  for (const name of ['w', 'x', 'y']) await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name } } });
  await core.deleteNamespacedConfigMap({ namespace: ns, name: 'y' });
  await core.deleteNamespacedConfigMap({ namespace: ns, name: 'x' });
  await eventually('two events', () => (seen.length >= 2 ? true : undefined), 3000);
  await new Promise((r) => setTimeout(r, 50));
  t.deepEqual(
    seen.map((e) => `${e.type} ${e.name}`),
    ['ADDED x', 'DELETED x'],
  );
  const listed = await core.listNamespacedConfigMap({ namespace: ns, fieldSelector: 'metadata.name=w' });
  t.deepEqual(
    listed.items.map((i) => i.metadata!.name),
    ['w'],
  );
});

test('an update with a stale resourceVersion gets 409 Conflict', async (t) => {
  const ns = 'writes';
  const created = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'stale' }, data: { a: '1' } } });
  await core.replaceNamespacedConfigMap({ namespace: ns, name: 'stale', body: { ...created, data: { a: '2' } } });
  const error = await t.throwsAsync(
    core.replaceNamespacedConfigMap({ namespace: ns, name: 'stale', body: { ...created, data: { a: '3' } } }),
    { instanceOf: ApiException },
  );
  t.is((error as ApiException<string>).code, 409);
  t.like(JSON.parse((error as ApiException<string>).body), {
    reason: 'Conflict',
    message:
      'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
  });
});

const customApps = { group: 'app.example.com', version: 'v1', namespace: 'writes', plural: 'customapps' };

test('a write to the main resource ignores .status, and /status writes only .status', async (t) => {
  const created: any = await custom.createNamespacedCustomObject({
    ...customApps,
    body: {
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      metadata: { name: 'status' },
      spec: { image: 'a' },
      status: { readyReplicas: 3 },
    },
  });
  t.is(created.status, undefined);
  const updated: any = await custom.replaceNamespacedCustomObject({
    ...customApps,
    name: 'status',
    body: { ...created, spec: { image: 'b' }, status: { readyReplicas: 4 } },
  });
  t.is(updated.status, undefined);
  t.is(updated.spec.image, 'b');
  const status: any = await custom.replaceNamespacedCustomObjectStatus({
    ...customApps,
    name: 'status',
    body: { ...updated, spec: { image: 'c' }, status: { readyReplicas: 5 } },
  });
  t.deepEqual(status.status, { readyReplicas: 5 });
  t.is(status.spec.image, 'b');
});

test('generation bumps on spec changes only', async (t) => {
  const created: any = await custom.createNamespacedCustomObject({
    ...customApps,
    body: { apiVersion: 'app.example.com/v1', kind: 'CustomApp', metadata: { name: 'gen' }, spec: { image: 'a', rollout: {} } },
  });
  t.is(created.metadata.generation, 1);
  t.like(created.spec, { image: 'a', rollout: { debounceSeconds: 0, paused: false } }, 'the schema defaults are applied');
  t.false('replicas' in created.spec, 'spec.replicas has no default');
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const labelled: any = await custom.patchNamespacedCustomObject(
    { ...customApps, name: 'gen', body: { metadata: { labels: { a: 'b' }, annotations: { c: 'd' } } } },
    merge,
  );
  t.is(labelled.metadata.generation, 1);
  const status: any = await custom.patchNamespacedCustomObjectStatus(
    { ...customApps, name: 'gen', body: { status: { readyReplicas: 1 } } },
    merge,
  );
  t.is(status.metadata.generation, 1);
  const spec: any = await custom.patchNamespacedCustomObject({ ...customApps, name: 'gen', body: { spec: { replicas: 2 } } }, merge);
  t.is(spec.metadata.generation, 2);
  const deployment = await apps.createNamespacedDeployment({
    namespace: 'writes',
    body: {
      metadata: { name: 'gen' },
      spec: {
        selector: { matchLabels: { app: 'gen' } },
        template: { metadata: { labels: { app: 'gen' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    },
  });
  t.is(deployment.metadata!.generation, 1);
  const labels = await apps.patchNamespacedDeployment(
    { namespace: 'writes', name: 'gen', body: { metadata: { labels: { x: 'y' } } } },
    merge,
  );
  t.is(labels.metadata!.generation, 1);
  const scaled = await apps.patchNamespacedDeployment({ namespace: 'writes', name: 'gen', body: { spec: { replicas: 3 } } }, merge);
  t.is(scaled.metadata!.generation, 2);
});

test('garbage collection deletes the objects a deleted owner owned (background propagation)', async (t) => {
  const ns = 'gc';
  const owner: any = await custom.createNamespacedCustomObject({
    ...customApps,
    namespace: ns,
    body: { apiVersion: 'app.example.com/v1', kind: 'CustomApp', metadata: { name: 'owner' }, spec: { image: 'a' } },
  });
  const ownerReferences = [
    {
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      name: 'owner',
      uid: owner.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'owned', ownerReferences } } });
  await core.createNamespacedConfigMap({
    namespace: ns,
    body: { metadata: { name: 'held', ownerReferences, finalizers: ['example.com/hold'] } },
  });
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'free' } } });
  await custom.deleteNamespacedCustomObject({ ...customApps, namespace: ns, name: 'owner' });
  await eventually(
    'the owned ConfigMap to be collected',
    async () => {
      const names = (await core.listNamespacedConfigMap({ namespace: ns })).items.map((i) => i.metadata!.name);
      return names.includes('owned') ? undefined : names;
    },
    3000,
  );
  const held = await core.readNamespacedConfigMap({ namespace: ns, name: 'held' });
  t.truthy(held.metadata!.deletionTimestamp, 'a dependent with a finalizer is being deleted, not gone');
  await core.readNamespacedConfigMap({ namespace: ns, name: 'free' });
  t.pass();
});
