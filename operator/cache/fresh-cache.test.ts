// Tests of the read-your-writes cache: a written object shadows an older cached one, never a deletion for long.
import test from 'ava';
import { Store } from './store.js';
import type { KubeObject } from '../kube/objects.js';
import { FreshCache } from './fresh-cache.js';
import { VirtualClock } from '../../test/support/virtual-time.js';

const object = (resourceVersion: string, uid = 'uid-1'): KubeObject => ({ metadata: { namespace: 'ns', name: 'a', uid, resourceVersion } });

function setup(): { store: Store<KubeObject>; cache: FreshCache<KubeObject>; clock: VirtualClock } {
  const store = new Store<KubeObject>();
  const clock = new VirtualClock();
  return { store, cache: new FreshCache(store, { scheduler: clock, ttlMs: 60_000, createdTtlMs: 10_000 }), clock };
}

test('a written object is read instead of the older cached one, until the store has that version', (t) => {
  const { store, cache } = setup();
  store.apply(object('10'));
  cache.wrote(object('12'));
  t.is(cache.get('ns/a')?.metadata.resourceVersion, '12');
  store.apply(object('12'));
  t.is(cache.get('ns/a'), store.get('ns/a'));
  store.apply(object('15'));
  t.is(cache.get('ns/a')?.metadata.resourceVersion, '15', 'a newer store version wins');
});

test('an object deleted from the store is gone, even if this process updated it', (t) => {
  const { store, cache } = setup();
  store.apply(object('10'));
  cache.wrote(object('12'));
  store.delete(object('10'));
  t.is(cache.get('ns/a'), undefined);
});

test('an object this process created is served before the store sees it, for a short while only', (t) => {
  const { cache, clock } = setup();
  cache.wrote(object('20'), true);
  t.is(cache.get('ns/a')?.metadata.resourceVersion, '20');
  clock.advance(10_001);
  t.is(cache.get('ns/a'), undefined);
});

test('a recreated object (another uid) is read from the store, and the TTL bounds any shadowing', (t) => {
  const { store, cache, clock } = setup();
  store.apply(object('30', 'uid-2'));
  cache.wrote(object('40', 'uid-1'));
  t.is(cache.get('ns/a')?.metadata.uid, 'uid-2');
  cache.wrote(object('50', 'uid-2'));
  clock.advance(60_001);
  t.is(cache.get('ns/a')?.metadata.resourceVersion, '30');
});

test('forget drops what was written', (t) => {
  const { cache } = setup();
  cache.wrote(object('20'), true);
  cache.forget('ns/a');
  t.is(cache.get('ns/a'), undefined);
});

test('entries no read asks for are swept once the store catches up or the TTL passes, and managedFields are not kept', (t) => {
  const store = new Store<KubeObject>();
  const clock = new VirtualClock();
  const cache = new FreshCache(store, { scheduler: clock, ttlMs: 60_000, createdTtlMs: 10_000, sweepMs: 10 });
  const named = (name: string, resourceVersion: string): KubeObject => ({
    metadata: { namespace: 'ns', name, uid: `uid-${name}`, resourceVersion, managedFields: [{ manager: 'x' }] },
  });
  store.apply(named('a', '10'));
  store.apply(named('b', '10'));
  cache.wrote(named('a', '12'));
  cache.wrote(named('b', '12'));
  t.false('managedFields' in cache.get('ns/a')!.metadata, 'the written copy is kept without managedFields');
  store.apply(named('a', '12'));
  clock.advance(40);
  t.is(cache.size, 1, 'the entry the store caught up with is gone without a read');
  clock.advance(60_001);
  t.is(cache.size, 0, 'the other one expired');
  t.is(clock.actions.length, 0, 'the sweep stops once nothing is left');
  t.is(cache.get('ns/b')?.metadata.resourceVersion, '10');
});

test('a created object that the watch saw deleted is not served, even within the created TTL', (t) => {
  const { store, cache } = setup();
  const created = object('12');
  cache.wrote(created, true);
  t.is(cache.get('ns/a'), created, 'served before the store sees it');
  store.apply(created);
  cache.observe({ type: 'apply', key: 'ns/a', object: created });
  store.delete(created);
  cache.observe({ type: 'delete', key: 'ns/a', object: created });
  t.is(cache.get('ns/a'), undefined, 'the deletion is seen at once');
  t.is(cache.size, 0);
});

test('a deletion of another uid leaves the entry of the written object', (t) => {
  const { cache } = setup();
  cache.wrote(object('12', 'uid-new'), true);
  cache.observe({ type: 'delete', key: 'ns/a', object: object('11', 'uid-old') });
  t.is(cache.get('ns/a')?.metadata.uid, 'uid-new');
});

test('close cancels the sweep and keeps nothing written afterwards', (t) => {
  const { store, cache, clock } = setup();
  store.apply(object('10'));
  cache.wrote(object('12'));
  t.is(clock.actions.length, 1, 'a sweep is scheduled');
  cache.close();
  t.is(clock.actions.length, 0, 'and cancelled');
  cache.wrote(object('13'));
  t.is(cache.size, 0);
  t.is(cache.get('ns/a')?.metadata.resourceVersion, '10');
});

test("the watch's delivery of a version this process wrote is an echo, once; another writer's version never is", (t) => {
  const { store, cache } = setup();
  store.apply(object('10'));
  cache.wrote(object('12'));
  cache.wrote(object('14'));
  const change = (resourceVersion: string) => ({ type: 'apply', key: 'ns/a', object: object(resourceVersion) }) as const;
  t.true(cache.isEcho(change('12')), 'the first write');
  t.false(cache.isEcho(change('13')), "another writer's version between them");
  t.true(cache.isEcho(change('14')), 'the second write');
  t.false(cache.isEcho(change('14')), 'delivered again (a relist): no longer awaited');
  t.is(cache.awaitingEchoes, 0);
  t.false(cache.isEcho({ type: 'delete', key: 'ns/a', object: object('14') }), 'a deletion is never an echo');
});

test("a later version's echo ends the wait for the earlier ones, which a watch delivers first or never", (t) => {
  const { store, cache } = setup();
  store.apply(object('10'));
  cache.wrote(object('12'));
  cache.wrote(object('14'));
  t.true(cache.isEcho({ type: 'apply', key: 'ns/a', object: object('14') }));
  t.false(cache.isEcho({ type: 'apply', key: 'ns/a', object: object('12') }));
  t.is(cache.awaitingEchoes, 0);
});

test('a version the store has already (the event came before the answer was read) is not awaited', (t) => {
  const { store, cache } = setup();
  store.apply(object('12'));
  cache.wrote(object('12'));
  t.is(cache.awaitingEchoes, 0);
  store.apply(object('15'));
  cache.wrote(object('13'));
  t.is(cache.awaitingEchoes, 0, 'nor an older one');
});

test('an object learned from a read is served as a written one, but its version is no echo', (t) => {
  const { store, cache } = setup();
  store.apply(object('10'));
  cache.learned(object('12'));
  t.is(cache.get('ns/a')?.metadata.resourceVersion, '12');
  t.false(cache.isEcho({ type: 'apply', key: 'ns/a', object: object('12') }));
  const other = setup();
  other.cache.learned(object('20'), true);
  t.is(other.cache.get('ns/a')?.metadata.resourceVersion, '20', 'created: served before the store has it');
});

test('an awaited echo that never comes is dropped a TTL after the last write, and forget drops it at once', (t) => {
  const store = new Store<KubeObject>();
  const clock = new VirtualClock();
  const cache = new FreshCache(store, { scheduler: clock, ttlMs: 60_000, sweepMs: 1_000 });
  store.apply(object('10'));
  cache.wrote(object('12'));
  store.apply(object('12'));
  cache.observe({ type: 'apply', key: 'ns/a', object: object('12') });
  t.is(cache.size, 0, 'the store caught up');
  t.is(cache.awaitingEchoes, 1, 'nobody asked about the echo yet');
  clock.advance(59_000);
  t.is(cache.awaitingEchoes, 1);
  clock.advance(2_000);
  t.is(cache.awaitingEchoes, 0);
  t.is(clock.actions.length, 0, 'the sweep stops once nothing is left');
  cache.wrote(object('14'));
  cache.forget('ns/a');
  t.is(cache.awaitingEchoes, 0);
});
