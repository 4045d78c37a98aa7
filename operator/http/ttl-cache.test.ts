// Tests of TtlCache: entries expire at their own deadline, and the least recently used go first past the bound.
import test from 'ava';
import { TtlCache } from './ttl-cache.js';

test('an entry lives exactly its ttl', (t) => {
  let now = 1_000;
  const cache = new TtlCache<string, number>({ maxEntries: 10, now: () => now });
  cache.set('a', 1, 100);
  now = 1_099;
  t.is(cache.get('a'), 1);
  now = 1_100;
  t.is(cache.get('a'), undefined);
  t.is(cache.size, 0, 'the expired entry is dropped when read');
});

test('past maxEntries the least recently used goes, and a read counts as a use', (t) => {
  const cache = new TtlCache<string, number>({ maxEntries: 2, now: () => 0 });
  cache.set('a', 1, 1_000);
  cache.set('b', 2, 1_000);
  t.is(cache.get('a'), 1);
  cache.set('c', 3, 1_000);
  t.is(cache.size, 2);
  t.is(cache.get('b'), undefined, 'b was the least recently used');
  t.is(cache.get('a'), 1);
  t.is(cache.get('c'), 3);
});

test('a set replaces, a ttl of 0 keeps nothing, and a bound below 1 is refused with the input quoted', (t) => {
  const cache = new TtlCache<string, number>({ maxEntries: 1, now: () => 0 });
  cache.set('a', 1, 10);
  cache.set('a', 2, 10);
  t.is(cache.get('a'), 2);
  cache.set('a', 3, 0);
  t.is(cache.get('a'), undefined);
  t.throws(() => new TtlCache({ maxEntries: 0 }), { message: 'TtlCache: maxEntries 0 must be at least 1' });
});

test('a flood of distinct keys never holds more than the bound', (t) => {
  const cache = new TtlCache<number, number>({ maxEntries: 100, now: () => 0 });
  for (let key = 0; key < 10_000; key += 1) cache.set(key, key, 60_000);
  t.is(cache.size, 100);
  t.is(cache.get(9_999), 9_999);
  t.is(cache.get(0), undefined);
});
