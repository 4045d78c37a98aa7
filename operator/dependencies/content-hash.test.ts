// Tests of contentHash: data and binaryData count, metadata and key order do not.
import { createHash } from 'node:crypto';
import test from 'ava';
import { contentHash } from './content-hash.js';

test('the hash is the SHA-256 of the canonical sorted form, in hex', (t) => {
  const expected = createHash('sha256').update('{"d":[["a","1"],["b","2"]],"b":[["bin","AAE="]]}').digest('hex');
  t.is(contentHash({ data: { b: '2', a: '1' }, binaryData: { bin: 'AAE=' } }), expected);
  t.regex(expected, /^[0-9a-f]{64}$/);
});

test('metadata never counts, and neither does key order', (t) => {
  const withMetadata = { metadata: { name: 'x', labels: { l: '1' }, resourceVersion: '9' }, data: { a: '1', b: '2' } };
  t.is(contentHash(withMetadata), contentHash({ data: { b: '2', a: '1' } }));
});

test('numeric-looking keys sort as strings, unlike an object literal would order them', (t) => {
  t.is(contentHash({ data: { 10: 'x', 2: 'y', a: 'z' } }), contentHash({ data: { a: 'z', 2: 'y', 10: 'x' } }));
  const expected = createHash('sha256').update('{"d":[["10","x"],["2","y"]],"b":[]}').digest('hex');
  t.is(contentHash({ data: { 2: 'y', 10: 'x' } }), expected);
});

test('an absent map hashes like an empty one, and each value change or data/binaryData move changes the hash', (t) => {
  t.is(contentHash({}), contentHash({ data: {}, binaryData: null }));
  t.not(contentHash({ data: { a: '1' } }), contentHash({ data: { a: '2' } }));
  t.not(contentHash({ data: { a: '1' } }), contentHash({ binaryData: { a: '1' } }));
  t.not(contentHash({ data: { ab: 'c' } }), contentHash({ data: { a: 'bc' } }));
});
