// Tests of the percentile and request-count arithmetic of the benchmark.
import test from 'ava';
import { addCounts, byVerb, diffCounts, percentile, summarize, totalRequests } from './stats.js';

test('the nearest-rank percentile of 100 ordered samples is the sample at that rank', (t) => {
  const samples = Array.from({ length: 100 }, (_, index) => index + 1);
  t.is(percentile(samples, 50), 50);
  t.is(percentile(samples, 95), 95);
  t.is(percentile(samples, 99), 99);
  t.is(percentile(samples, 100), 100);
});

test('the p99 of ten samples is the largest, and the p50 the fifth', (t) => {
  const samples = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  t.is(percentile(samples, 99), 10);
  t.is(percentile(samples, 50), 5);
});

test('a percentile of no samples or outside (0, 100] is refused', (t) => {
  t.throws(() => percentile([], 50), { message: /no samples/ });
  t.throws(() => percentile([1], 0), { message: /percentile 0/ });
  t.throws(() => percentile([1], 101), { message: /percentile 101/ });
});

test('summarize sorts the samples itself and reports count, percentiles, max and mean', (t) => {
  t.deepEqual(summarize([30, 10, 20, 40]), { count: 4, p50: 20, p95: 40, p99: 40, max: 40, mean: 25 });
  t.is(summarize([]), undefined);
});

test('diffCounts subtracts per verb and resource and leaves out what did not move', (t) => {
  const before = { list: { configmaps: 2, 'customapps.app.example.com': 1 }, watch: { configmaps: 1 } };
  const after = { list: { configmaps: 5, 'customapps.app.example.com': 1 }, watch: { configmaps: 1 }, patch: { 'deployments.apps': 3 } };
  t.deepEqual(diffCounts(after, before), { list: { configmaps: 3 }, patch: { 'deployments.apps': 3 } });
});

test('addCounts, byVerb and totalRequests add across resources', (t) => {
  const sum = addCounts({ get: { configmaps: 1 } }, { get: { configmaps: 2, secrets: 1 }, list: { configmaps: 4 } });
  t.deepEqual(sum, { get: { configmaps: 3, secrets: 1 }, list: { configmaps: 4 } });
  t.deepEqual(byVerb(sum), { get: 4, list: 4 });
  t.is(totalRequests(sum), 8);
});
