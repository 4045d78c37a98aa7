// Churn, short (10 × 100; `npm run soak` runs 10 × 1,000): the heap returns to its baseline and nothing is left open.
import test from 'ava';
import { clusterForTest } from '../support/operator-harness.js';
import { HEAP_TOLERANCE, RESOURCE_SLACK, resourcesGrown, runChurn } from './churn.js';

test('after 10 rounds of creating and deleting 100 CustomApps, the heap is within 10% of its baseline and nothing is left open', async (t) => {
  const { cluster } = await clusterForTest(t, 'emulator');
  const report = await runChurn(cluster, { rounds: 10, count: 100, log: (line) => t.log(line) });

  const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;
  t.log(
    `heap after forced GC: cold ${mib(report.cold.memory.heapUsed)}, baseline (after round 1) ${mib(report.baseline.memory.heapUsed)}, after round 10 ${mib(report.after.memory.heapUsed)} (${(report.heapGrowth * 100).toFixed(1)}%)`,
  );
  t.true(report.after.gcForced, 'the heap was measured after forced full GCs (--expose-gc)');
  t.true(report.heapGrowth <= HEAP_TOLERANCE, `heap grew ${(report.heapGrowth * 100).toFixed(1)}% over the baseline`);

  t.true(report.peak.dependencyWatches >= 200, `the rounds exercised the dependency watches (peak ${report.peak.dependencyWatches})`);
  t.deepEqual(
    report.end,
    { dependencyWatches: 0, streams: 0, subscribers: 0, serverDependencyWatches: 0, serverInformerWatches: 3 },
    'no dependency watch, stream or subscription is left; only the three informers watch',
  );
  // Transient timers and sockets are left out by sampling; one that lives for seconds is within the slack.
  t.deepEqual(
    resourcesGrown(report.resources.baseline, report.resources.after),
    [],
    `no more timers, sockets or handles than at the baseline, give or take ${RESOURCE_SLACK} of a type`,
  );
  t.log(`live handles: baseline ${JSON.stringify(report.resources.baseline)}, after ${JSON.stringify(report.resources.after)}`);
});
