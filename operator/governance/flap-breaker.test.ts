// The flap breaker alone: it opens past the threshold within the window, closes after a quiet window, and forgets idle refs.
import test from 'ava';
import { type DependencyState, refKey } from '../dependencies/source.js';
import { FlapBreaker } from './flap-breaker.js';

const REF = { kind: 'ConfigMap', namespace: 'ns', name: 'shared' } as const;
const KEY = refKey(REF);
const present = (hash: string): DependencyState => ({ ref: REF, exists: true, hash, resourceVersion: '1' });

/** Observes each `[at, hash]` in turn (at in ms) and answers what each observation said. */
function feed(breaker: FlapBreaker, ...changes: readonly [number, string][]): string[] {
  return changes.map(([at, hash]) => breaker.observe(present(hash), at));
}

test('the first state is not a change, nor is the same content again', (t) => {
  const breaker = new FlapBreaker({ threshold: 1, windowMs: 1000 });
  t.deepEqual(feed(breaker, [0, 'h0'], [1, 'h0']), ['initial', 'same']);
  t.false(breaker.check(KEY, 2).open);
  t.is(breaker.lastChange(KEY), undefined);
});

test('more than threshold changes within the window open it; it says the count and when it will have been quiet', (t) => {
  const breaker = new FlapBreaker({ threshold: 3, windowMs: 10_000 });
  t.deepEqual(feed(breaker, [0, 'h0'], [1000, 'h1'], [2000, 'h2'], [3000, 'h3']), ['initial', 'changed', 'changed', 'changed']);
  t.false(breaker.check(KEY, 3000).open, 'three changes are not more than three');
  t.is(breaker.observe(present('h4'), 4000), 'opened');
  t.deepEqual(breaker.check(KEY, 5000), { open: true, changes: 4, quietInMs: 9000 });
  t.is(breaker.openCount(5000), 1);
});

test('it stays open while changes go on, and closes only once the object has not changed for the whole window', (t) => {
  const breaker = new FlapBreaker({ threshold: 1, windowMs: 1000 });
  feed(breaker, [0, 'a'], [100, 'b'], [200, 'c']);
  t.true(breaker.check(KEY, 200).open);
  feed(breaker, [900, 'd']);
  t.like(breaker.check(KEY, 1500), { open: true, quietInMs: 400 }, '600 ms after the last change');
  t.false(breaker.check(KEY, 1900).open, 'quiet for the window: closed');
  t.is(breaker.openCount(1900), 0);
  t.is(breaker.observe(present('e'), 2000), 'changed', 'after closing, the old changes no longer count');
});

test('changes spread wider than the window never open it', (t) => {
  const breaker = new FlapBreaker({ threshold: 2, windowMs: 1000 });
  const said = feed(breaker, [0, 'a'], ...Array.from({ length: 20 }, (_, index): [number, string] => [(index + 1) * 600, `h${index}`]));
  t.false(said.includes('opened'));
  t.false(breaker.check(KEY, 13_000).open);
});

test('an absent object and its return count as changes', (t) => {
  const breaker = new FlapBreaker({ threshold: 1, windowMs: 1000 });
  breaker.observe(present('a'), 0);
  t.is(breaker.observe({ ref: REF, exists: false }, 10), 'changed');
  t.is(breaker.observe(present('a'), 20), 'opened');
});

test('a threshold of 0 never opens, but still times the changes (for the debounce)', (t) => {
  const breaker = new FlapBreaker({ threshold: 0, windowMs: 1000 });
  t.false(breaker.enabled);
  const said = feed(breaker, ...Array.from({ length: 10 }, (_, index): [number, string] => [index, `h${index}`]));
  t.false(said.includes('opened'));
  t.false(breaker.check(KEY, 10).open);
  t.is(breaker.lastChange(KEY), 9);
});

test('reopen (after a restart) opens it for a new full window; touch restarts a debounce without opening it', (t) => {
  const breaker = new FlapBreaker({ threshold: 5, windowMs: 60_000 });
  breaker.reopen(KEY, 1000);
  t.like(breaker.check(KEY, 1000), { open: true, quietInMs: 60_000 });
  t.false(breaker.check(KEY, 61_000).open);
  const other = refKey({ kind: 'Secret', namespace: 'ns', name: 's' });
  breaker.touch(other, 5000);
  t.false(breaker.check(other, 5000).open);
  t.is(breaker.lastChange(other), 5000);
});

test('the sweep forgets quiet refs that no CustomApp references, and keeps open or referenced ones', (t) => {
  const referenced = new Set<string>([KEY]);
  const breaker = new FlapBreaker({ threshold: 1, windowMs: 1000, referenced: (ref) => referenced.has(ref) });
  const refs = ['a', 'b', 'c'].map((name) => ({ kind: 'ConfigMap' as const, namespace: 'ns', name }));
  for (const ref of refs) breaker.observe({ ref, exists: true, hash: 'x', resourceVersion: '1' }, 0);
  breaker.observe(present('h0'), 0);
  // c flaps: open.
  breaker.observe({ ref: refs[2]!, exists: true, hash: 'y', resourceVersion: '2' }, 10);
  breaker.observe({ ref: refs[2]!, exists: true, hash: 'z', resourceVersion: '3' }, 20);
  t.is(breaker.size, 4);
  breaker.sweep(500);
  t.is(breaker.size, 2, 'a and b (quiet, unreferenced) are forgotten; c (open) and shared (referenced) stay');
  t.true(breaker.check(refKey(refs[2]!), 500).open);
  t.is(breaker.observe(present('h0'), 600), 'same', 'shared still remembers its content');
  breaker.sweep(2000);
  t.is(breaker.size, 1, 'c closed and is not referenced: forgotten');
  t.is(breaker.observe({ ref: refs[0]!, exists: true, hash: 'x2', resourceVersion: '4' }, 2100), 'initial', 'a was forgotten');
});

test('bad settings are refused, quoting them', (t) => {
  t.throws(() => new FlapBreaker({ threshold: -1, windowMs: 1 }), { message: /threshold -1 is not an integer ≥ 0/ });
  t.throws(() => new FlapBreaker({ threshold: 1, windowMs: 0 }), { message: /window 0 ms is not positive/ });
});

test('an object seen through a ref with keys and a whole one: one edit is one change, and a view first seen is none', (t) => {
  const breaker = new FlapBreaker({ threshold: 1, windowMs: 10_000 });
  const keyed = { ...REF, keys: ['a'] };
  const at = (ref: typeof REF | typeof keyed, hash: string, resourceVersion: string): DependencyState => ({
    ref,
    exists: true,
    hash,
    resourceVersion,
  });
  const seen = [
    breaker.observe(at(REF, 'whole-1', '1'), 0),
    breaker.observe(at(keyed, 'keys-1', '1'), 1),
    // An edit of key b: the whole object alone changes.
    breaker.observe(at(REF, 'whole-2', '2'), 2),
    // An edit of key a: both views change, for one event.
    breaker.observe(at(REF, 'whole-3', '3'), 3),
    breaker.observe(at(keyed, 'keys-3', '3'), 3),
    breaker.observe({ ref: keyed, exists: false }, 4),
    breaker.observe({ ref: REF, exists: false }, 4),
  ];
  t.deepEqual(seen, ['initial', 'same', 'changed', 'opened', 'same', 'changed', 'same']);
});
