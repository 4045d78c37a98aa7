// Tests of the strategy switch and of what each strategy asks of the API and emits, on an in-memory fake API.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import type { DependencyObject } from '../../operator/dependencies/dependency-watch.js';
import type { DependencyRef, DependencyState } from '../../operator/dependencies/source.js';
import type { KubeClient } from '../../operator/kube/client.js';
import type { ListOptions, RequestSample, WatchOptions } from '../../operator/kube/options.js';
import type { KubeObject, RawWatchEvent } from '../../operator/kube/objects.js';
import { ApiError } from '../../operator/kube/errors.js';
import type { Resource } from '../../operator/kube/resources.js';
import { eventually } from '../../test/support/eventually.js';
import { createSource, STRATEGY_NAMES } from './index.js';
import { NaiveGetSource } from './naive-get.js';
import { OursSource } from './ours.js';
import { PerObjectSource } from './per-object.js';
import { StaticIndexedSource } from './static-indexed.js';
import { StaticListAllSource } from './static-list-all.js';
import type { StrategyContext } from './strategy.js';

/** An in-memory API of ConfigMaps and CustomApps: get, list (namespace, name field selector), and live watches. */
class FakeApi {
  readonly calls: string[] = [];
  private readonly configMaps = new Map<string, DependencyObject>();
  readonly apps: KubeObject[] = [];
  private version = 1;
  private readonly watchers = new Set<{ options: WatchOptions; push: (event: RawWatchEvent<KubeObject>) => void }>();

  write(namespace: string, name: string, data: Record<string, string>, labels?: Record<string, string>): void {
    const type = this.configMaps.has(`${namespace}/${name}`) ? 'MODIFIED' : 'ADDED';
    const object: DependencyObject = { metadata: { namespace, name, resourceVersion: String(++this.version), labels }, data };
    this.configMaps.set(`${namespace}/${name}`, object);
    for (const watcher of this.watchers) if (this.matches(object, watcher.options)) watcher.push({ type, object });
  }

  private matches(object: KubeObject, options: { namespace?: string; fieldSelector?: string }): boolean {
    if (options.namespace && object.metadata.namespace !== options.namespace) return false;
    const name = options.fieldSelector?.replace(/^metadata\.name=/, '');
    return !name || object.metadata.name === name;
  }

  readonly client = {
    get: async <T extends KubeObject>(resource: Resource, namespace: string, name: string): Promise<T> => {
      this.calls.push(`get ${resource.plural}`);
      const found = this.configMaps.get(`${namespace}/${name}`);
      if (!found) throw new ApiError(`${name} not found`, 404, { reason: 'NotFound' });
      return found as unknown as T;
    },
    list: async <T extends KubeObject>(
      resource: Resource,
      options: ListOptions = {},
    ): Promise<{ metadata: { resourceVersion: string }; items: T[] }> => {
      this.calls.push(`list ${resource.plural}`);
      const items =
        resource.plural === 'customapps' ? this.apps : [...this.configMaps.values()].filter((object) => this.matches(object, options));
      return { metadata: { resourceVersion: String(this.version) }, items: items as T[] };
    },
    watch: (resource: Resource, options: WatchOptions = {}, signal?: AbortSignal): AsyncGenerator<RawWatchEvent<KubeObject>> => {
      this.calls.push(`watch ${resource.plural}`);
      const queue: RawWatchEvent<KubeObject>[] = [];
      let wake: (() => void) | undefined;
      const watcher = {
        options,
        push: (event: RawWatchEvent<KubeObject>) => {
          queue.push(event);
          wake?.();
        },
      };
      this.watchers.add(watcher);
      const watchers = this.watchers;
      return (async function* () {
        try {
          while (!signal?.aborted) {
            if (queue.length > 0) yield queue.shift()!;
            else
              await new Promise<void>((resolve) => {
                wake = resolve;
                signal?.addEventListener('abort', () => resolve(), { once: true });
              });
          }
        } finally {
          watchers.delete(watcher);
        }
      })();
    },
  };
}

const ref = (name: string): DependencyRef => ({ kind: 'ConfigMap', namespace: 'ns', name });
function contextFor(
  api: FakeApi,
  kubeConfig = new KubeConfig(),
  onRequest: (sample: RequestSample) => void = () => undefined,
): StrategyContext {
  return { client: api.client as unknown as KubeClient, kubeConfig, onRequest, logger: pino({ level: 'silent' }) };
}

test('the switch builds every strategy by its name, and refuses an unknown name', (t) => {
  const expected = {
    'naive-get': NaiveGetSource,
    'static-list-all': StaticListAllSource,
    'static-indexed': StaticIndexedSource,
    'per-object': PerObjectSource,
    ours: OursSource,
  };
  t.deepEqual([...STRATEGY_NAMES].sort(), Object.keys(expected).sort());
  for (const name of STRATEGY_NAMES) {
    const source = createSource(name, contextFor(new FakeApi()));
    t.true(source instanceof expected[name], name);
    source.close();
  }
  t.throws(() => createSource('reloader', contextFor(new FakeApi())), {
    message: /unknown strategy "reloader"; expected one of naive-get, /i,
  });
});

/** A source of the strategy in which `ns/app` uses the ConfigMap `config`, and the changes it emits from the start. */
function appUsingConfig(name: string, api: FakeApi): { source: ReturnType<typeof createSource>; changes: DependencyState[] } {
  const source = createSource(name, contextFor(api));
  const changes: DependencyState[] = [];
  source.changes.subscribe((state) => changes.push(state));
  source.use('ns/app', [ref('config')]);
  return { source, changes };
}

test('naive-get GETs the ConfigMap on every state, watches nothing and never emits', async (t) => {
  const api = new FakeApi();
  api.write('ns', 'config', { key: 'one' });
  const { source, changes } = appUsingConfig('naive-get', api);
  t.like(await source.state(ref('config')), { exists: true, hash: contentHash({ data: { key: 'one' } }) });
  api.write('ns', 'config', { key: 'two' });
  t.like(await source.state(ref('config')), { exists: true, hash: contentHash({ data: { key: 'two' } }) });
  t.like(await source.state(ref('missing')), { exists: false });
  t.deepEqual(api.calls, ['get configmaps', 'get configmaps', 'get configmaps']);
  t.deepEqual(changes, []);
  t.deepEqual(source.watched(), []);
  t.is(source.cachedObjects(), 0);
  source.close();
});

test('static-indexed caches every ConfigMap and emits content changes of referenced ones only, with no request', async (t) => {
  const api = new FakeApi();
  api.write('ns', 'config', { key: 'one' });
  api.write('ns', 'unrelated', { key: 'x' });
  const { source, changes } = appUsingConfig('static-indexed', api);
  await eventually('the cache syncs', async () => (await source.state(ref('config'))) !== undefined, 5000);
  t.is(source.cachedObjects(), 2);
  t.like(
    changes,
    [{ ref: ref('config'), exists: true, hash: contentHash({ data: { key: 'one' } }) }],
    'the first list marks the acquired ref synced',
  );
  api.write('ns', 'unrelated', { key: 'y' });
  api.write('ns', 'config', { key: 'one' }, { touched: 'metadata only' });
  api.write('ns', 'config', { key: 'two' });
  await eventually('the content change is emitted', () => changes.length === 2, 5000);
  t.like(changes[1], { ref: ref('config'), exists: true, hash: contentHash({ data: { key: 'two' } }) });
  t.deepEqual(api.calls, ['list configmaps', 'watch configmaps']);
  t.deepEqual(source.watched(), [ref('config')]);
  source.close();
});

test('static-list-all LISTs every CustomApp for each ConfigMap event, related or not, and emits only for referenced ones', async (t) => {
  const api = new FakeApi();
  api.apps.push({ metadata: { namespace: 'ns', name: 'app' }, spec: { image: 'x', configMapName: 'config' } } as KubeObject);
  api.write('ns', 'config', { key: 'one' });
  const { source, changes } = appUsingConfig('static-list-all', api);
  await eventually('the cache syncs', async () => (await source.state(ref('config'))) !== undefined, 5000);
  api.write('ns', 'unrelated', { key: 'x' });
  api.write('ns', 'config', { key: 'two' });
  await eventually('the referenced change is emitted', () => changes.length === 2, 5000);
  t.deepEqual(api.calls, ['list configmaps', 'watch configmaps', 'list customapps', 'list customapps']);
  t.like(changes[1], { exists: true, hash: contentHash({ data: { key: 'two' } }) });
  source.close();
});

test('ours shares one watch among the owners of a ref and stops it when the last one leaves', async (t) => {
  const api = new FakeApi();
  api.write('ns', 'config', { key: 'one' });
  const source = createSource('ours', contextFor(api));
  source.use('ns/a', [ref('config')]);
  source.use('ns/b', [ref('config')]);
  await eventually('the ref syncs', async () => (await source.state(ref('config'))) !== undefined, 5000);
  t.is(api.calls.filter((call) => call === 'watch configmaps').length, 1);
  source.release('ns/a');
  t.deepEqual(source.watched(), [ref('config')]);
  source.release('ns/b');
  t.deepEqual(source.watched(), []);
  source.close();
});

/** A server that answers every watch with 200 and holds it open, for client-node's Watch. */
async function holdingServer(t: { teardown: (fn: () => Promise<void>) => void }): Promise<{ url: string; watches: string[] }> {
  const watches: string[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    watches.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('');
    open.add(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const response of open) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, watches };
}

test('per-object, like the seed, runs an informer per ConfigMap and stops a shared one when any sharer leaves', async (t) => {
  const { url, watches } = await holdingServer(t);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
    users: [{ name: 'fake', token: 'x' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
    currentContext: 'fake',
  });
  const api = new FakeApi();
  api.write('ns', 'shared', { key: 'one' });
  api.write('ns', 'own', { key: 'mine' });
  const counted: RequestSample[] = [];
  const source = createSource(
    'per-object',
    contextFor(api, kubeConfig, (sample) => counted.push(sample)),
  );
  source.use('ns/a', [ref('shared')]);
  source.use('ns/b', [ref('shared')]);
  source.use('ns/c', [ref('own')]);
  await eventually(
    'both informers sync',
    async () => (await source.state(ref('shared'))) !== undefined && (await source.state(ref('own'))) !== undefined,
    5000,
  );
  t.is(watches.length, 2, 'one watch per ConfigMap, not per owner');
  t.true(watches.every((path) => /fieldSelector=metadata.name%3D(shared|own)/.test(path)));
  t.is(source.cachedObjects(), 2);
  source.use('ns/a', []);
  t.deepEqual(source.watched(), [ref('own')], 'b still names the shared ConfigMap, but its informer is gone');
  t.deepEqual(source.owners().get('ConfigMap/ns/shared'), new Set(['ns/b']));
  t.like(
    await source.state(ref('shared')),
    { exists: true, hash: contentHash({ data: { key: 'one' } }) },
    'answered from the stopped informer',
  );
  source.close();
  await eventually('both watches are reported when they end', () => counted.length === 2, 5000);
  t.true(counted.every((sample) => sample.verb === 'watch' && sample.resource === 'configmaps'));
  t.is((source as PerObjectSource).deadInformers, 0, 'a stopped informer is not a dead one');
});
