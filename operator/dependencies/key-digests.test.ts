// Tests of per-key digests and the hash of some keys alone: blind to other keys, a missing key told from an empty one, keyed for Secrets.
import { createHash } from 'node:crypto';
import test from 'ava';
import { dependencyHashes } from './keyed-hash.js';
import { keyDigests, keysHash, stateForRef } from './key-digests.js';
import type { DependencyKind, DependencyRef, DependencyState } from './source.js';

const UID = '6f1c2a8e-3b7d-4e59-9a0c-1d2e3f405162';

const state = (kind: DependencyKind, data: Record<string, string>, binaryData?: Record<string, string>): DependencyState => ({
  ref: { kind, namespace: 'ns', name: 'x' },
  exists: true,
  ...dependencyHashes(kind, { metadata: { uid: UID }, data, binaryData }),
  resourceVersion: '1',
});
const ref = (kind: DependencyKind, keys?: string[]): DependencyRef => ({ kind, namespace: 'ns', name: 'x', keys });
const hashOf = (view: DependencyState): string | undefined => (view.exists ? view.hash : undefined);

for (const kind of ['ConfigMap', 'Secret'] as const) {
  test(`${kind}: the hash of some keys ignores every other key, and follows each of its own`, (t) => {
    const keyed = ref(kind, ['a']);
    const before = hashOf(stateForRef(state(kind, { a: '1', b: '1' }), keyed));
    t.is(hashOf(stateForRef(state(kind, { a: '1', b: '2', c: '3' }), keyed)), before, 'another key changed or added');
    t.not(hashOf(stateForRef(state(kind, { a: '2', b: '1' }), keyed)), before, 'its key changed');
    t.not(hashOf(stateForRef(state(kind, {}, { a: '1' }), keyed)), before, 'its key moved to binaryData');
    t.is(
      hashOf(stateForRef(state(kind, { a: '1', b: '1' }), ref(kind, ['b', 'a', 'b']))),
      hashOf(stateForRef(state(kind, { a: '1', b: '1' }), ref(kind, ['a', 'b']))),
      'key order and repeats do not matter',
    );
  });

  test(`${kind}: a missing key is named and hashes apart from an empty value; no keys is the whole object`, (t) => {
    const keyed = ref(kind, ['a', 'z']);
    const missing = stateForRef(state(kind, { a: '1' }), keyed);
    const empty = stateForRef(state(kind, { a: '1', z: '' }), keyed);
    t.like(missing, { exists: true, missingKeys: ['z'] });
    t.false(empty.exists && 'missingKeys' in empty);
    t.not(hashOf(missing), hashOf(empty));
    const whole = state(kind, { a: '1' });
    t.is(stateForRef(whole, ref(kind)), whole);
    t.is(stateForRef(whole, ref(kind, [])), whole);
    t.deepEqual(stateForRef({ ref: ref(kind), exists: false }, keyed), { ref: keyed, exists: false });
  });
}

test('a Secret: no plain SHA-256 of a value, in a digest or in the hash of keys (32 hex digits, keyed with the uid)', (t) => {
  const plain = (value: string) =>
    createHash('sha256')
      .update(JSON.stringify(['d', 'a', value]))
      .digest('hex');
  const digests = keyDigests('Secret', UID, { data: { a: 'MQ==' } });
  t.not(digests.get('a'), plain('MQ==').slice(0, 32));
  t.not(keyDigests('Secret', 'another-uid', { data: { a: 'MQ==' } }).get('a'), digests.get('a'), 'keyed with the uid');
  t.regex(keysHash('Secret', digests, ['a']), /^[0-9a-f]{32}$/);
  t.regex(keysHash('ConfigMap', keyDigests('ConfigMap', undefined, { data: { a: 'MQ==' } }), ['a']), /^[0-9a-f]{64}$/);
  t.throws(() => keyDigests('Secret', undefined, { data: { a: 'MQ==' } }), { message: /without a uid/ });
});
