// The watcher against real servers: a cut connection resumes exactly, a 410 relists, unsubscribing frees the server's watch.
import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/objects.js';
import { CONFIGMAPS } from '../kube/resources.js';
import { selectedTargets, startCluster, type TestCluster } from '../../test/support/targets.js';
import type { WatcherEvent } from './events.js';
import { watcher } from './watcher.js';
import type { WatchClient, WatcherConfig } from './config.js';
import { eventually } from '../../test/support/eventually.js';
import { createNamespace } from '../kube/testing/admin-cluster.js';
import { proxiedClients, settledOpenWatches, type ProxiedClients } from './testing/cluster-helpers.js';
import { capturedLogger, type LogLine } from './testing/captured-logger.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const FAST_BACKOFF = {
  initialDelayMs: 50,
  maxDelayMs: 200,
  factor: 2,
  jitter: 0,
  resetAfterMs: 10_000,
  maxRetries: Number.POSITIVE_INFINITY,
};

const configMap = (name: string, value: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { value },
});

/** Records events as `type name@rv` (list events as `list name`). */
function recorder(): { seen: string[]; record: (event: WatcherEvent<ConfigMap>) => void } {
  const seen: string[] = [];
  return {
    seen,
    record: (event) => {
      if (event.type === 'init') seen.push('init');
      else if (event.type === 'initDone') seen.push('initDone');
      else if (event.type === 'initApply') seen.push(`list ${event.object.metadata.name}`);
      else seen.push(`${event.type} ${event.object.metadata.name}@${event.object.metadata.resourceVersion}`);
    },
  };
}

/** Subscribes a watcher of ConfigMaps in `namespace` (unsubscribed at the test's end) and waits for its first list. */
async function listedWatch(
  t: ExecutionContext,
  client: WatchClient,
  namespace: string,
  config: WatcherConfig = {},
): Promise<{ seen: string[]; lines: () => LogLine[] }> {
  const { logger, lines } = capturedLogger('info');
  const { seen, record } = recorder();
  const subscription = watcher<ConfigMap>(client, CONFIGMAPS, { namespace, backoff: FAST_BACKOFF, ...config }, { logger }).subscribe(
    record,
  );
  t.teardown(() => subscription.unsubscribe());
  await eventually('listed', () => seen.includes('initDone'));
  return { seen, lines };
}

for (const target of selectedTargets()) {
  let cluster: TestCluster;
  let clients: ProxiedClients;
  test.before(async () => {
    cluster = await startCluster(target);
    clients = await proxiedClients(cluster);
  });
  test.after.always(async () => {
    await clients?.close();
    await cluster?.stop();
  });

  test.serial(`[${target}] a cut connection resumes from the last resourceVersion, with no duplicate and no gap`, async (t) => {
    const { admin, proxied, proxy } = clients;
    await createNamespace(admin, 'watch-resume');
    await admin.create(CONFIGMAPS, 'watch-resume', configMap('before', '0'));
    const { seen, lines } = await listedWatch(t, proxied, 'watch-resume');

    const expected: string[] = [];
    const written = async (verb: 'apply' | 'delete', write: Promise<KubeObject | unknown>, name: string): Promise<void> => {
      const result = (await write) as KubeObject;
      expected.push(`${verb} ${name}@${result.metadata?.resourceVersion ?? '?'}`);
    };
    await written('apply', admin.create(CONFIGMAPS, 'watch-resume', configMap('a', '1')), 'a');
    await eventually('a seen', () => seen.length === 4);

    proxy.setDown(true);
    proxy.dropAll();
    await written('apply', admin.patch(CONFIGMAPS, 'watch-resume', 'a', 'merge', { data: { value: '2' } }), 'a');
    await written('apply', admin.create(CONFIGMAPS, 'watch-resume', configMap('b', '1')), 'b');
    const deletedBefore = (await admin.delete(CONFIGMAPS, 'watch-resume', 'before')) as KubeObject;
    // The cut and then a reconnect refused while it lasts, each a retry through the backoff.
    await eventually('a reconnect refused while cut', () => lines().filter((line) => line.msg === 'retry').length >= 2, 10_000);
    proxy.setDown(false);
    await written('apply', admin.patch(CONFIGMAPS, 'watch-resume', 'b', 'merge', { data: { value: '2' } }), 'b');
    // A last write: a watch delivers in order, so a duplicate of anything earlier would have come before it.
    await written('apply', admin.create(CONFIGMAPS, 'watch-resume', configMap('last', '1')), 'last');

    await eventually('every write seen, the last one included', () => seen.some((line) => line.startsWith('apply last@')), 15_000);
    const changes = seen.slice(3);
    const deletion = changes.find((line) => line.startsWith('delete before@'));
    t.truthy(deletion, `the delete that happened while cut arrived: ${changes.join(', ')}`);
    t.deepEqual(
      changes.filter((line) => line !== deletion),
      expected,
      'every change exactly once, in order',
    );
    t.is(seen.filter((line) => line === 'init').length, 1, 'no relist: the watch resumed from its resourceVersion');
    t.true(
      lines().some((line) => line.msg === 'retry'),
      'the cut went through the backoff',
    );
    t.log(
      `delete of "before" answered ${deletedBefore.metadata?.resourceVersion ?? '(a Status)'}; events after the cut: ${changes.join(', ')}`,
    );
  });

  test.serial(`[${target}] unsubscribing ends the server-side watch, and the watch count returns to its baseline`, async (t) => {
    const { admin, connection } = clients;
    await createNamespace(admin, 'watch-free');
    const baseline = await settledOpenWatches(cluster, connection, 'configmaps', { namespace: 'watch-free' });
    const { seen, record } = recorder();
    const subscriptions = [0, 1, 2].map(() => watcher<ConfigMap>(admin, CONFIGMAPS, { namespace: 'watch-free' }).subscribe(record));
    t.teardown(() => {
      for (const subscription of subscriptions) subscription.unsubscribe();
    });
    await eventually('three lists', () => seen.filter((line) => line === 'initDone').length === 3);
    const opened = await settledOpenWatches(cluster, connection, 'configmaps', { want: baseline + 3, namespace: 'watch-free' });
    t.is(opened, baseline + 3, `the server counts our three watches (baseline ${baseline})`);
    for (const subscription of subscriptions) subscription.unsubscribe();
    const open = await settledOpenWatches(cluster, connection, 'configmaps', { want: baseline, namespace: 'watch-free' });
    t.is(open, baseline, 'every watch ended on the server');
  });
}

if (selectedTargets().includes('envtest'))
  test(`[envtest] a 410 after etcd compacted the resumed revision relists, and the relist shows what changed meanwhile`, async (t) => {
    // No watch cache: a watch goes to etcd, which compacts every second, so a resume from an old revision is a 410.
    const compacting = await startCluster('envtest', {
      envtest: { apiserverArgs: ['--watch-cache=false', '--etcd-compaction-interval=1s'] },
    });
    const clients = await proxiedClients(compacting);
    t.teardown(async () => {
      await clients.close();
      await compacting.stop();
    });
    const { admin, proxied, proxy } = clients;
    await createNamespace(admin, 'watch-gone');
    await admin.create(CONFIGMAPS, 'watch-gone', configMap('kept', '1'));
    await admin.create(CONFIGMAPS, 'watch-gone', configMap('removed', '1'));
    const { seen, lines } = await listedWatch(t, proxied, 'watch-gone');
    const listedAt = (await admin.list(CONFIGMAPS, { namespace: 'watch-gone' })).metadata.resourceVersion;

    proxy.setDown(true);
    proxy.dropAll();
    await admin.delete(CONFIGMAPS, 'watch-gone', 'removed');
    await admin.create(CONFIGMAPS, 'watch-gone', configMap('added', '1'));
    for (let i = 0; i < 5; i += 1) await admin.patch(CONFIGMAPS, 'watch-gone', 'kept', 'merge', { data: { value: String(i) } });
    // Until etcd has compacted the revision the watch would resume from (that of its list, or an older one).
    const exact = { namespace: 'watch-gone', resourceVersion: listedAt, resourceVersionMatch: 'Exact' } as const;
    const gone = (): Promise<boolean> =>
      admin.list(CONFIGMAPS, exact).then(
        () => false,
        (error: unknown) => error instanceof ApiError && error.statusCode === 410,
      );
    await eventually('etcd compacted the listed revision', gone, 15_000, 100);
    proxy.setDown(false);

    await eventually('relisted', () => seen.filter((line) => line === 'initDone').length === 2, 15_000);
    t.true(
      lines().some((line) => line.msg === 'relist' && line.code === 410),
      `a relist on 410: ${lines()
        .map((line) => line.msg)
        .join(', ')}`,
    );
    const relist = seen.slice(seen.lastIndexOf('init'));
    t.deepEqual(relist.filter((line) => line.startsWith('list')).sort(), ['list added', 'list kept']);
    await admin.patch(CONFIGMAPS, 'watch-gone', 'added', 'merge', { data: { value: '2' } });
    await eventually('the watch after the relist delivers', () => seen.at(-1)?.startsWith('apply added@') ?? false);
  });

if (selectedTargets().includes('emulator')) {
  let cluster: TestCluster;
  let clients: ProxiedClients;
  test.before(async () => {
    cluster = await startCluster('emulator');
    clients = await proxiedClients(cluster);
  });
  test.after.always(async () => {
    await clients?.close();
    await cluster?.stop();
  });
  const faults = () => cluster.emulator!.faults;
  /** The list is done before the watch request reaches the server: a fault aimed at the watch waits for it. */
  const watchOpen = async (t: ExecutionContext, namespace: string) =>
    t.is(
      await settledOpenWatches(cluster, clients.connection, 'configmaps', { want: 1, namespace }),
      1,
      `the watch of ${namespace} is open on the server`,
    );

  test.serial('[emulator faults] an in-stream 410 on the resumed watch relists, and the relist holds what changed meanwhile', async (t) => {
    const { admin } = clients;
    await createNamespace(admin, 'fault-gone');
    await admin.create(CONFIGMAPS, 'fault-gone', configMap('kept', '1'));
    const { seen, lines } = await listedWatch(t, admin, 'fault-gone');
    await watchOpen(t, 'fault-gone');
    faults().expireNextWatch({ resource: 'configmaps', namespace: 'fault-gone' });
    t.is(faults().dropWatches({ resource: 'configmaps', namespace: 'fault-gone' }, 'reset'), 1);
    await admin.create(CONFIGMAPS, 'fault-gone', configMap('added', '1'));
    await eventually('relisted', () => seen.filter((line) => line === 'initDone').length === 2);
    t.true(lines().some((line) => line.msg === 'relist' && line.code === 410));
    const relist = seen.slice(seen.lastIndexOf('init'));
    t.true(
      relist.includes('list added') || seen.some((line) => line.startsWith('apply added@')),
      `the new object arrived: ${seen.join(', ')}`,
    );
  });

  test.serial(
    '[emulator faults] a 500 then a 429 on re-watch are retried with backoff and Retry-After, resuming without a relist',
    async (t) => {
      const { admin } = clients;
      await createNamespace(admin, 'fault-retry');
      const { seen, lines } = await listedWatch(t, admin, 'fault-retry');
      await watchOpen(t, 'fault-retry');
      const match = { verb: 'watch', resource: 'configmaps', namespace: 'fault-retry' };
      faults().failRequests({ match, code: 500, times: 1 });
      faults().failRequests({ match, code: 429, retryAfterSeconds: 1, times: 1 });
      t.is(faults().dropWatches({ resource: 'configmaps', namespace: 'fault-retry' }, 'reset'), 1);
      const created = await admin.create(CONFIGMAPS, 'fault-retry', configMap('during', '1'));
      await eventually(
        'the change made during the outage arrived',
        () => seen.includes(`apply during@${created.metadata.resourceVersion}`),
        10_000,
      );
      const retries = lines()
        .filter((line) => line.msg === 'retry')
        .map((line) => [line.code, line.delayMs]);
      t.deepEqual(
        retries,
        [
          [0, 50],
          [500, 100],
          [429, 1000],
        ],
        'the reset, the 500, then the 429 held for its Retry-After',
      );
      t.is(seen.filter((line) => line === 'init').length, 1, 'no relist');
    },
  );

  test.serial('[emulator faults] an expired continue token restarts the list page by page, never in one request', async (t) => {
    const { admin } = clients;
    await createNamespace(admin, 'fault-continue');
    for (const name of ['c1', 'c2', 'c3', 'c4', 'c5']) await admin.create(CONFIGMAPS, 'fault-continue', configMap(name, '1'));
    faults().expireNextContinue({ resource: 'configmaps', namespace: 'fault-continue' });
    const limits: (number | undefined)[] = [];
    const counting: WatchClient = {
      list: (resource, options, signal) => {
        limits.push(options?.limit);
        return admin.list(resource, options, signal);
      },
      watch: (resource, options, signal) => admin.watch(resource, options, signal),
    };
    const { seen, lines } = await listedWatch(t, counting, 'fault-continue', { pageSize: 2 });
    t.deepEqual(seen, ['init', 'list c1', 'list c2', 'init', 'list c1', 'list c2', 'list c3', 'list c4', 'list c5', 'initDone']);
    t.deepEqual(limits, [2, 2, 2, 2, 2], 'the first page, the expired continuation, then the three pages of the relist');
    t.like(
      lines().find((line) => line.msg === 'relist'),
      { reason: 'continue token expired', count: 2, pageSize: 2 },
    );
  });
}
