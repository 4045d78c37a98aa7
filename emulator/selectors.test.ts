// Label and field selectors: the apiserver's grammar, its error texts, and matching.
import test from 'ava';
import { ApiError } from './errors.js';
import { checkFieldSelector, fieldsMatch, labelsMatch, metadataFieldGetters, parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { KubeObject } from './object.js';

test('label selectors parse equality, set-based and existence requirements and match labels', (t) => {
  const selector = parseLabelSelector('app=web, tier in (front,back),env!=prod,!legacy,owner');
  t.true(labelsMatch(selector, { app: 'web', tier: 'front', owner: 'me' }));
  t.false(labelsMatch(selector, { app: 'web', tier: 'front', owner: 'me', legacy: 'y' }));
  t.false(labelsMatch(selector, { app: 'web', tier: 'db', owner: 'me' }));
  t.false(labelsMatch(selector, { app: 'web', tier: 'front', owner: 'me', env: 'prod' }));
  t.true(labelsMatch(parseLabelSelector('tier notin (db)'), {}));
  t.true(labelsMatch(parseLabelSelector('n>2,n<5'), { n: '3' }));
  t.deepEqual(parseLabelSelector(''), []);
});

test('malformed label selectors answer 400 with the apiserver wording', (t) => {
  const e = t.throws(() => parseLabelSelector('a in (b'), { instanceOf: ApiError });
  t.is(e.message, "unable to parse requirement: found '', expected: ',' or ')'");
  t.is(e.code, 400);
  t.regex(
    t.throws(() => parseLabelSelector('A_%=b'))!.message,
    /^unable to parse requirement: <nil>: Invalid value: "A_%": name part must consist of/,
  );
});

test("field selectors parse =, == and != with escapes, and reject unknown fields in the kind's wording", (t) => {
  const selector = parseFieldSelector('metadata.name==a\\,b,metadata.namespace!=x');
  t.deepEqual(selector, [
    { field: 'metadata.name', op: '=', value: 'a,b' },
    { field: 'metadata.namespace', op: '!=', value: 'x' },
  ]);
  const obj = { metadata: { name: 'a,b', namespace: 'y' } } as KubeObject;
  t.true(fieldsMatch(selector, metadataFieldGetters, obj));
  t.is(
    t.throws(() => checkFieldSelector(parseFieldSelector('spec.x=1'), metadataFieldGetters, 'label'))!.message,
    'field label not supported: spec.x',
  );
  t.is(
    t.throws(() => checkFieldSelector(parseFieldSelector('spec.x=1'), metadataFieldGetters, 'known'))!.message,
    '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
  );
  t.is(
    t.throws(() => parseFieldSelector('metadata.name in (a)'))!.message,
    "invalid selector: 'metadata.name in (a)'; can't understand 'metadata.name in (a)'",
  );
});
