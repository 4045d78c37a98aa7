// The short real-node fault soak (`npm run soak -- --target cluster` runs the full size): each kind of node fault once,
// during edits, and every invariant read from the cluster.
import test from 'ava';
import { seedFromEnvironment } from '../reliability/support/random.js';
import { clusterSelected, type TestCluster } from '../support/cluster.js';
import { startNodeCluster } from './node-helpers.js';
import { NODE_FAULT_KINDS } from './node-faults.js';
import { nodeSoakSummary, recoveryLines, runNodeSoak } from './node-soak.js';

const TITLE =
  'the operator image with 2 replicas, under edits while the leader is killed, a pod deleted, kube-apiserver, etcd and containerd restarted and its traffic dropped: every pod runs the latest content, no double rollout, no write out of term, the budget held, no relist storm';

if (!clusterSelected()) {
  test.skip(`${TITLE} (KUBE_TARGET="${process.env.KUBE_TARGET}" does not select cluster)`, () => {});
} else {
  let cluster: TestCluster | undefined;
  test.after.always(async () => {
    await cluster?.stop();
  });

  test(TITLE, async (t) => {
    const seed = seedFromEnvironment();
    t.log(`seed ${seed} (repeat with SOAK_SEED=${seed})`);
    cluster = await startNodeCluster(t);
    const report = await runNodeSoak(cluster, {
      apps: 10,
      workloads: 5,
      configMaps: 3,
      secrets: 2,
      faults: NODE_FAULT_KINDS.length,
      opsPerSecond: 0.5,
      seed,
      quiescenceTimeoutMs: 240_000,
      // The operator pods' logs and the audit log, kept for a failing seed.
      ...(process.env.SOAK_ARTIFACTS ? { artifactsDir: process.env.SOAK_ARTIFACTS } : {}),
      log: (line) => t.log(line),
    });
    t.log(nodeSoakSummary([report]));
    for (const line of recoveryLines(report)) t.log(line);
    t.log(`operations: ${JSON.stringify(report.operations)}`);
    t.log(`invariants: ${JSON.stringify(report.invariants)}`);

    const { invariants } = report;
    t.deepEqual(Object.keys(report.faultsByKind).sort(), [...NODE_FAULT_KINDS].sort(), 'every kind of fault was injected');
    t.true(
      report.recoveries.every((recovery) => recovery.rolloutMs !== undefined),
      'the probe rolled after every fault',
    );
    t.deepEqual(invariants.stale, [], "every app's and workload's pods show its latest ConfigMap and Secret");
    t.deepEqual(invariants.doubleRollouts, [], 'no more template revisions than content changes');
    t.deepEqual(invariants.stuckFinalizers, [], 'no CustomApp stuck with its finalizer');
    t.deepEqual(invariants.orphans, [], 'no Deployment, Service or pod of a deleted CustomApp left');
    t.deepEqual(invariants.watchMismatches, [], "the leader's dependency watches are what the apps and workloads reference");
    t.deepEqual(invariants.fencing.violations, [], 'no write landed while another replica held the Lease');
    t.true(invariants.fencing.writes > 0, `the operator's writes were audited (${invariants.fencing.writes})`);
    t.true(invariants.budget.samples > 0 && invariants.budget.maxSeen <= invariants.budget.limit, JSON.stringify(invariants.budget));
    t.deepEqual(invariants.relistStorms, [], 'at most one LIST per watch after the API server restart');
  });
}
