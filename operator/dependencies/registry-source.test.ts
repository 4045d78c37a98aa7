// Tests of RegistryDependencySource: per-owner use and release, handoff, one change per state, synchronous state, close.
import test from 'ava';
import { Subject } from 'rxjs';
import type { WatcherEvent } from '../watch/events.js';
import { contentHash } from './content-hash.js';
import type { DependencyObject, WatchScope } from './dependency-watch.js';
import { DependencyRegistry } from './registry.js';
import { RegistryDependencySource } from './registry-source.js';
import type { DependencyRef, DependencyState } from './source.js';

type Event = WatcherEvent<DependencyObject>;

const config: DependencyRef = { kind: 'ConfigMap', namespace: 'ns', name: 'config' };
const newConfig: DependencyRef = { kind: 'ConfigMap', namespace: 'ns', name: 'new-config' };
const secret: DependencyRef = { kind: 'Secret', namespace: 'ns', name: 'creds' };

/** One hot Subject per `Kind/name`, created when the registry opens that stream. */
function liveStreams(): { streams: Map<string, Subject<Event>>; events: (scope: WatchScope) => Subject<Event> } {
  const streams = new Map<string, Subject<Event>>();
  return {
    streams,
    events: (scope) => {
      const subject = new Subject<Event>();
      streams.set(`${scope.kind}/${scope.name}`, subject);
      return subject;
    },
  };
}

function sync(stream: Subject<Event> | undefined, name: string, value?: string, resourceVersion = '5'): void {
  stream!.next({ type: 'init' });
  if (value !== undefined)
    stream!.next({ type: 'initApply', object: { metadata: { namespace: 'ns', name, resourceVersion }, data: { key: value } } });
  stream!.next({ type: 'initDone', resourceVersion });
}

function setup(): {
  source: RegistryDependencySource;
  registry: DependencyRegistry;
  streams: Map<string, Subject<Event>>;
  changes: DependencyState[];
} {
  const { streams, events } = liveStreams();
  const registry = new DependencyRegistry({ events });
  const source = new RegistryDependencySource(registry);
  const changes: DependencyState[] = [];
  source.changes.subscribe((state) => changes.push(state));
  return { source, registry, streams, changes };
}

test('two owners of one ref share one watch, and each state reaches changes once', async (t) => {
  const { source, registry, streams, changes } = setup();
  source.use('ns/app-1', [config]);
  source.use('ns/app-2', [config]);
  t.is(await source.state(config), undefined, 'not synced yet');
  sync(streams.get('ConfigMap/config'), 'config', 'one');
  source.use('ns/app-3', [config]);
  t.is(registry.subscribers().get('ConfigMap/ns/config'), 3);
  t.like(changes, [{ ref: config, exists: true, hash: contentHash({ data: { key: 'one' } }), resourceVersion: '5' }]);
  t.is(changes.length, 1);
  t.deepEqual(await source.state(config), changes[0]);
  t.deepEqual(source.owners().get('ConfigMap/ns/config'), new Set(['ns/app-1', 'ns/app-2', 'ns/app-3']));
  source.close();
});

test('a handoff acquires both refs, then dropping the old one releases only that one', (t) => {
  const { source, streams } = setup();
  source.use('ns/app', [config, secret]);
  source.use('ns/app', [config, newConfig, secret]);
  const oldStream = streams.get('ConfigMap/config')!;
  t.true(streams.get('ConfigMap/new-config')!.observed);
  source.use('ns/app', [newConfig, secret]);
  t.false(oldStream.observed, 'the old ConfigMap watch stopped');
  t.true(streams.get('Secret/creds')!.observed, 'the Secret watch was kept, not restarted');
  t.deepEqual(
    source
      .watched()
      .map((ref) => ref.name)
      .sort(),
    ['creds', 'new-config'],
  );
  source.close();
});

test('release drops all of an owner’s refs but keeps those another owner has acquired', (t) => {
  const { source, registry, streams } = setup();
  source.use('ns/a', [config, secret]);
  source.use('ns/b', [config]);
  source.release('ns/a');
  t.false(streams.get('Secret/creds')!.observed);
  t.true(streams.get('ConfigMap/config')!.observed);
  t.deepEqual([...source.owners().keys()], ['ConfigMap/ns/config']);
  source.release('ns/b');
  t.deepEqual(registry.watched(), []);
  t.is(source.owners().size, 0);
  source.close();
});

test('a ref released by all and acquired again reports its state again when it syncs', (t) => {
  const { source, streams, changes } = setup();
  source.use('ns/a', [config]);
  sync(streams.get('ConfigMap/config'), 'config');
  source.release('ns/a');
  source.use('ns/a', [config]);
  sync(streams.get('ConfigMap/config'), 'config');
  t.deepEqual(changes, [
    { ref: config, exists: false },
    { ref: config, exists: false },
  ]);
  source.close();
});

test('close releases everything, completes changes, and ignores later calls', (t) => {
  const { source, registry, streams } = setup();
  let completed = false;
  source.changes.subscribe({
    complete: () => {
      completed = true;
    },
  });
  source.use('ns/a', [config]);
  source.close();
  t.true(completed);
  t.false(streams.get('ConfigMap/config')!.observed);
  source.use('ns/a', [secret]);
  t.deepEqual(registry.watched(), []);
});
