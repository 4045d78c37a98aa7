// The short fault soak (`npm run soak` runs the full size): no lost update, stuck finalizer or leaked watch under faults.
import test from 'ava';
import { startCluster } from '../support/targets.js';
import { installOperatorResources } from '../support/operator-harness.js';
import { runFaultSoak } from './fault-soak.js';
import { SeededRandom, seedFromEnvironment } from './support/random.js';

test('under dropped watches, forced 410s, 500s, 429s, conflicts and a SIGKILL, every CustomApp converges and nothing leaks', async (t) => {
  const seed = seedFromEnvironment();
  t.log(`seed ${seed} (repeat with SOAK_SEED=${seed})`);
  const cluster = await startCluster('emulator', { emulator: { random: new SeededRandom(seed).next } });
  t.teardown(() => cluster.stop());
  await installOperatorResources(cluster);
  const report = await runFaultSoak(cluster, {
    apps: 60,
    streamMs: 25_000,
    opsPerSecond: 15,
    kills: 1,
    seed,
    quiescenceTimeoutMs: 60_000,
    log: (line) => t.log(line),
  });
  t.log(`faults: ${JSON.stringify(report.faults)}`);
  t.log(`recoveries: ${JSON.stringify(report.recoveries)}`);

  t.deepEqual(report.invariants.lostUpdates, [], 'every live CustomApp runs its latest spec, ConfigMap and Secret');
  t.deepEqual(report.invariants.stuckFinalizers, [], 'no CustomApp is stuck with its finalizer');
  t.deepEqual(report.invariants.orphans, [], 'every deleted CustomApp has lost its Deployment and Service');
  t.deepEqual(report.invariants.watchMismatches, [], 'the dependency watches are exactly the referenced objects, on the server too');
  t.is(report.invariants.openWatches.server, report.invariants.openWatches.operator);
  t.is(report.recoveries.crashes, 0, 'the operator never crashed');
  t.deepEqual(report.driverErrors, [], 'the soak itself ran as planned');

  const { faults } = report;
  t.true(
    faults.kills >= 1 && faults.failed500 > 0 && faults.failed429 > 0 && faults.forced410 > 0 && faults.compactions > 0,
    'every kind of fault was injected',
  );
  t.true(faults.watchesEnded + faults.watchesReset > 0 && faults.competingWrites > 0 && faults.conflicts409 > 0);
  t.true(report.invariants.deletedApps > 0 && report.invariants.liveApps > 0, 'CustomApps were both deleted and kept');
});
