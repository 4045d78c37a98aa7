// Tests of the keyed Secret hash: an HMAC keyed with the uid, stable, per object, and told apart from a plain hash.
import { createHash, createHmac } from 'node:crypto';
import test from 'ava';
import { contentHash } from './content-hash.js';
import { keyDigests } from './key-digests.js';
import { dependencyHashes, isUnkeyedHash, KEYED_HASH_HEX_DIGITS, keyedContentHash } from './keyed-hash.js';

const UID = '6f1c2a8e-3b7d-4e59-9a0c-1d2e3f405162';

test('the keyed hash is HMAC-SHA-256 keyed with the uid over a context line and the canonical content, 32 hex digits', (t) => {
  const expected = createHmac('sha256', UID)
    .update('app.example.com/secret-hash\n{"d":[["a","MQ=="],["b","Mg=="]],"b":[]}')
    .digest('hex')
    .slice(0, 32);
  t.is(keyedContentHash(UID, { data: { b: 'Mg==', a: 'MQ==' } }), expected);
  t.is(KEYED_HASH_HEX_DIGITS, 32);
  t.regex(expected, /^[0-9a-f]{32}$/);
});

test('the same uid and content always give the same hash (a restart or another replica rolls nothing)', (t) => {
  t.is(keyedContentHash(UID, { data: { a: 'MQ==' } }), keyedContentHash(`${UID}`, { data: { a: 'MQ==' } }));
});

test('another uid (the Secret deleted and created again) or other content gives another hash', (t) => {
  const base = keyedContentHash(UID, { data: { a: 'MQ==' } });
  t.not(keyedContentHash('0b5e7d1c-0000-4000-8000-000000000000', { data: { a: 'MQ==' } }), base);
  t.not(keyedContentHash(UID, { data: { a: 'Mg==' } }), base);
  t.not(keyedContentHash(UID, { binaryData: { a: 'MQ==' } }), base);
});

test('no prefix of the plain SHA-256 of the content, in any form, is the keyed hash', (t) => {
  const data = { PASSWORD: Buffer.from('hunter2').toString('base64') };
  const keyed = keyedContentHash(UID, { data });
  for (const plain of [
    contentHash({ data }),
    createHash('sha256').update('hunter2').digest('hex'),
    createHash('sha256').update(JSON.stringify(data)).digest('hex'),
  ])
    t.false(plain.startsWith(keyed.slice(0, 8)));
});

test('without a uid there is no key: refused with the input quoted', (t) => {
  t.throws(() => keyedContentHash(undefined, {}), { message: 'cannot key a content hash with the uid "": every stored object has one' });
  t.throws(() => dependencyHashes('Secret', { metadata: { namespace: 'ns', name: 'creds' }, data: {} }), {
    message: 'Secret ns/creds: cannot key a content hash with the uid "": every stored object has one',
  });
});

test('dependencyHashes: a ConfigMap keeps its plain SHA-256; a Secret gets the keyed hash, and its plain one only for migration', (t) => {
  const data = { a: 'MQ==' };
  t.deepEqual(dependencyHashes('ConfigMap', { metadata: { uid: UID }, data }), {
    hash: contentHash({ data }),
    keyDigests: keyDigests('ConfigMap', undefined, { data }),
  });
  t.deepEqual(dependencyHashes('Secret', { metadata: { uid: UID }, data }), {
    hash: keyedContentHash(UID, { data }),
    unkeyedHash: contentHash({ data }),
    keyDigests: keyDigests('Secret', UID, { data }),
  });
});

test('isUnkeyedHash tells a plain SHA-256 (64 hex digits) from a keyed hash (32)', (t) => {
  t.true(isUnkeyedHash(contentHash({})));
  t.false(isUnkeyedHash(keyedContentHash(UID, {})));
  t.false(isUnkeyedHash(undefined));
  t.false(isUnkeyedHash('no-uid'));
});
