// The short real-node fault soak (`npm run soak -- --target cluster` runs the full size): each kind of node fault once,
// during edits, then every invariant read from the cluster itself.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedFromEnvironment } from '../reliability/support/random.js';
import { NODE_FAULT_KINDS } from './node-faults.js';
import { nodeSuite } from './node-helpers.js';
import { nodeSoakSummary, recoveryLines, runNodeSoak } from './node-soak.js';

const { onNode, node } = nodeSuite(test);

onNode(
  'the operator image with 2 replicas, under edits while the leader is killed, a pod deleted, kube-apiserver, etcd and containerd restarted and its traffic dropped: every pod runs the latest content, no double rollout, no write out of term, the budget held, no relist storm',
  async (t) => {
    t.timeout(20 * 60_000);
    const seed = seedFromEnvironment();
    t.log(`seed ${seed} (repeat with SOAK_SEED=${seed})`);
    // The operator pods' logs and the audit log, always saved and kept when the run fails: a failing seed may not fail
    // again on replay (timings differ), so the first failure has to carry its own evidence.
    const artifactsDir = process.env.SOAK_ARTIFACTS ?? mkdtempSync(join(tmpdir(), 'node-soak-'));
    t.log(`the pods' logs and the audit log: ${artifactsDir} (kept if the run fails)`);
    t.teardown(() => {
      if (t.passed && !process.env.SOAK_ARTIFACTS) rmSync(artifactsDir, { recursive: true, force: true });
      else console.error(`node soak: the pods' logs and the audit log are in ${artifactsDir}`);
    });
    const report = await runNodeSoak(node.cluster, {
      apps: 8,
      workloads: 4,
      configMaps: 3,
      secrets: 2,
      faults: NODE_FAULT_KINDS.length,
      opsPerSecond: 0.5,
      seed,
      quiescenceTimeoutMs: 240_000,
      artifactsDir,
      log: (line) => t.log(line),
    });
    t.log(nodeSoakSummary([report]));
    for (const line of recoveryLines(report)) t.log(line);
    t.log(`operations: ${JSON.stringify(report.operations)}`);

    const { invariants } = report;
    t.deepEqual(Object.keys(report.faultsByKind).sort(), [...NODE_FAULT_KINDS].sort(), 'every kind of fault was injected');
    t.deepEqual(
      report.recoveries.filter((recovery) => recovery.rolloutMs === undefined).map((recovery) => recovery.kind),
      [],
      'the probe rolled after every fault',
    );
    t.deepEqual(invariants.stale, [], "every app's and workload's pods rolled to its latest ConfigMap and Secret, and show them");
    // Not the operator's: the kubelet's environment after a kube-apiserver restart (ContentFindings).
    for (const pod of invariants.startedWithOlderContent) t.log(`started by the kubelet with older content: ${pod}`);
    t.deepEqual(invariants.doubleRollouts, [], 'no more template revisions than content changes');
    t.deepEqual(invariants.stuckFinalizers, [], 'no CustomApp stuck with its finalizer');
    t.deepEqual(invariants.orphans, [], 'no Deployment, Service or pod of a deleted CustomApp left');
    t.deepEqual(invariants.watchMismatches, [], "the leader's dependency watches are what the apps and workloads reference");
    t.deepEqual(invariants.fencing.violations, [], 'no write landed while another replica held the Lease');
    t.true(invariants.fencing.writes > 0, `the operator's writes were audited (${invariants.fencing.writes})`);
    t.true(invariants.budget.samples > 0, `the budget was sampled (${invariants.budget.samples})`);
    t.true(
      invariants.budget.maxSeen <= invariants.budget.limit,
      `content rollouts in progress at most the limit: ${JSON.stringify(invariants.budget)}`,
    );
    t.deepEqual(invariants.relistStorms, [], 'at most one LIST per watch after the API server restart');
  },
);
