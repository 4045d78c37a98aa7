// Marble tests of the reflector: a list replaces the store atomically, changes are emitted after the store changed.
import test from 'ava';
import { take, tap } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { KubeObject } from '../kube/objects.js';
import { Store, type StoreChange } from './store.js';
import type { WatcherEvent } from '../watch/events.js';
import { reflect } from './reflector.js';

interface App extends KubeObject {
  spec: { configMapName: string };
}

const app = (name: string, resourceVersion: string, configMapName = `${name}-config`): App => ({
  metadata: { namespace: 'ns', name, resourceVersion, uid: `uid-${name}` },
  spec: { configMapName },
});

const A1 = app('a', '1');
const A2 = app('a', '5', 'shared');
const B1 = app('b', '2', 'shared');
const C1 = app('c', '3');

const EVENTS: Record<string, WatcherEvent<App>> = {
  i: { type: 'init' },
  a: { type: 'initApply', object: A1 },
  b: { type: 'initApply', object: B1 },
  c: { type: 'initApply', object: C1 },
  A: { type: 'initApply', object: A2 },
  d: { type: 'initDone', resourceVersion: '3' },
  D: { type: 'initDone', resourceVersion: '9' },
  u: { type: 'apply', object: A2 },
  U: { type: 'apply', object: A2 },
  x: { type: 'delete', object: B1 },
};

const CHANGES: Record<string, StoreChange<App>> = {
  a: { type: 'apply', key: 'ns/a', object: A1 },
  b: { type: 'apply', key: 'ns/b', object: B1 },
  c: { type: 'apply', key: 'ns/c', object: C1 },
  u: { type: 'apply', key: 'ns/a', object: A2 },
  x: { type: 'delete', key: 'ns/b', object: B1 },
  y: { type: 'delete', key: 'ns/c', object: C1 },
};

function newStore(): Store<App> {
  return new Store<App>({ byConfigMap: (object) => [`${object.metadata.namespace}/${object.spec.configMapName}`] });
}

function scheduler(t: { deepEqual: (a: unknown, b: unknown) => void }): TestScheduler {
  return new TestScheduler((actual, expected) => t.deepEqual(actual, expected));
}

test('a list fills the store only at initDone, then each change is emitted after the store holds it', (t) => {
  const store = newStore();
  const seen: string[] = [];
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('iab-d-----u-x', EVENTS);
    const changes = source.pipe(
      tap((event) => {
        if (event.type === 'initApply') seen.push(`during list: ${store.size} objects, synced=${store.synced}`);
      }),
      reflect(store),
      tap((change) => seen.push(`${change.type} ${change.key}: store has ${store.get(change.key)?.metadata.resourceVersion ?? 'nothing'}`)),
    );
    expectObservable(changes).toBe('----(ab)--u-x', CHANGES);
    expectSubscriptions(source.subscriptions).toBe('^');
  });
  t.deepEqual(seen, [
    'during list: 0 objects, synced=false',
    'during list: 0 objects, synced=false',
    'apply ns/a: store has 1',
    'apply ns/b: store has 2',
    'apply ns/a: store has 5',
    'delete ns/b: store has nothing',
  ]);
  t.true(store.synced);
  t.deepEqual(store.keys(), ['ns/a']);
  t.deepEqual(store.byIndex('byConfigMap', 'ns/shared'), ['ns/a'], 'the index followed the update and the delete');
  t.deepEqual(store.byIndex('byConfigMap', 'ns/a-config'), []);
});

test('a relist emits only what moved while the watch was down: new versions and objects gone', (t) => {
  const store = newStore();
  scheduler(t).run(({ cold, expectObservable }) => {
    // First list: a@1, b, c. Relist: a@5 (changed), b (same), no c (deleted while down).
    const source = cold('iabcd-i(Ab)D', EVENTS);
    expectObservable(source.pipe(reflect(store))).toBe('----(abc)--(yu)', CHANGES);
  });
  t.deepEqual(store.keys().sort(), ['ns/a', 'ns/b']);
  t.is(store.get('ns/a')?.metadata.resourceVersion, '5');
});

test('a duplicate apply (same resourceVersion, after a resume) and a delete of an absent object emit nothing', (t) => {
  const store = newStore();
  scheduler(t).run(({ cold, expectObservable }) => {
    expectObservable(cold('id-u-U-x', EVENTS).pipe(reflect(store))).toBe('---u', CHANGES);
  });
  t.deepEqual(store.keys(), ['ns/a']);
});

test('an error passes through and the store keeps what it had', (t) => {
  const store = newStore();
  const failure = new Error('watch broke');
  scheduler(t).run(({ cold, expectObservable }) => {
    expectObservable(cold('iad-#', EVENTS, failure).pipe(reflect(store))).toBe('--a-#', CHANGES, failure);
  });
  t.deepEqual(store.keys(), ['ns/a']);
  t.true(store.synced);
});

test('an empty source completes and leaves the store unsynced', (t) => {
  const store = newStore();
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold<WatcherEvent<App>>('|');
    expectObservable(source.pipe(reflect(store))).toBe('|');
    expectSubscriptions(source.subscriptions).toBe('(^!)');
  });
  t.false(store.synced);
});

test('an interrupted list never reaches the store, and a resubscription starts with a clean buffer', (t) => {
  const store = newStore();
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('iab-', EVENTS);
    expectObservable(source.pipe(reflect(store)), '--!').toBe('');
    expectSubscriptions(source.subscriptions).toBe('^-!');
  });
  t.is(store.size, 0);
  t.false(store.synced);
  scheduler(t).run(({ cold, expectObservable }) => {
    expectObservable(cold('icd', EVENTS).pipe(reflect(store))).toBe('--c', CHANGES);
  });
  t.deepEqual(store.keys(), ['ns/c'], 'nothing of the interrupted list leaked in');
});

test('an unsubscribe downstream reaches the source through the operator', (t) => {
  const store = newStore();
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('iad-u-x', EVENTS);
    expectObservable(source.pipe(reflect(store), take(1))).toBe('--(a|)', CHANGES);
    expectSubscriptions(source.subscriptions).toBe('^-!');
  });
});

test("a relist of one namespace (initDone with its namespace) replaces that namespace's objects alone and keeps the others", (t) => {
  const store = newStore();
  const other: App = { metadata: { namespace: 'other', name: 'z', resourceVersion: '4', uid: 'uid-z' }, spec: { configMapName: 'z' } };
  const events: Record<string, WatcherEvent<App>> = {
    ...EVENTS,
    o: { type: 'initApply', object: other },
    n: { type: 'initDone', resourceVersion: '9', namespace: 'ns' },
  };
  scheduler(t).run(({ cold, expectObservable }) => {
    // First list: a@1, c and other/z. Relist of ns alone: a@5; c is gone, other/z is not in that list and stays.
    const source = cold('iaocd-----iAn', events);
    expectObservable(source.pipe(reflect(store))).toBe('----(aoc)---(yu)', {
      ...CHANGES,
      o: { type: 'apply', key: 'other/z', object: other },
    });
  });
  t.deepEqual(store.keys().sort(), ['ns/a', 'other/z']);
  t.true(store.synced);
});
