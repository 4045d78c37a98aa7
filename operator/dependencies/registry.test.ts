// Marble tests of the dependency registry: reference counting, sharing, teardown, collapse and split without a lost or replayed event.
import test from 'ava';
import type { Observable } from 'rxjs';
import { type RunHelpers, TestScheduler } from 'rxjs/testing';
import type { ColdObservable } from 'rxjs/internal/testing/ColdObservable';
import { Registry } from 'prom-client';
import { capturedLogger } from '../watch/testing/captured-logger.js';
import type { WatcherEvent } from '../watch/events.js';
import { contentHash } from './content-hash.js';
import { keyDigests } from './key-digests.js';
import type { DependencyObject, WatchScope } from './dependency-watch.js';
import { DependencyRegistry } from './registry.js';
import type { DependencyRef, DependencyState } from './source.js';

type Event = WatcherEvent<DependencyObject>;

const ref = (name: string): DependencyRef => ({ kind: 'ConfigMap', namespace: 'ns', name });
const object = (name: string, resourceVersion: string, value: string, labels: Record<string, string> = {}): DependencyObject => ({
  metadata: { namespace: 'ns', name, resourceVersion, labels },
  data: { key: value },
});
const present = (name: string, resourceVersion: string, value: string): DependencyState => ({
  ref: ref(name),
  exists: true,
  hash: contentHash({ data: { key: value } }),
  keyDigests: keyDigests('ConfigMap', undefined, { data: { key: value } }),
  resourceVersion,
});
const absent = (name: string): DependencyState => ({ ref: ref(name), exists: false });

const init: Event = { type: 'init' };
const listed = (o: DependencyObject): Event => ({ type: 'initApply', object: o });
const done = (resourceVersion: string): Event => ({ type: 'initDone', resourceVersion });
const applied = (o: DependencyObject): Event => ({ type: 'apply', object: o });
const deleted = (o: DependencyObject): Event => ({ type: 'delete', object: o });

/** The values of a namespace watch's first list, `iabd` in its marbles: a (1) and b (2), as of 15. */
const LISTED_AB = { i: init, a: listed(object('a', '1', 'a')), b: listed(object('b', '2', 'b')), d: done('15') } as const;

function scheduler(t: { deepEqual: (a: unknown, b: unknown) => void }): TestScheduler {
  return new TestScheduler((actual, expected) => t.deepEqual(actual, expected));
}

/** An events factory that hands out, per scope (`name` or `*` for the namespace), the next of the given cold streams. */
function fakeEvents(streams: Record<string, ColdObservable<Event>[]>): {
  events: (scope: WatchScope) => Observable<Event>;
  opened: string[];
} {
  const opened: string[] = [];
  return {
    opened,
    events: (scope) => {
      const key = scope.name ?? '*';
      const next = streams[key]?.shift();
      if (!next) throw new Error(`no stream left for ${key}`);
      opened.push(key);
      return next;
    },
  };
}

/**
 * The opening the collapse tests share: a registry of collapseThreshold 1 whose first ref, a, is listed by its own
 * object stream at frame 0 (as of 1) and acquired then; the next ref acquired collapses both onto the namespace watch.
 */
function registryAfterA(
  { cold, expectObservable }: RunHelpers,
  streams: Record<string, ColdObservable<Event>[]>,
): { registry: DependencyRegistry; opened: string[]; objectA: ColdObservable<Event> } {
  const objectA = cold<Event>('(iad)', { i: init, a: listed(object('a', '1', 'a')), d: done('1') });
  const { events, opened } = fakeEvents({ a: [objectA], ...streams });
  const registry = new DependencyRegistry({ events, collapseThreshold: 1, splitThreshold: 0 });
  expectObservable(registry.acquire(ref('a'))).toBe('a', { a: present('a', '1', 'a') });
  return { registry, opened, objectA };
}

test('the first subscriber starts the watch and a later one shares it, getting the current state at once', (t) => {
  const testScheduler = scheduler(t);
  testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold<Event>('iad---u---m--x', {
      i: init,
      a: listed(object('app', '5', 'one')),
      d: done('5'),
      u: applied(object('app', '7', 'two')),
      m: applied(object('app', '8', 'two', { touched: 'yes' })),
      x: deleted(object('app', '9', 'two')),
    });
    const registry = new DependencyRegistry({ events: fakeEvents({ app: [source] }).events });
    const states = { a: present('app', '5', 'one'), b: present('app', '7', 'two'), x: absent('app') };
    expectObservable(registry.acquire(ref('app')), '^----------------!').toBe('--a---b------x', states);
    expectObservable(registry.acquire(ref('app')), '----^-------!').toBe('----a-b', states);
    expectSubscriptions(source.subscriptions).toBe('^----------------!');
  });
});

test('releasing one of two subscribers keeps the watch, and the last release tears it down', (t) => {
  const testScheduler = scheduler(t);
  let registry: DependencyRegistry | undefined;
  const counts: number[] = [];
  testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold<Event>('(id)', { i: init, d: done('3') });
    registry = new DependencyRegistry({ events: fakeEvents({ app: [source] }).events });
    expectObservable(registry.acquire(ref('app')), '^---!').toBe('a', { a: absent('app') });
    expectObservable(registry.acquire(ref('app')), '--^------!').toBe('--a', { a: absent('app') });
    for (const frame of [1, 3, 5, 9])
      testScheduler.schedule(() => counts.push(registry!.subscribers().get('ConfigMap/ns/app') ?? 0), frame);
    expectSubscriptions(source.subscriptions).toBe('^--------!');
  });
  t.deepEqual(counts, [1, 2, 1, 0]);
  t.deepEqual(registry!.watched(), []);
  t.deepEqual(registry!.streams(), []);
});

test('an object that does not exist yet is absent, and its creation is an emission', (t) => {
  scheduler(t).run(({ cold, expectObservable }) => {
    const source = cold<Event>('id--c', { i: init, d: done('3'), c: applied(object('later', '4', 'v')) });
    const registry = new DependencyRegistry({ events: fakeEvents({ later: [source] }).events });
    expectObservable(registry.acquire(ref('later'))).toBe('-a--c', { a: absent('later'), c: present('later', '4', 'v') });
  });
});

test('a relist emits only when existence or content moved; resourceVersion and metadata alone emit nothing', (t) => {
  scheduler(t).run(({ cold, expectObservable }) => {
    const source = cold<Event>('iad-(iAD)-(iE)', {
      i: init,
      a: listed(object('app', '5', 'one')),
      d: done('5'),
      A: listed(object('app', '6', 'one', { relabelled: 'yes' })),
      D: done('8'),
      E: done('12'),
    });
    const registry = new DependencyRegistry({ events: fakeEvents({ app: [source] }).events });
    expectObservable(registry.acquire(ref('app'))).toBe('--a 7ms x', { a: present('app', '5', 'one'), x: absent('app') });
  });
});

test('past the threshold the object watches collapse into a namespace watch, and below the lower one it splits back, losing and replaying nothing', (t) => {
  const testScheduler = scheduler(t);
  const streams: string[][] = [];
  const { logger, lines } = capturedLogger('info');
  testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
    const a5 = object('a', '5', 'a-one');
    const a7 = object('a', '7', 'a-two');
    const a10 = object('a', '10', 'a-three');
    const a12 = object('a', '12', 'a-four');
    const b6 = object('b', '6', 'b-one');
    const objectA1 = cold<Event>('iad--u', { i: init, a: listed(a5), d: done('5'), u: applied(a7) });
    const objectB1 = cold<Event>('ibD', { i: init, b: listed(b6), D: done('6') });
    // The namespace list is as of 6 (before a7), then its watch repeats a7, creates c, churns an unrelated z, updates a.
    const namespace1 = cold<Event>('iazb-d--U-c-C--Z-A', {
      i: init,
      a: listed(a5),
      z: listed(object('z', '2', 'unrelated')),
      b: listed(b6),
      d: done('6'),
      U: applied(a7),
      c: applied(object('c', '8', 'c-one')),
      C: applied(object('c', '9', 'c-two')),
      Z: applied(object('z', '14', 'unrelated churn')),
      A: applied(a10),
    });
    const objectA2 = cold<Event>('i-ad--u', { i: init, a: listed(a10), d: done('11'), u: applied(a12) });
    const { events } = fakeEvents({ a: [objectA1, objectA2], b: [objectB1], '*': [namespace1] });
    const registry = new DependencyRegistry({ events, collapseThreshold: 2, splitThreshold: 2, logger, scheduler: testScheduler });

    expectObservable(registry.acquire(ref('a')), '^ 25ms !').toBe('--x--y 13ms z---w', {
      x: present('a', '5', 'a-one'),
      y: present('a', '7', 'a-two'),
      z: present('a', '10', 'a-three'),
      w: present('a', '12', 'a-four'),
    });
    expectObservable(registry.acquire(ref('b')), '-^ 15ms !').toBe('---b', { b: present('b', '6', 'b-one') });
    expectObservable(registry.acquire(ref('c')), '--^ 13ms !').toBe('-------n----c-C', {
      n: absent('c'),
      c: present('c', '8', 'c-one'),
      C: present('c', '9', 'c-two'),
    });
    for (const frame of [1, 6, 8, 16, 18, 21]) {
      testScheduler.schedule(
        () =>
          streams.push(
            registry
              .streams()
              .map((stream) => stream.name ?? '*')
              .sort(),
          ),
        frame,
      );
    }
    expectSubscriptions(objectA1.subscriptions).toBe('^------!');
    expectSubscriptions(objectB1.subscriptions).toBe('-^-----!');
    expectSubscriptions(namespace1.subscriptions).toBe('--^ 17ms !');
    expectSubscriptions(objectA2.subscriptions).toBe('17ms ^ 8ms !');
  });
  t.deepEqual(streams, [
    ['a', 'b'], // 1: two object watches
    ['*', 'a', 'b'], // 6: collapsing, the namespace watch is listing
    ['*'], // 8: collapsed
    ['*'], // 16: c released, still collapsed (2 is not below 2)
    ['*', 'a'], // 18: b released, splitting
    ['a'], // 21: split
  ]);
  const switches = lines()
    .filter((line) => line.msg === 'collapse' || line.msg === 'split')
    .map((line) => `${line.msg} ${line.phase} ${line.refs}`);
  t.deepEqual(switches, ['collapse started 3', 'collapse done 3', 'split started 1', 'split done 1']);
});

test('a ref acquired once the namespace watch runs gets its first state from a one-shot list, and a newer watch event wins over it', (t) => {
  scheduler(t).run((helpers) => {
    const { cold, expectObservable, expectSubscriptions } = helpers;
    // The namespace watch sees d created (22) before d's own list (as of 20, d absent) answers.
    const namespace = cold<Event>('iabd--D', {
      ...LISTED_AB,
      D: applied(object('d', '22', 'd')),
    });
    const snapshotD = cold<Event>('-id-u', { i: init, d: done('20'), u: applied(object('d', '30', 'never read')) });
    const { registry, objectA } = registryAfterA(helpers, { '*': [namespace], d: [snapshotD] });
    expectObservable(registry.acquire(ref('b')), '-^').toBe('----b', { b: present('b', '2', 'b') });
    expectObservable(registry.acquire(ref('d')), '------^').toBe('-------d', { d: present('d', '22', 'd') });
    expectSubscriptions(objectA.subscriptions).toBe('^---!');
    expectSubscriptions(namespace.subscriptions).toBe('-^');
    expectSubscriptions(snapshotD.subscriptions).toBe('------^-!');
  });
});

test('a namespace list hashes only the referenced objects; a ref added while it runs, for an object it already read, gets a one-shot list of its own', (t) => {
  let openedStreams: string[] = [];
  scheduler(t).run((helpers) => {
    const { cold, expectObservable, expectSubscriptions } = helpers;
    // c is listed (frame 2) before anything references it; its ref arrives at frame 3, while the list still runs.
    const namespace = cold<Event>('icabd', { ...LISTED_AB, c: listed(object('c', '3', 'c')) });
    const snapshotC = cold<Event>('(icd)', { i: init, c: listed(object('c', '16', 'c')), d: done('16') });
    const { registry, opened } = registryAfterA(helpers, { '*': [namespace], c: [snapshotC] });
    expectObservable(registry.acquire(ref('b')), '-^').toBe('-----b', { b: present('b', '2', 'b') });
    expectObservable(registry.acquire(ref('c')), '---^').toBe('-----c', { c: present('c', '16', 'c') });
    expectSubscriptions(snapshotC.subscriptions).toBe('-----(^!)');
    openedStreams = opened;
  });
  t.deepEqual(openedStreams, ['a', '*', 'c']);
});

test('a burst of new refs once the namespace watch runs is covered by one list of the namespace, past collapseThreshold snapshots in flight', (t) => {
  let openedStreams: string[] = [];
  scheduler(t).run((helpers) => {
    const { cold, expectObservable, expectSubscriptions } = helpers;
    const namespace = cold<Event>('iabd', LISTED_AB);
    const c = object('c', '18', 'c');
    const snapshotC = cold<Event>('--(icd)', { i: init, c: listed(c), d: done('18') });
    const namespaceSnapshot = cold<Event>('iabcdeD', {
      i: init,
      a: listed(object('a', '1', 'a')),
      b: listed(object('b', '2', 'b')),
      c: listed(c),
      d: listed(object('d', '19', 'd')),
      e: listed(object('e', '19', 'e')),
      D: done('20'),
    });
    const { registry, opened } = registryAfterA(helpers, { '*': [namespace, namespaceSnapshot], c: [snapshotC] });
    expectObservable(registry.acquire(ref('b')), '-^').toBe('----b', { b: present('b', '2', 'b') });
    expectObservable(registry.acquire(ref('c')), '------^').toBe('--------c', { c: present('c', '18', 'c') });
    expectObservable(registry.acquire(ref('d')), '------^').toBe('------------d', { d: present('d', '19', 'd') });
    expectObservable(registry.acquire(ref('e')), '------^').toBe('------------e', { e: present('e', '19', 'e') });
    expectSubscriptions(snapshotC.subscriptions).toBe('------^-!');
    expectSubscriptions(namespaceSnapshot.subscriptions).toBe('------^-----!');
    expectSubscriptions(namespace.subscriptions).toBe('-^');
    openedStreams = opened;
  });
  t.deepEqual(openedStreams, ['a', '*', 'c', '*'], 'd and e opened no stream of their own');
});

test('a ref added while a namespace snapshot is in flight is not served that older list when the namespace watch already dropped its change', (t) => {
  let openedStreams: string[] = [];
  scheduler(t).run((helpers) => {
    const { cold, expectObservable, expectSubscriptions } = helpers;
    // Collapsed from frame 1; at frame 9 the namespace watch delivers n created (22), which nobody references yet.
    const namespace = cold<Event>('iabd 4ms N', {
      ...LISTED_AB,
      N: applied(object('n', '22', 'n')),
    });
    // c is the one entry a group of collapseThreshold 1 watches by object, so d starts a slow list of the namespace, as of 20.
    const snapshotC = cold<Event>('------(id)', { i: init, d: done('18') });
    const namespaceSnapshot = cold<Event>('i-------D', { i: init, D: done('20') });
    // n, referenced at frame 11, after its creation went by and before the namespace list answers.
    const snapshotN = cold<Event>('-(iad)', { i: init, a: listed(object('n', '22', 'n')), d: done('23') });
    const { registry, opened } = registryAfterA(helpers, { '*': [namespace, namespaceSnapshot], c: [snapshotC], n: [snapshotN] });
    expectObservable(registry.acquire(ref('b')), '-^').toBe('----b', { b: present('b', '2', 'b') });
    expectObservable(registry.acquire(ref('c')), '-----^').toBe('-----------c', { c: absent('c') });
    expectObservable(registry.acquire(ref('d')), '-----^').toBe('-------------d', { d: absent('d') });
    expectObservable(registry.acquire(ref('n')), '-----------^').toBe('------------n', { n: present('n', '22', 'n') });
    expectSubscriptions(namespaceSnapshot.subscriptions).toBe('-----^-------!');
    expectSubscriptions(snapshotN.subscriptions).toBe('-----------^!');
    openedStreams = opened;
  });
  t.deepEqual(openedStreams, ['a', '*', 'c', '*', 'n'], 'n gets a list of its own, made after its creation was dropped');
});

test('a ref added after the namespace watch relisted is not served the namespace snapshot that list outdates', (t) => {
  let openedStreams: string[] = [];
  scheduler(t).run((helpers) => {
    const { cold, expectObservable } = helpers;
    // Collapsed from frame 1. n changes (22) and m is deleted (21), and the watch loses both events to a 410: its
    // relist at frame 7 reports n's new content as a listed object and m's deletion as an absence, not as events.
    const namespace = cold<Event>('iabd 2ms (iabND)', {
      ...LISTED_AB,
      N: listed(object('n', '22', 'new')),
      D: done('23'),
    });
    // c is the one entry a group of collapseThreshold 1 watches by object, so d starts a slow list of the namespace, as of 20.
    const snapshotC = cold<Event>('------(id)', { i: init, d: done('18') });
    const namespaceSnapshot = cold<Event>('i-------(nmD)', {
      i: init,
      n: listed(object('n', '12', 'old')),
      m: listed(object('m', '11', 'm')),
      D: done('20'),
    });
    // n and m, referenced at frame 9, after the relist and before the older namespace list answers.
    const snapshotN = cold<Event>('-(iad)', { i: init, a: listed(object('n', '22', 'new')), d: done('24') });
    const snapshotM = cold<Event>('-(id)', { i: init, d: done('24') });
    const { registry, opened } = registryAfterA(helpers, {
      '*': [namespace, namespaceSnapshot],
      c: [snapshotC],
      n: [snapshotN],
      m: [snapshotM],
    });
    expectObservable(registry.acquire(ref('b')), '-^').toBe('----b', { b: present('b', '2', 'b') });
    expectObservable(registry.acquire(ref('c')), '-----^').toBe('-------c', { c: absent('c') });
    expectObservable(registry.acquire(ref('d')), '-----^').toBe('-------d', { d: absent('d') });
    expectObservable(registry.acquire(ref('n')), '---------^').toBe('----------n', { n: present('n', '22', 'new') });
    expectObservable(registry.acquire(ref('m')), '---------^').toBe('----------m', { m: absent('m') });
    openedStreams = opened;
  });
  t.deepEqual(openedStreams, ['a', '*', 'c', '*', 'n', 'm'], 'n and m get lists of their own, made after the relist');
});

test('close completes every acquired Observable and stops every watch; later acquires complete at once', (t) => {
  const testScheduler = scheduler(t);
  testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold<Event>('id', { i: init, d: done('1') });
    const registry = new DependencyRegistry({ events: fakeEvents({ app: [source] }).events });
    expectObservable(registry.acquire(ref('app'))).toBe('-a--|', { a: absent('app') });
    testScheduler.schedule(() => registry.close(), 4);
    expectObservable(registry.acquire(ref('other')), '-----^').toBe('-----|');
    expectSubscriptions(source.subscriptions).toBe('^---!');
  });
});

test('metrics count distinct watched objects, open streams by scope, and subscribers, in the registry passed in', async (t) => {
  const metrics = new Registry();
  const testScheduler = scheduler(t);
  let registry: DependencyRegistry | undefined;
  testScheduler.run(({ cold, expectObservable }) => {
    const quiet = (): ColdObservable<Event> => cold<Event>('id', { i: init, d: done('1') });
    registry = new DependencyRegistry({ events: fakeEvents({ a: [quiet()], b: [quiet()] }).events, metrics });
    expectObservable(registry.acquire(ref('a'))).toBe('-a', { a: absent('a') });
    expectObservable(registry.acquire(ref('a'))).toBe('-a', { a: absent('a') });
    expectObservable(registry.acquire({ kind: 'Secret', namespace: 'ns', name: 'b' })).toBe('-b', {
      b: { ref: { kind: 'Secret', namespace: 'ns', name: 'b' }, exists: false },
    });
  });
  const text = await metrics.metrics();
  t.regex(text, /customapp_dependency_watches_active\{kind="ConfigMap"\} 1/);
  t.regex(text, /customapp_dependency_watches_active\{kind="Secret"\} 1/);
  t.regex(text, /customapp_watch_streams_open\{kind="ConfigMap",scope="object"\} 1/);
  t.regex(text, /customapp_watch_streams_open\{kind="ConfigMap",scope="namespace"\} 0/);
  t.regex(text, /customapp_dependency_subscribers\{kind="ConfigMap"\} 2/);
  t.regex(text, /customapp_dependency_subscribers\{kind="Secret"\} 1/);
  registry!.close();
});

test('each acquire, share and release is a structured log line', (t) => {
  const { logger, lines } = capturedLogger('info');
  scheduler(t).run(({ cold, expectObservable }) => {
    const registry = new DependencyRegistry({
      events: fakeEvents({ app: [cold<Event>('(id)', { i: init, d: done('1') })] }).events,
      logger,
    });
    expectObservable(registry.acquire(ref('app')), '^--!').toBe('a', { a: absent('app') });
    expectObservable(registry.acquire(ref('app')), '-^-!').toBe('-a', { a: absent('app') });
  });
  const mine = lines().filter((line) => line.component === 'dependency-registry');
  t.deepEqual(
    mine.map((line) => `${line.msg} ${line.ref} ${line.subscribers}`),
    ['acquire ConfigMap/ns/app 1', 'share ConfigMap/ns/app 2', 'release ConfigMap/ns/app 1', 'release ConfigMap/ns/app 0'],
  );
});

test('refs acquired in one batch past the collapse threshold open the namespace watch alone, which serves them all', (t) => {
  let openedStreams: string[] = [];
  const seen: DependencyState[] = [];
  scheduler(t).run(({ cold, flush }) => {
    const namespace = cold<Event>('i(abc)d', {
      i: init,
      a: listed(object('a', '1', 'a')),
      b: listed(object('b', '2', 'b')),
      c: listed(object('c', '3', 'c')),
      d: done('5'),
    });
    const { events, opened } = fakeEvents({ '*': [namespace] });
    const registry = new DependencyRegistry({ events, collapseThreshold: 2, splitThreshold: 1 });
    registry.batch(() => {
      for (const name of ['a', 'b', 'c']) registry.acquire(ref(name)).subscribe((state) => seen.push(state));
    });
    flush();
    openedStreams = opened;
  });
  t.deepEqual(openedStreams, ['*'], 'no per-object watch for the first refs');
  t.deepEqual(seen, [present('a', '1', 'a'), present('b', '2', 'b'), present('c', '3', 'c')]);
});
