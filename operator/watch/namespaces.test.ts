// Marble tests of acrossNamespaces: one first list of every namespace, then each namespace's changes and relists alone.
import test from 'ava';
import type { Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { KubeObject } from '../kube/objects.js';
import type { WatcherEvent } from './events.js';
import { acrossNamespaces } from './namespaces.js';

const object = (namespace: string, name: string, resourceVersion: string): KubeObject => ({
  metadata: { namespace, name, resourceVersion },
});
const A1 = object('a', 'one', '1');
const A2 = object('a', 'one', '5');
const A3 = object('a', 'two', '6');
const B1 = object('b', 'one', '2');

/** Each namespace's watcher events, by marble letter. */
const EVENTS: Record<string, WatcherEvent<KubeObject>> = {
  i: { type: 'init' },
  a: { type: 'initApply', object: A1 },
  A: { type: 'apply', object: A2 },
  T: { type: 'apply', object: A3 },
  X: { type: 'delete', object: A3 },
  b: { type: 'initApply', object: B1 },
  C: { type: 'apply', object: object('b', 'two', '8') },
  d: { type: 'initDone', resourceVersion: '3' },
  e: { type: 'initDone', resourceVersion: '7' },
};

function scheduler(t: { deepEqual: (a: unknown, b: unknown) => void }): TestScheduler {
  return new TestScheduler((actual, expected) => t.deepEqual(actual, expected));
}

test('no namespace given is one watcher of every namespace; one namespace is its watcher as it is', (t) => {
  const asked: (string | undefined)[] = [];
  const watch = (namespace: string | undefined): Observable<WatcherEvent<KubeObject>> => {
    asked.push(namespace);
    return new TestScheduler(() => undefined).createColdObservable('');
  };
  acrossNamespaces(undefined, watch);
  acrossNamespaces(['a'], watch);
  t.deepEqual(asked, [undefined, 'a']);
  t.throws(() => acrossNamespaces([], watch), { message: /no namespace to watch/ });
});

test('the first list waits for every namespace, with the changes seen meanwhile folded in, then changes pass as they come', (t) => {
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    // a lists at once and then sees one updated and two created and deleted; b lists later.
    const a = cold('iad-A-T-X---------A', EVENTS);
    const b = cold('i------b-d------C', EVENTS);
    const combined = acrossNamespaces(['a', 'b'], (namespace) => (namespace === 'a' ? a : b));
    expectObservable(combined).toBe('---------(iPBd)-C-A', {
      ...EVENTS,
      P: { type: 'initApply', object: A2 },
      B: { type: 'initApply', object: B1 },
      d: { type: 'initDone', resourceVersion: '3' },
    });
    expectSubscriptions(a.subscriptions).toBe('^');
    expectSubscriptions(b.subscriptions).toBe('^');
  });
});

test("a later relist of one namespace is emitted whole at its end, naming the namespace, never mixed with another's", (t) => {
  scheduler(t).run(({ cold, expectObservable }) => {
    const a = cold('iad---ia--e', EVENTS);
    const b = cold('ibd----ib---------d', EVENTS);
    const combined = acrossNamespaces(['a', 'b'], (namespace) => (namespace === 'a' ? a : b));
    expectObservable(combined).toBe('--(iabd)--(iae)---(ibf)', {
      ...EVENTS,
      d: { type: 'initDone', resourceVersion: '3' },
      e: { type: 'initDone', resourceVersion: '7', namespace: 'a' },
      f: { type: 'initDone', resourceVersion: '3', namespace: 'b' },
    });
  });
});

test('unsubscribing unsubscribes every namespace watcher, and an error of one ends the stream', (t) => {
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const a = cold('iad----', EVENTS);
    const b = cold('ibd----', EVENTS);
    expectObservable(
      acrossNamespaces(['a', 'b'], (namespace) => (namespace === 'a' ? a : b)),
      '----!',
    ).toBe('--(iabd)', {
      ...EVENTS,
      d: { type: 'initDone', resourceVersion: '3' },
    });
    expectSubscriptions(a.subscriptions).toBe('^---!');
    expectSubscriptions(b.subscriptions).toBe('^---!');
  });
  scheduler(t).run(({ cold, expectObservable }) => {
    const failure = new Error('watch broke');
    const a = cold('iad------#', EVENTS, failure);
    const b = cold('ibd---', EVENTS);
    expectObservable(acrossNamespaces(['a', 'b'], (namespace) => (namespace === 'a' ? a : b))).toBe(
      '--(iabd)-#',
      { ...EVENTS, d: { type: 'initDone', resourceVersion: '3' } },
      failure,
    );
  });
});
