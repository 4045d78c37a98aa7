// The comparisons every reconcile makes (drift of an owned object, a status against the last), checked against their
// plain definitions on random JSON: drift by recursion that copies arrays at every level, equality by serializing
// with sorted keys. fast-check prints the failing seed.
import test from 'ava';
import fc from 'fast-check';
import { driftPaths, isPlainObject, sameJson } from './drift.js';

type Json = unknown;

/** The definition of drift: each level returns its own paths. */
function modelDrift(actual: Json, desired: Json, ownedKeys: ReadonlyMap<string, readonly string[]>, path = ''): string[] {
  if (isPlainObject(desired)) {
    const live = isPlainObject(actual) ? actual : {};
    if (!isPlainObject(actual) && actual !== undefined) return [path || '.'];
    const drift: string[] = [];
    for (const [key, value] of Object.entries(desired)) {
      if (value === undefined) continue;
      drift.push(...modelDrift(live[key], value, ownedKeys, path ? `${path}.${key}` : key));
    }
    for (const key of ownedKeys.get(path) ?? []) {
      if (desired[key] === undefined && live[key] !== undefined) drift.push(`${path}.${key}`);
    }
    return drift;
  }
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual) || actual.length !== desired.length) return [path];
    return desired.flatMap((value, index) => modelDrift(actual[index], value, ownedKeys, `${path}[${index}]`));
  }
  return actual === desired ? [] : [path];
}

/** The definition of equality: the same JSON once object keys are sorted. */
function canonical(value: Json): string {
  return JSON.stringify(value, (_key, field: unknown) =>
    isPlainObject(field) ? Object.fromEntries(Object.entries(field).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : field,
  );
}

/** A copy of `value` with every object's keys in another order, and (with `holes`) fields set to undefined added. */
function reordered(value: Json, random: () => number, holes: boolean): Json {
  if (Array.isArray(value)) return value.map((each) => reordered(each, random, holes));
  if (!isPlainObject(value)) return value;
  const entries = Object.entries(value).map(([key, field]) => [key, reordered(field, random, holes)] as const);
  entries.sort(() => random() - 0.5);
  const copy: Record<string, Json> = {};
  for (const [key, field] of entries)
    Object.defineProperty(copy, key, { value: field, enumerable: true, writable: true, configurable: true });
  if (holes && random() < 0.5) copy[`absent-${Math.floor(random() * 3)}`] = undefined;
  return copy;
}

/** A copy of `value` with one leaf, picked by `random`, changed (or a key removed, or an element added). */
function mutated(value: Json, random: () => number): Json {
  const roll = random();
  if (Array.isArray(value) && value.length > 0) {
    if (roll < 0.1) return [...value, 'added'];
    const index = Math.floor(random() * value.length);
    return value.map((each, at) => (at === index ? mutated(each, random) : each));
  }
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    const keys = Object.keys(value);
    const key = keys[Math.floor(random() * keys.length)]!;
    if (roll < 0.1) return Object.fromEntries(Object.entries(value).filter(([each]) => each !== key));
    return { ...value, [key]: mutated(value[key], random) };
  }
  return roll < 0.5 ? 'changed' : { changed: true };
}

/** A reproducible stream of numbers in [0, 1) from fast-check's `seed`, for the copies' shuffles and changes. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 9301 + 0.49297) % 1);
}

/** Small JSON values over few keys, so that random pairs often share structure and differ in one place. */
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false, 0, 1, 'a', 'b', ''),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', 'spec', 'metadata'), tie('value'), { maxKeys: 4 }),
  ),
})).value;

const owned = fc
  .array(fc.tuple(fc.constantFrom('', 'a', 'spec', 'a.b', 'spec.metadata'), fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 })), {
    maxLength: 3,
  })
  .map((entries) => new Map(entries));

test('drift finds the paths of its definition, in the same order, for any live and desired objects', (t) => {
  fc.assert(
    fc.property(json, json, owned, (actual, desired, ownedKeys) => {
      t.deepEqual(driftPaths(actual, desired, ownedKeys), modelDrift(actual, desired, ownedKeys));
    }),
  );
  fc.assert(
    fc.property(json, owned, fc.double({ min: 0, max: 1, noNaN: true }), (desired, ownedKeys, seed) => {
      const random = seeded(seed);
      const live = reordered(desired, random, true);
      t.deepEqual(driftPaths(live, desired, ownedKeys), modelDrift(live, desired, ownedKeys));
      const changed = mutated(live, random);
      t.deepEqual(driftPaths(changed, desired, ownedKeys), modelDrift(changed, desired, ownedKeys));
      t.deepEqual(driftPaths(live, changed, ownedKeys), modelDrift(live, changed, ownedKeys));
    }),
  );
});

test('two statuses are the same exactly when their JSON with sorted keys is', (t) => {
  fc.assert(
    fc.property(json, json, (a, b) => {
      t.is(sameJson(a, b), canonical(a) === canonical(b));
    }),
  );
  fc.assert(
    fc.property(json, fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true }), (value, holes, seed) => {
      const random = seeded(seed);
      const copy = reordered(value, random, holes);
      const changed = mutated(copy, random);
      t.is(sameJson(value, changed), canonical(value) === canonical(changed));
      t.true(sameJson(value, copy));
      t.true(sameJson(copy, value));
      t.is(canonical(value), canonical(copy));
    }),
  );
  fc.assert(
    fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
      t.is(sameJson(a, b), canonical(a) === canonical(b));
      t.true(sameJson(a, structuredClone(a)));
    }),
  );
});

test('a field only one side has is a difference, even one named as what every object inherits', (t) => {
  const parsed = JSON.parse('{"__proto__": {}, "x": 1}') as unknown;
  const other = { x: 1, y: 2 };
  t.false(sameJson(parsed, other));
  t.false(sameJson(other, parsed));
  t.not(canonical(parsed), canonical(other));
});
