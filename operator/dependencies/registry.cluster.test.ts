// The dependency registry against real servers: creation and deletion, collapse and split, Secrets never logged, 1,000 refs.
import test, { type ExecutionContext } from 'ava';
import { performance } from 'node:perf_hooks';
import type { Subscription } from 'rxjs';
import { KubeClient } from '../kube/client.js';
import { connectionFromKubeConfig } from '../kube/connection.js';
import type { KubeObject } from '../kube/objects.js';
import { CONFIGMAPS, SECRETS } from '../kube/resources.js';
import { Registry } from 'prom-client';
import { selectedTargets, startCluster, type TestCluster } from '../../test/support/targets.js';
import { capturedLogger } from '../watch/testing/captured-logger.js';
import { eventually } from '../../test/support/eventually.js';
import { settledOpenWatches } from '../watch/testing/cluster-helpers.js';
import { createNamespace, recordedAdminCluster } from '../kube/testing/admin-cluster.js';
import { contentHash } from './content-hash.js';
import { keyedContentHash } from './keyed-hash.js';
import { DependencyRegistry } from './registry.js';
import { MAX_OBJECT_BYTES, NAMESPACE_PAGE_BYTES, NAMESPACE_PAGE_SIZE } from './dependency-watch.js';
import { RegistryDependencySource } from './registry-source.js';
import { refKey, type DependencyRef, type DependencyState } from './source.js';

interface Data extends KubeObject {
  data?: Record<string, string>;
  type?: string;
}

const configMap = (name: string, data: Record<string, string>): Data => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

/** Runs `work` over `items` with at most `width` in flight. */
async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

for (const target of selectedTargets()) {
  let cluster: TestCluster;
  let client: KubeClient;
  const requests = recordedAdminCluster(test, target, (admin) => ({ cluster, client } = admin));

  test.serial(
    `[${target}] an object created after acquire is an emission, a metadata edit is none, and a delete makes it absent`,
    async (t) => {
      await createNamespace(client, 'deps-life');
      const registry = new DependencyRegistry({ client });
      t.teardown(() => registry.close());
      const ref: DependencyRef = { kind: 'ConfigMap', namespace: 'deps-life', name: 'late' };
      const states: DependencyState[] = [];
      const subscription = registry.acquire(ref).subscribe((state) => states.push(state));
      t.teardown(() => subscription.unsubscribe());
      await eventually('synced', () => states.length === 1);
      t.deepEqual(states[0], { ref, exists: false });
      const created = await client.create(CONFIGMAPS, 'deps-life', configMap('late', { a: '1' }));
      await eventually('created', () => states.length === 2);
      t.like(states[1], { exists: true, hash: contentHash({ data: { a: '1' } }), resourceVersion: created.metadata.resourceVersion });
      await client.patch(CONFIGMAPS, 'deps-life', 'late', 'merge', { metadata: { labels: { touched: 'yes' } } });
      await client.patch(CONFIGMAPS, 'deps-life', 'late', 'merge', { data: { a: '2' } });
      await eventually('changed', () => states.length >= 3);
      t.like(states[2], { exists: true, hash: contentHash({ data: { a: '2' } }) }, 'the label edit in between emitted nothing');
      await client.delete(CONFIGMAPS, 'deps-life', 'late');
      await eventually('deleted', () => states.length >= 4);
      t.deepEqual(states.slice(3), [{ ref, exists: false }]);
    },
  );

  test.serial(
    `[${target}] past the threshold a namespace collapses into one watch, splits back below the lower one, and every change still arrives`,
    async (t) => {
      await createNamespace(client, 'deps-switch');
      const names = ['s0', 's1', 's2', 's3'];
      await inParallel(names, 4, (name) => client.create(CONFIGMAPS, 'deps-switch', configMap(name, { v: '0' })));
      const { logger, lines } = capturedLogger('info');
      const registry = new DependencyRegistry({ client, collapseThreshold: 3, splitThreshold: 2, logger });
      t.teardown(() => registry.close());
      const latest = new Map<string, DependencyState>();
      const subscriptions = new Map<string, Subscription>(
        names.map((name) => [
          name,
          registry.acquire({ kind: 'ConfigMap', namespace: 'deps-switch', name }).subscribe((state) => latest.set(name, state)),
        ]),
      );
      t.teardown(() => {
        for (const subscription of subscriptions.values()) subscription.unsubscribe();
      });
      await eventually(
        'collapsed',
        () => latest.size === 4 && registry.streams().length === 1 && registry.streams()[0]!.scope === 'namespace',
      );
      await client.patch(CONFIGMAPS, 'deps-switch', 's0', 'merge', { data: { v: '1' } });
      await eventually(
        's0 changed through the namespace watch',
        () => (latest.get('s0') as { hash?: string }).hash === contentHash({ data: { v: '1' } }),
      );
      for (const name of ['s3', 's2', 's1']) subscriptions.get(name)!.unsubscribe();
      await client.patch(CONFIGMAPS, 'deps-switch', 's0', 'merge', { data: { v: '2' } });
      await eventually('split', () => registry.streams().length === 1 && registry.streams()[0]!.name === 's0');
      await eventually(
        'the change made during the split arrived',
        () => (latest.get('s0') as { hash?: string }).hash === contentHash({ data: { v: '2' } }),
      );
      await client.patch(CONFIGMAPS, 'deps-switch', 's0', 'merge', { data: { v: '3' } });
      await eventually(
        's0 changed through its own watch',
        () => (latest.get('s0') as { hash?: string }).hash === contentHash({ data: { v: '3' } }),
      );
      t.deepEqual(
        lines()
          .filter((line) => line.msg === 'collapse' || line.msg === 'split')
          .map((line) => `${line.msg} ${line.phase}`),
        ['collapse started', 'collapse done', 'split started', 'split done'],
      );
    },
  );

  test.serial(
    `[${target}] a collapsed namespace lists its Secrets ${NAMESPACE_PAGE_SIZE} per page at first, more per page only while pages are small`,
    async (t) => {
      // 25 small Secrets: 10, then 20 (the first page took far less than a quarter of the budget). 21 Secrets of
      // 500 KB: 10 per page throughout (a page of them takes 5 MB, more than a quarter of the budget).
      const listsOf = async (namespace: string, count: number, valueBytes: number): Promise<number> => {
        await createNamespace(client, namespace);
        const names = Array.from({ length: count }, (_, index) => `helm-${index}`);
        const secret = (name: string): Data => ({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name },
          type: 'Opaque',
          data: { release: Buffer.from(name.padEnd(valueBytes, '.')).toString('base64') },
        });
        await inParallel(names, 4, (name) => client.create(SECRETS, namespace, secret(name)));
        const registry = new DependencyRegistry({ client });
        t.teardown(() => registry.close());
        const synced = new Set<string>();
        const referenced = names.slice(0, 11);
        const subscriptions: Subscription[] = [];
        t.teardown(() => {
          for (const subscription of subscriptions) subscription.unsubscribe();
        });
        const listsBefore = requests.length;
        registry.batch(() => {
          for (const name of referenced) {
            subscriptions.push(registry.acquire({ kind: 'Secret', namespace, name }).subscribe(() => synced.add(name)));
          }
        });
        await eventually('every ref synced', () => synced.size === referenced.length);
        return requests.slice(listsBefore).filter((r) => r.verb === 'list' && r.resource === 'secrets' && r.namespace === namespace).length;
      };
      t.is(await listsOf('deps-pages', 25, 16), 2, 'one namespace list: 10, then 20 objects per page');
      t.is(await listsOf('deps-pages-large', 21, 500_000), 3, 'one namespace list: 10 objects per page throughout');
      t.true(NAMESPACE_PAGE_SIZE * MAX_OBJECT_BYTES <= NAMESPACE_PAGE_BYTES, 'a first page of objects of the largest size fits the budget');
    },
  );

  test.serial(`[${target}] a Secret's value never reaches the logs, at any level, while its hash follows every change`, async (t) => {
    await createNamespace(client, 'deps-secret');
    const canary = `canary-${Math.random().toString(36).slice(2)}`;
    const encoded = (value: string): string => Buffer.from(value).toString('base64');
    const secret = (value: string): Data => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds' },
      type: 'Opaque',
      data: { password: encoded(value) },
    });
    await client.create(SECRETS, 'deps-secret', secret(`${canary}-1`));
    const { logger, text } = capturedLogger('trace');
    const registry = new DependencyRegistry({ client, logger, collapseThreshold: 1, splitThreshold: 0 });
    const source = new RegistryDependencySource(registry, { logger });
    t.teardown(() => source.close());
    t.teardown(() => registry.close());
    const changes: DependencyState[] = [];
    source.changes.subscribe((state) => changes.push(state));
    source.use('deps-secret/app', [
      { kind: 'Secret', namespace: 'deps-secret', name: 'creds' },
      { kind: 'Secret', namespace: 'deps-secret', name: 'other' },
    ]);
    await eventually('synced', () => changes.length === 2);
    await client.replace(SECRETS, 'deps-secret', 'creds', secret(`${canary}-2`));
    await eventually('changed', () => changes.length === 3);
    const stored = await client.get<Data>(SECRETS, 'deps-secret', 'creds');
    t.like(changes[2], {
      exists: true,
      hash: keyedContentHash(stored.metadata.uid, { data: { password: encoded(`${canary}-2`) } }),
      unkeyedHash: contentHash({ data: { password: encoded(`${canary}-2`) } }),
    });
    t.true(text().includes('"msg":"event"'), 'debug event lines were logged');
    t.false(text().includes(canary), 'no plain value in the logs');
    t.false(text().includes(encoded(`${canary}-1`)) || text().includes(encoded(`${canary}-2`)), 'no base64 value in the logs');
    t.false(JSON.stringify(changes).includes(canary) || JSON.stringify(changes).includes(encoded(`${canary}-2`)), 'no value in the states');
  });

  test.serial(
    `[${target}] 1,000 refs in one namespace use at most 10 watch streams, keep only referenced objects, and unrelated churn emits nothing`,
    async (t) => {
      const namespace = 'deps-scale';
      await createNamespace(client, namespace);
      const referenced = Array.from({ length: 1000 }, (_, index) => `ref-${index}`);
      const unrelated = Array.from({ length: 100 }, (_, index) => `other-${index}`);
      let started = performance.now();
      await inParallel([...referenced, ...unrelated], 16, (name) => client.create(CONFIGMAPS, namespace, configMap(name, { v: '0' })));
      t.log(`created 1,100 ConfigMaps in ${Math.round(performance.now() - started)} ms`);

      const watchClient = await KubeClient.fromKubeConfig(cluster.adminKubeConfig(), { onRequest: (sample) => requests.push(sample) });
      t.teardown(() => watchClient.close());
      const connection = await connectionFromKubeConfig(cluster.adminKubeConfig());
      const baselineWatches = await settledOpenWatches(cluster, connection, 'configmaps', { namespace });
      const registry = new DependencyRegistry({ client: watchClient });
      const source = new RegistryDependencySource(registry);
      t.teardown(() => source.close());
      t.teardown(() => registry.close());
      const changes: { state: DependencyState; at: number }[] = [];
      source.changes.subscribe((state) => changes.push({ state, at: performance.now() }));
      const before = requests.length;
      started = performance.now();
      // As reconciles would: refs arrive in small groups over time, many after the namespace watch has synced.
      for (const [index, name] of referenced.entries()) {
        source.use(`${namespace}/app-${name}`, [{ kind: 'ConfigMap', namespace, name }]);
        if (index % 20 === 19) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await eventually('every ref synced', () => changes.length === 1000, 30_000);
      const coldStartMs = Math.round(performance.now() - started);
      const coldRequests = requests.slice(before).filter((sample) => sample.resource === 'configmaps' && sample.namespace === namespace);
      const byVerb = (verb: string): number => coldRequests.filter((sample) => sample.verb === verb).length;
      t.log(
        `cold start of 1,000 refs: ${coldStartMs} ms, ${byVerb('list')} lists, ${byVerb('watch')} watches (ended), ${byVerb('get')} gets`,
      );

      const streams = registry.streams();
      t.true(streams.length <= 10, `${streams.length} streams`);
      t.deepEqual(
        streams.map((stream) => `${stream.scope} ${stream.namespace}`),
        [`namespace ${namespace}`],
      );
      t.is(byVerb('get'), 0, 'no GET');
      t.is(registry.watched().length, 1000);
      t.false(
        registry.watched().some((ref) => ref.name.startsWith('other-')),
        'only referenced objects are kept',
      );
      t.true(changes.every(({ state }) => state.exists && state.ref.name.startsWith('ref-')));
      const serverWatches = await settledOpenWatches(cluster, connection, 'configmaps', { want: baselineWatches + 1, namespace });
      t.is(serverWatches - baselineWatches, 1, 'the server sees one watch for the 1,000 refs');

      // Unrelated churn, then one referenced update: the watch delivers in order, so once that update arrives, the churn was seen.
      const churnStart = changes.length;
      await inParallel(unrelated, 16, (name) => client.patch(CONFIGMAPS, namespace, name, 'merge', { data: { v: '1' } }));
      const latencies: number[] = [];
      for (const name of ['ref-7', 'ref-500', 'ref-999', 'ref-7', 'ref-42']) {
        const count = changes.length;
        const sent = performance.now();
        await client.patch(CONFIGMAPS, namespace, name, 'merge', { data: { v: `${count}` } });
        await eventually(`${name} emitted`, () => changes.length > count);
        latencies.push(changes[count]!.at - sent);
        t.is(changes[count]!.state.ref.name, name);
      }
      t.is(changes.length - churnStart, 5, '100 unrelated updates emitted nothing; each referenced update emitted once');
      t.log(`update → emission latency (from the PATCH request): ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms`);

      for (const name of referenced) source.release(`${namespace}/app-${name}`);
      t.deepEqual(registry.streams(), []);
      t.deepEqual(registry.watched(), []);
      const open = await settledOpenWatches(cluster, connection, 'configmaps', { want: baselineWatches, namespace });
      t.is(open, baselineWatches, 'releasing every ref closed the server-side watch');
      t.is(refKey({ kind: 'ConfigMap', namespace, name: 'x' }), `ConfigMap/${namespace}/x`);
    },
  );
}

/** A fresh emulator (for its faults) and an admin client of it, both stopped at the test's end. */
async function emulatorWithClient(t: ExecutionContext): Promise<{ cluster: TestCluster; client: KubeClient }> {
  const cluster = await startCluster('emulator');
  const client = await KubeClient.fromKubeConfig(cluster.adminKubeConfig());
  t.teardown(async () => {
    client.close();
    await cluster.stop();
  });
  return { cluster, client };
}

if (selectedTargets().includes('emulator')) {
  test('[emulator faults] dependency watches survive dropped watches, a 410 and 500s: every later change still arrives, and no watch leaks', async (t) => {
    const { cluster, client } = await emulatorWithClient(t);
    const faults = cluster.emulator!.faults;
    const refs: DependencyRef[] = [
      ...Array.from({ length: 12 }, (_, index): DependencyRef => ({ kind: 'ConfigMap', namespace: 'faults-wide', name: `cm-${index}` })),
      { kind: 'ConfigMap', namespace: 'faults-narrow', name: 'one' },
      { kind: 'Secret', namespace: 'faults-narrow', name: 'creds' },
    ];
    for (const namespace of ['faults-wide', 'faults-narrow']) await createNamespace(client, namespace);
    const resourceOf = (ref: DependencyRef) => (ref.kind === 'Secret' ? SECRETS : CONFIGMAPS);
    // Base64 values, so that the same data is valid in a Secret.
    for (const ref of refs) await client.create(resourceOf(ref), ref.namespace, { ...configMap(ref.name, { v: 'MA==' }), kind: ref.kind });
    const { logger, lines } = capturedLogger('info');
    const registry = new DependencyRegistry({
      client,
      logger,
      watch: {
        backoff: { initialDelayMs: 20, maxDelayMs: 100, factor: 2, jitter: 0, resetAfterMs: 5_000, maxRetries: Number.POSITIVE_INFINITY },
      },
    });
    const source = new RegistryDependencySource(registry);
    t.teardown(() => source.close());
    t.teardown(() => registry.close());
    const latest = new Map<string, DependencyState>();
    source.changes.subscribe((state) => latest.set(refKey(state.ref), state));
    for (const ref of refs) source.use(`${ref.namespace}/app-${ref.name}`, [ref]);
    await eventually('synced', () => latest.size === refs.length);
    t.deepEqual(
      registry
        .streams()
        .map((stream) => `${stream.kind} ${stream.namespace} ${stream.name ?? '*'}`)
        .sort(),
      ['ConfigMap faults-narrow one', 'ConfigMap faults-wide *', 'Secret faults-narrow creds'],
    );

    const connection = await connectionFromKubeConfig(cluster.adminKubeConfig());
    t.is(await settledOpenWatches(cluster, connection, 'configmaps', { want: 2 }), 2, 'the watch requests are open');
    t.is(await settledOpenWatches(cluster, connection, 'secrets', { want: 1 }), 1);
    faults.expireNextWatch({ resource: 'configmaps', namespace: 'faults-wide' });
    faults.failRequests({ match: { verb: 'watch' }, code: 500, times: 3 });
    t.is(faults.dropWatches(undefined, 'reset'), 3);
    for (const ref of refs) await client.patch(resourceOf(ref), ref.namespace, ref.name, 'merge', { data: { v: 'MQ==' } });
    const secretUid = (await client.get(SECRETS, 'faults-narrow', 'creds')).metadata.uid;
    const updated = (ref: DependencyRef): string =>
      ref.kind === 'Secret' ? keyedContentHash(secretUid, { data: { v: 'MQ==' } }) : contentHash({ data: { v: 'MQ==' } });
    await eventually(
      'every change arrived',
      () => [...latest.values()].every((state) => state.exists && state.hash === updated(state.ref)),
      15_000,
    );
    t.true(
      lines().some((line) => line.msg === 'relist' && line.code === 410 && line.stream === 'configmap faults-wide/*'),
      'the namespace watch relisted on the 410',
    );
    t.is(lines().filter((line) => line.msg === 'retry' && line.code === 500).length, 3, 'three re-watches met a 500');
    const open =
      (await settledOpenWatches(cluster, connection, 'configmaps', { want: 2 })) +
      (await settledOpenWatches(cluster, connection, 'secrets', { want: 1 }));
    t.is(open, registry.streams().length, 'the server has exactly the registry’s streams open');
    for (const ref of refs) source.release(`${ref.namespace}/app-${ref.name}`);
    t.is(
      (await settledOpenWatches(cluster, connection, 'configmaps', { want: 0 })) +
        (await settledOpenWatches(cluster, connection, 'secrets', { want: 0 })),
      0,
      'releasing everything closed every watch',
    );
  });

  test('[emulator faults] a namespace list that keeps failing backs off and is reported (log, metric, failingLists), then clears once it lists', async (t) => {
    const { cluster, client } = await emulatorWithClient(t);
    const faults = cluster.emulator!.faults;
    const namespace = 'failing-list';
    await createNamespace(client, namespace);
    const fault = faults.failRequests({ match: { verb: 'list', resource: 'secrets', namespace }, code: 500 });
    const { logger, lines } = capturedLogger('info');
    const metrics = new Registry();
    const registry = new DependencyRegistry({
      client,
      logger,
      metrics,
      collapseThreshold: 1,
      splitThreshold: 0,
      watch: {
        backoff: { initialDelayMs: 20, maxDelayMs: 80, factor: 2, jitter: 0, resetAfterMs: 5_000, maxRetries: Number.POSITIVE_INFINITY },
      },
    });
    t.teardown(() => registry.close());
    const failures: unknown[] = [];
    const followed = registry.listFailures().subscribe((failure) => failures.push(failure));
    t.teardown(() => followed.unsubscribe());
    const synced = new Set<string>();
    const names = ['release-1', 'release-2'];
    const subscriptions: Subscription[] = [];
    registry.batch(() => {
      for (const name of names) subscriptions.push(registry.acquire({ kind: 'Secret', namespace, name }).subscribe(() => synced.add(name)));
    });
    t.teardown(() => {
      for (const subscription of subscriptions) subscription.unsubscribe();
    });
    const failing = (): Promise<string> => metrics.metrics();
    await eventually('three failed lists', () => lines().filter((line) => line.msg === 'retry').length >= 3);
    t.regex(await failing(), /customapp_dependency_lists_failing\{kind="Secret"\} 1/);
    t.like(registry.failingLists()[0], { kind: 'Secret', namespace, code: 500 });
    t.true((registry.failingLists()[0]?.failures ?? 0) >= 3);
    t.like(
      lines().find((line) => line.msg === 'list.failing'),
      { level: 50, kind: 'Secret', namespace, code: 500 },
      'one error line when the list starts failing',
    );
    t.is(lines().filter((line) => line.msg === 'list.failing').length, 1, 'logged once, not per retry');
    t.like(failures, [{ kind: 'Secret', namespace, code: 500 }], 'listFailures emits it once, as it is logged');
    const delays = lines()
      .filter((line) => line.msg === 'retry')
      .map((line) => line.delayMs);
    t.deepEqual(delays.slice(0, 3), [20, 40, 80], 'backs off');
    faults.remove(fault);
    await eventually('listed', () => synced.size === names.length, 5_000);
    t.deepEqual(registry.failingLists(), []);
    t.regex(await failing(), /customapp_dependency_lists_failing\{kind="Secret"\} 0/);
    t.truthy(lines().find((line) => line.msg === 'list.recovered'));
  });
}
