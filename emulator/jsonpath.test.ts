// The JSONPath subset of printer columns.
import test from 'ava';
import { evaluateJsonPath, parseJsonPath } from './jsonpath.js';

const app = {
  spec: { image: 'i' },
  status: {
    conditions: [
      { type: 'Synced', status: 'False' },
      { type: 'Ready', status: 'True' },
    ],
  },
};

test('fields, indexes, wildcards, filters and recursive descent select values in document order', (t) => {
  t.deepEqual(evaluateJsonPath(parseJsonPath('.spec.image'), app), ['i']);
  t.deepEqual(evaluateJsonPath(parseJsonPath('.status.conditions[?(@.type=="Ready")].status'), app), ['True']);
  t.deepEqual(evaluateJsonPath(parseJsonPath('{.status.conditions[*].type}'), app), ['Synced', 'Ready']);
  t.deepEqual(evaluateJsonPath(parseJsonPath('.status.conditions[-1].type'), app), ['Ready']);
  t.deepEqual(evaluateJsonPath(parseJsonPath('..status'), app), [app.status, 'False', 'True']);
  t.deepEqual(evaluateJsonPath(parseJsonPath('.spec.missing'), app), []);
});

test('an unsupported expression is an error, not an empty result', (t) => {
  t.throws(() => parseJsonPath('.a[?(@.x ~ 1)]'));
  t.throws(() => parseJsonPath('.a[1:2'));
});
