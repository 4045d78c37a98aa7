// Sharding on a real node: a chart with the `sharding` prop runs 3 operator pods that split 30 CustomApps; deleting one
// pod during a rollout of all 30 (their shared ConfigMap edited) leaves every app rolled once, to the new value.
import test from 'ava';
import { shardLeaseName } from '../../operator/manager/sharding.js';
import { ownerOf, viewOf } from '../../operator/shard/ring.js';
import { installChart } from '../support/chart-install.js';
import { nodeSuite, podReady, rolloutComplete, waitFor } from './node-helpers.js';

const SYSTEM = 'customapp-system';
const OPERATOR = 'customapp-operator';
const OPERATOR_SELECTOR = `app.kubernetes.io/name=${OPERATOR}`;
const RING_SELECTOR = 'app.example.com/ring=customapp-operator';
const NS = 'node-shards';
const APPS = 30;
const SHARED = 'shared-config';

const { onNode, node } = nodeSuite(test);

const appName = (index: number): string => `app-${String(index).padStart(2, '0')}`;
const names = Array.from({ length: APPS }, (_, index) => appName(index));
const operatorPods = async (): Promise<any[]> =>
  (await node.podsOf(SYSTEM, OPERATOR_SELECTOR)).filter((pod) => !pod.metadata.deletionTimestamp);
const ringLeases = async (): Promise<any[]> =>
  (await node.get(`/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases?labelSelector=${encodeURIComponent(RING_SELECTOR)}`)).items;
const deploymentOf = (name: string): Promise<any> => node.get(`/apis/apps/v1/namespaces/${NS}/deployments/${name}`);
const describe = async (): Promise<string> =>
  [
    await node.kubectlOk(['-n', SYSTEM, 'get', 'pods,leases', '-o', 'wide']).catch(String),
    await node.kubectlOk(['-n', NS, 'get', 'customapps,deploy', '-o', 'wide']).catch(String),
  ].join('\n');
/** The apps whose rollout is not complete with every pod Ready. */
const notRolledOut = async (): Promise<string[]> => {
  const left: string[] = [];
  for (const name of names) {
    const deployment = await deploymentOf(name).catch(() => undefined);
    if (!deployment || !rolloutComplete(deployment)) left.push(name);
  }
  return left;
};
/** The operator pods' own log lines (JSON), parsed. */
/** An operator pod's log, its previous container's first: one restarted on a loaded machine keeps its earlier lines there. */
const operatorLog = (pod: string): Promise<Record<string, unknown>[]> => node.podLogLines(SYSTEM, pod, { withPrevious: true });

onNode('a chart with the sharding prop: 3 operator pods become Ready, each holding its own Lease in the ring', async (t) => {
  await installChart(node.cluster, { sharding: true });
  await node.kubectlOk(['-n', SYSTEM, 'rollout', 'status', `deployment/${OPERATOR}`, '--timeout=300s'], { timeoutMs: 320_000 });
  const pods = await waitFor(
    '3 operator pods Ready',
    120_000,
    async () => {
      const current = await operatorPods();
      return current.length === 3 && current.every(podReady) ? current : undefined;
    },
    { describe },
  );
  t.is(pods.length, 3);
  const leases = await waitFor(
    '3 live Leases in the ring',
    60_000,
    async () => {
      const current = await ringLeases();
      return current.length === 3 ? current : undefined;
    },
    { describe },
  );
  t.log(`ring: ${leases.map((lease) => `${lease.metadata.name} (${lease.spec.holderIdentity})`).join(', ')}`);
  const pdb = await node.get(`/apis/policy/v1/namespaces/${SYSTEM}/poddisruptionbudgets`);
  t.is(pdb.items.length, 1, 'the chart adds a PodDisruptionBudget');
});

/**
 * Which pod reconciled which app, and last, from each pod's own log (its reconcile.start lines); and the view changes
 * since `created` (a member's Lease lapsing on a loaded machine moves its keys, by design).
 */
async function reconcilesByPod(created: number): Promise<{
  owners: Map<string, Set<string>>;
  last: Map<string, { pod: string; time: number }>;
  changes: string[];
  pods: any[];
}> {
  const owners = new Map<string, Set<string>>();
  const last = new Map<string, { pod: string; time: number }>();
  const changes: string[] = [];
  const pods = await operatorPods();
  for (const pod of pods) {
    const podName = pod.metadata.name as string;
    for (const line of await operatorLog(podName)) {
      const time = typeof line.time === 'string' ? Date.parse(line.time) : 0;
      if ((line.msg === 'shard.member.joined' || line.msg === 'shard.member.left') && time >= created) {
        changes.push(`${podName}: ${line.msg} ${String(line.joined ?? line.left)} at ${new Date(time).toISOString()}`);
      }
      if (line.msg !== 'reconcile.start' || typeof line.key !== 'string' || !line.key.startsWith(`${NS}/`)) continue;
      owners.set(line.key, (owners.get(line.key) ?? new Set<string>()).add(podName));
      if (time >= (last.get(line.key)?.time ?? 0)) last.set(line.key, { pod: podName, time });
    }
  }
  return { owners, last, changes, pods };
}

/** The apps of a {@link reconcilesByPod} reading last reconciled by a pod other than their owner in the ring of its pods. */
function notLastByOwner({ last, pods }: Awaited<ReturnType<typeof reconcilesByPod>>): string[] {
  const view = viewOf(pods.map((pod) => shardLeaseName(pod.metadata.name)));
  return [...last].filter(([key, { pod }]) => ownerOf(key, view) !== shardLeaseName(pod)).map(([key]) => key);
}

onNode(`${APPS} CustomApps of the demo image on one shared ConfigMap become Ready, split across the 3 operator pods`, async (t) => {
  const image = node.images.demo;
  const created = Date.now();
  await node.kubectlOk(['create', 'namespace', NS]);
  await node.applyObjects([
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: SHARED, namespace: NS }, data: { A: 'one' } },
    ...names.map((name) => ({
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      metadata: { name, namespace: NS },
      spec: { image, configMapName: SHARED, replicas: 1 },
    })),
  ]);
  await waitFor(`${APPS} apps rolled out`, 600_000, async () => ((await notRolledOut()).length === 0 ? true : undefined), {
    intervalMs: 1_000,
    describe,
  });
  let reading = await reconcilesByPod(created);
  const { owners, changes, pods } = reading;
  const perPod = new Map<string, number>();
  for (const pods of owners.values()) for (const pod of pods) perPod.set(pod, (perPod.get(pod) ?? 0) + 1);
  t.log(`apps reconciled per operator pod: ${JSON.stringify(Object.fromEntries(perPod))}`);
  const shared = [...owners].filter(([, pods]) => pods.size !== 1).map(([key]) => key);
  if (changes.length === 0) t.deepEqual(shared, [], 'each app was reconciled by one operator pod');
  // With the view changed, apps move between pods; that no two wrote for one app at once is the sharded soak's audit check.
  else t.log(`the view changed after the apps were created (${changes.join('; ')}): apps reconciled by two pods: ${shared.join(', ')}`);
  // A pod replaced after the apps were created took its log along; then only the pods' logs that are left can be read.
  const replaced = pods.filter((pod) => Date.parse(pod.metadata.creationTimestamp) > created).map((pod) => pod.metadata.name);
  if (replaced.length === 0) t.is(owners.size, APPS, "every app was reconciled, by the pods' logs");
  else t.log(`pods created after the apps (a replica replaced): ${replaced.join(', ')}; apps in the logs left: ${owners.size}`);
  t.true(perPod.size >= 2, 'the apps are split across the operator pods');
  // After a view change, a pod given keys back reconciles them once it acknowledges the final view, which may come
  // after the rollout waited for above.
  if (changes.length > 0) {
    reading = await waitFor(
      'each app reconciled last by its owner',
      60_000,
      async () => {
        const now = await reconcilesByPod(created);
        return notLastByOwner(now).length === 0 ? now : undefined;
      },
      { intervalMs: 2_000 },
    ).catch(() => reconcilesByPod(created));
  }
  t.deepEqual(
    notLastByOwner(reading),
    [],
    'each app was reconciled last by the pod that owns it in the ring (rendezvous hashing over the three Leases)',
  );
});

onNode(
  `deleting an operator pod during a rollout of the ${APPS} apps (their shared ConfigMap edited): every app rolls exactly once and shows the new value`,
  async (t) => {
    const before = new Map<string, { generation: number; replicaSets: number }>();
    for (const name of names) {
      before.set(name, {
        generation: (await deploymentOf(name)).metadata.generation,
        replicaSets: (await node.replicaSetsOf(NS, name)).length,
      });
    }
    const start = Date.now();
    await node.kubectlOk(['-n', NS, 'patch', 'configmap', SHARED, '--type=merge', '-p', '{"data":{"A":"two"}}']);
    // The rollout is under way (governed: at most the budget in progress at once): one pod goes, gracefully, as a
    // drain or a node maintenance would take it.
    await waitFor('the rollout has begun', 60_000, async () => {
      for (const name of names) if ((await deploymentOf(name)).metadata.generation > before.get(name)!.generation) return true;
      return undefined;
    });
    const [victim] = await operatorPods();
    await node.kubectlOk(['-n', SYSTEM, 'delete', 'pod', victim.metadata.name, '--wait=false']);
    t.log(`deleted operator pod ${victim.metadata.name} ${Date.now() - start} ms after the edit`);

    await waitFor(
      `${APPS} apps rolled out again`,
      900_000,
      async () => {
        for (const name of names) {
          const deployment = await deploymentOf(name);
          if (deployment.metadata.generation === before.get(name)!.generation || !rolloutComplete(deployment)) return undefined;
        }
        return true;
      },
      { intervalMs: 1_000, describe },
    );
    t.log(`all ${APPS} apps rolled out ${Date.now() - start} ms after the edit`);

    const rolls: string[] = [];
    for (const name of names) {
      const generations = (await deploymentOf(name)).metadata.generation - before.get(name)!.generation;
      const replicaSets = (await node.replicaSetsOf(NS, name)).length - before.get(name)!.replicaSets;
      if (generations !== 1 || replicaSets !== 1) rolls.push(`${name}: ${generations} template changes, ${replicaSets} new ReplicaSets`);
    }
    t.deepEqual(rolls, [], 'every app rolled exactly once');
    const sample = [names[0]!, names[APPS - 1]!];
    for (const name of sample) {
      const [pod] = (await node.podsOf(NS, `app.kubernetes.io/instance=${name}`)).filter(
        (each) => !each.metadata.deletionTimestamp && podReady(each),
      );
      t.is(await node.envInPod(NS, pod.metadata.name, 'A'), 'two', `${name}'s pod runs the new value`);
    }
    await waitFor('3 operator pods Ready again', 120_000, async () => {
      const pods = await operatorPods();
      return pods.length === 3 && pods.every(podReady) ? true : undefined;
    });
  },
);
