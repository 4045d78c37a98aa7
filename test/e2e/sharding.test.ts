// Two operator processes with --sharding split the CustomApps between them, and one that stops hands its share over at once.
import test from 'ava';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { Lease } from '../../operator/kube/objects.js';
import { LEASES } from '../../operator/kube/resources.js';
import { shardLeaseName } from '../../operator/manager/sharding.js';
import { ownerOf, viewOf } from '../../operator/shard/ring.js';
import { RING_LABEL, STALE_LEASE_DURATIONS } from '../../operator/shard/shard.js';
import { selectedTargets } from '../support/targets.js';
import { clusterScenario, eventually, getIfExists, grantShardingPermissions, objects } from '../support/operator-harness.js';
import { FAST_ELECTION_FLAGS, NO_SERVER_FLAGS, OperatorProcess, UNGOVERNED_FLAGS } from '../support/operator-process.js';

const APPS = Array.from({ length: 8 }, (_, index) => `app-${index}`);

for (const target of selectedTargets()) {
  const scenario = clusterScenario(test, target);

  const start = (kubeconfig: string, identity: string): OperatorProcess =>
    new OperatorProcess([
      `--kubeconfig=${kubeconfig}`,
      '--sharding',
      `--shard-identity=${identity}`,
      ...NO_SERVER_FLAGS,
      ...FAST_ELECTION_FLAGS,
      ...UNGOVERNED_FLAGS,
    ]);
  const reconciled = (process: OperatorProcess, key: string): boolean => process.find('reconcile.start', { key }).length > 0;

  test.serial(
    `[${target}] two shards each reconcile exactly the CustomApps the ring gives them; a stopped shard's share goes to the other at once`,
    async (t) => {
      const { admin, cluster } = scenario;
      await grantShardingPermissions(admin);
      const { path: kubeconfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
      const a = start(kubeconfig, 'a');
      t.teardown(() => a.dispose());
      const b = start(kubeconfig, 'b');
      t.teardown(() => b.dispose());
      const view = viewOf([shardLeaseName('a'), shardLeaseName('b')]);
      const drainedBoth = (process: OperatorProcess): boolean =>
        process.find('shard.ownership').some((line) => Array.isArray(line.members) && line.members.length === 2);
      await a.waitFor('a acknowledged the view of both', () => drainedBoth(a));
      await b.waitFor('b acknowledged the view of both', () => drainedBoth(b));

      const ns = 'sharded';
      const reads = await scenario.createNamespace(ns, ...APPS.map((name) => objects.customApp(ns, name, { image: 'example/a:1' })));
      for (const name of APPS) await reads.deploymentCreated(name);
      const shareOf = (member: string): string[] => APPS.map((name) => `${ns}/${name}`).filter((key) => ownerOf(key, view) === member);
      const [ofA, ofB] = [shareOf(shardLeaseName('a')), shareOf(shardLeaseName('b'))];
      t.true(ofA.length > 0 && ofB.length > 0, `both own some: a ${ofA.length}, b ${ofB.length}`);
      for (const key of ofA) {
        await a.waitFor(`a reconciled ${key}`, () => reconciled(a, key));
        t.false(reconciled(b, key), `b never reconciled ${key}, which a owns`);
      }
      for (const key of ofB) {
        await b.waitFor(`b reconciled ${key}`, () => reconciled(b, key));
        t.false(reconciled(a, key), `a never reconciled ${key}, which b owns`);
      }

      // SIGTERM: b drains and releases its Lease; a takes b's CustomApps without waiting for the Lease to expire.
      const stoppedAt = Date.now();
      b.kill('SIGTERM');
      t.is((await b.exited).code, 0);
      await a.waitFor('a sees b leave', () => a.find('shard.member.left').length > 0, 10_000);
      for (const key of ofB) {
        await admin.patch(CUSTOM_APPS, ns, key.split('/')[1]!, 'merge', { spec: { image: 'example/a:2' } });
      }
      for (const key of ofB) {
        const name = key.split('/')[1]!;
        await eventually(`a rolls ${key} to the new image`, async () => {
          const deployment = await reads.deployment(name);
          return deployment?.spec?.template?.spec?.containers?.[0]?.image === 'example/a:2' ? deployment : undefined;
        });
        // Only a runs now, so a wrote it; its trace line can reach this process after the write does (the operator's
        // stdout is written asynchronously, and read here through a pipe).
        await a.waitFor(`a reconciled ${key} after b stopped`, () => reconciled(a, key), 10_000);
      }
      const handOverMs = Date.now() - stoppedAt;
      t.log(`b's ${ofB.length} CustomApps were reconciled by a ${handOverMs} ms after b's SIGTERM`);
      t.deepEqual(a.find('shard.ownership').at(-1)?.members, [shardLeaseName('a')], 'a owns everything now');
    },
  );

  test.serial(`[${target}] the Lease of a shard that crashed and never came back is deleted after 10 Lease durations`, async (t) => {
    const { admin, cluster } = scenario;
    await grantShardingPermissions(admin);
    // A replica that crashed long ago: its Lease in the ring, renewed never again.
    const gone = shardLeaseName('gone');
    await admin.create<Lease>(LEASES, OPERATOR_NAMESPACE, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: gone, namespace: OPERATOR_NAMESPACE, labels: { [RING_LABEL]: OPERATOR_NAME } },
      spec: { holderIdentity: 'gone_0', leaseDurationSeconds: 2, renewTime: '2026-01-01T00:00:00.000000Z' },
    });
    const { path: kubeconfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
    const c = start(kubeconfig, 'c');
    t.teardown(() => c.dispose());
    const startedAt = Date.now();
    await eventually(
      'the stale Lease is deleted',
      async () => !(await getIfExists<Lease>(admin, LEASES, OPERATOR_NAMESPACE, gone)),
      60_000,
      250,
    );
    const tookMs = Date.now() - startedAt;
    t.true(tookMs >= STALE_LEASE_DURATIONS * 2_000, `not before 10 Lease durations (${tookMs} ms)`);
    await c.waitFor('c logged what it deleted', () => c.find('shard.lease-collected', { lease: gone }).length === 1);
    t.truthy(await getIfExists<Lease>(admin, LEASES, OPERATOR_NAMESPACE, shardLeaseName('c')), "c's own Lease stays");
  });
}
