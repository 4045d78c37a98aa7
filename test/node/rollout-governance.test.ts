// Rollout governance on real pods: 30 CustomApps sharing one ConfigMap at budget 3, a scale after a content rollout
// (no rollout), the budget's cost beside budget 0, a rollout that fails on a readiness probe, and 20 edits in 10 s
// against the flap breaker.
import test, { type ExecutionContext } from 'ava';
import { resolve } from 'node:path';
import { CONFIG_HASH_ANNOTATION } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import type { RolloutSettings } from '../../operator/governance/governance.js';
import { rolloutCause } from '../../operator/governance/rollout-cause.js';
import { rolloutProgress } from '../../operator/governance/rollout-progress.js';
import type { Deployment } from '../../operator/kube/objects.js';
import { DEPLOYMENTS } from '../../operator/kube/resources.js';
import { adminClient, startTestOperator, type TestOperator } from '../support/operator-harness.js';
import { nodeSuite, podReady, rolloutComplete, waitFor } from './node-helpers.js';

const DIST = resolve(import.meta.dirname, '../../dist');
const NS = 'governance';
const APPS = Array.from({ length: 30 }, (_, index) => `app-${String(index).padStart(2, '0')}`);
const hash = (value: string): string => contentHash({ data: { A: value } });

let demoImage = '';
/** The operator under test: in-process, against the node's API server, as dist/'s ServiceAccount. */
let running: TestOperator | undefined;

const { onNode, node } = nodeSuite(test, {
  started: async () => {
    demoImage = node.images.demo;
    // dist/ (the CRD, RBAC, and the operator's Deployment) with the in-cluster operator scaled to zero: the operator
    // under test runs in this process, so that each test can give it its own settings and read its metrics.
    await node.kubectlOk(['apply', '-f', DIST]);
    await node.kubectlOk(['-n', 'customapp-system', 'scale', 'deployment/customapp-operator', '--replicas=0']);
    await waitFor('no in-cluster operator pod', 120_000, async () =>
      (await node.podsOf('customapp-system', 'app.kubernetes.io/name=customapp-operator')).length === 0 ? true : undefined,
    );
    await node.kubectlOk(['create', 'namespace', NS]);
  },
  stopping: async () => {
    await running?.operator.stop();
  },
});

/** (Re)starts the operator with `rollouts`. */
const operatorWith = async (rollouts: RolloutSettings): Promise<TestOperator> => {
  await running?.operator.stop();
  running = await startTestOperator(node.cluster, { rollouts });
  return running;
};
const deployments = async (): Promise<any[]> => (await node.get(`/apis/apps/v1/namespaces/${NS}/deployments`)).items;
const apps = async (): Promise<CustomApp[]> => (await node.get(`/apis/app.example.com/v1/namespaces/${NS}/customapps`)).items;
const ready = (app: CustomApp): boolean => app.status?.conditions?.some((each) => each.type === 'Ready' && each.status === 'True') ?? false;
const describe = async (): Promise<string> => node.kubectlOk(['-n', NS, 'get', 'customapp,deploy', '-o', 'wide']).catch(String);
const editShared = (value: string): Promise<string> =>
  node.kubectlOk(['-n', NS, 'patch', 'configmap', 'shared', '--type=merge', '-p', JSON.stringify({ data: { A: value } })]);

/**
 * Waits until the 30 Deployments run `value` and completed their rollout and the 30 CustomApps are Ready, sampling
 * every 200 ms how many Deployments are in progress. Answers the elapsed ms and the largest sample.
 */
const converge = async (
  value: string,
  started: number,
  timeoutMs = 300_000,
): Promise<{ ms: number; maxInProgress: number; samples: number }> => {
  let maxInProgress = 0;
  let samples = 0;
  const ms = await waitFor(
    `all 30 apps on A=${value}`,
    timeoutMs,
    async () => {
      const items = (await deployments()).filter((deployment) => APPS.includes(deployment.metadata.name));
      const inProgress = items.filter((deployment) => !rolloutComplete(deployment)).length;
      maxInProgress = Math.max(maxInProgress, inProgress);
      samples += 1;
      const on = items.filter((deployment) => deployment.spec.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] === hash(value));
      if (on.length < 30 || inProgress > 0) return undefined;
      return (await apps()).filter((app) => APPS.includes(app.metadata.name!) && ready(app)).length === 30
        ? Date.now() - started
        : undefined;
    },
    { intervalMs: 200, describe },
  );
  return { ms, maxInProgress, samples };
};
/** ReplicaSets per app: one per pod template the Deployment has had. */
const replicaSetCounts = async (): Promise<Map<string, number>> =>
  new Map(await Promise.all(APPS.map(async (name) => [name, (await node.replicaSetsOf(NS, name)).length] as const)));

const createSharedApps = async (t: ExecutionContext): Promise<void> => {
  await node.applyObjects([
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared', namespace: NS }, data: { A: '1' } },
    ...APPS.map((name) => ({
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      metadata: { name, namespace: NS },
      spec: { image: demoImage, configMapName: 'shared', replicas: 1 },
    })),
  ]);
  const created = await converge('1', Date.now());
  t.log(`30 CustomApps created and Ready in ${created.ms} ms`);
};

onNode(
  '30 CustomApps share one ConfigMap, budget 3: after one edit never more than 3 Deployments in progress (sampled), all 30 converge to the new hash, each rolled once',
  async (t) => {
    await operatorWith({ maxConcurrentRollouts: 3 });
    await createSharedApps(t);
    const before = await replicaSetCounts();

    const started = Date.now();
    await editShared('2');
    const { ms, maxInProgress, samples } = await converge('2', started);
    t.log(`budget 3: one edit reached 30 apps in ${ms} ms; at most ${maxInProgress} Deployments in progress over ${samples} samples`);
    t.true(maxInProgress <= 3, `never more than 3 in progress (saw ${maxInProgress})`);
    t.true(maxInProgress >= 2, 'the budget was used');
    const after = await replicaSetCounts();
    for (const name of APPS) t.is(after.get(name)! - before.get(name)!, 1, `${name} rolled once (one new ReplicaSet)`);
    for (const app of await apps())
      t.like(app.status?.lastRollout, { trigger: 'ConfigMap', name: 'shared', toHash: hash('2'), result: 'Succeeded' });
    const queued = running!.logs.find('rollout.waiting', { reason: 'Queued' });
    t.true(queued.length >= 27, `the trace says why apps waited (${queued.length} rollout.waiting lines)`);
    t.is(await running!.operator.metrics.total('customapp_rollouts_total', { trigger: 'ConfigMap', result: 'Succeeded' }), 30);
  },
);

onNode(
  "a scale after a content rollout ended: kube-controller-manager keeps Progressing NewReplicaSetAvailable through it, so the rollout stays ended while kubectl's rules read a rollout",
  async (t) => {
    const name = APPS[0]!;
    const deployment = async (): Promise<Deployment> => node.get(`/apis/apps/v1/namespaces/${NS}/deployments/${name}`);
    const before = await deployment();
    const cause = rolloutCause(before);
    t.is(cause?.trigger, 'ConfigMap', 'the last rollout was a content rollout');
    t.is(cause?.templateGeneration, before.metadata.generation, 'the cause names the generation its write made');
    // Every state the Deployment passes through, from a watch opened before the scale: polling on a loaded machine
    // can miss the whole scale between two samples, and the point is what each intermediate state reads as.
    const admin = await adminClient(node.cluster);
    const controller = new AbortController();
    const events = admin.watch<Deployment>(
      DEPLOYMENTS,
      { namespace: NS, fieldSelector: `metadata.name=${name}`, resourceVersion: before.metadata.resourceVersion },
      controller.signal,
    );
    const samples: { ours: string; kubectl: string; slots: number }[] = [];
    let scaled = false;
    const timer = setTimeout(() => controller.abort(), 120_000);
    await node.kubectlOk(['-n', NS, 'scale', `customapp/${name}`, '--replicas=2']);
    try {
      for await (const event of events) {
        if (event.type !== 'ADDED' && event.type !== 'MODIFIED') continue;
        const live = event.object;
        samples.push({
          ours: rolloutProgress(live, cause?.templateGeneration).phase,
          kubectl: rolloutProgress(live).phase,
          slots: await running!.operator.metrics.total('customapp_rollouts_in_progress'),
        });
        scaled = live.spec.replicas === 2 && rolloutComplete(live);
        if (scaled) break;
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
      controller.abort();
      admin.close();
    }
    t.true(scaled, `${name} scaled to 2 within 120 s: ${await describe()}`);
    const read = samples.filter((sample) => sample.kubectl === 'InProgress').length;
    t.log(`${samples.length} states during the scale, ${read} read as a rollout by kubectl's rules`);
    t.true(read > 0, "the scale was seen while kubectl's rules read it as a rollout");
    t.deepEqual(
      samples.filter((sample) => sample.ours !== 'Succeeded' || sample.slots > 0),
      [],
      'at every sample the rollout stays ended and occupies no slot',
    );
    t.like((await apps()).find((app) => app.metadata.name === name)?.status?.lastRollout, { trigger: 'ConfigMap', result: 'Succeeded' });
    await node.kubectlOk(['-n', NS, 'scale', `customapp/${name}`, '--replicas=1']);
    await waitFor(`${name} back to 1`, 120_000, async () => {
      const live = await deployment();
      return live.spec.replicas === 1 && rolloutComplete(live) ? true : undefined;
    });
  },
);

onNode(
  "the budget's cost: the time for one ConfigMap edit to reach 30 apps with the default budget (10) and with 0 (unlimited), side by side",
  async (t) => {
    const rounds = Number(process.env.GOVERNANCE_COST_ROUNDS ?? 1);
    const figures: { budget: number; ms: number; maxInProgress: number }[] = [];
    let value = 2;
    for (let round = 0; round < rounds; round += 1) {
      for (const budget of [10, 0]) {
        await operatorWith({ maxConcurrentRollouts: budget });
        value += 1;
        const started = Date.now();
        await editShared(String(value));
        const { ms, maxInProgress } = await converge(String(value), started);
        figures.push({ budget, ms, maxInProgress });
        t.log(
          `budget ${budget === 0 ? '0 (unlimited)' : budget}: one edit reached 30 apps in ${ms} ms, at most ${maxInProgress} in progress`,
        );
      }
    }
    for (const figure of figures) t.true(figure.budget === 0 || figure.maxInProgress <= figure.budget, JSON.stringify(figure));
    const mean = (budget: number): number => {
      const own = figures.filter((figure) => figure.budget === budget);
      return own.reduce((sum, figure) => sum + figure.ms, 0) / own.length;
    };
    t.log(
      `side by side over ${rounds} round(s): budget 10 ${Math.round(mean(10))} ms, budget 0 ${Math.round(mean(0))} ms (${(mean(10) / mean(0)).toFixed(2)}×)`,
    );
  },
);

onNode(
  'a rollout whose new pods fail their readiness probe ends Failed: Ready=False RolloutFailed names the ConfigMap change, an Event says so, and the old pod keeps serving',
  async (t) => {
    await operatorWith({ maxConcurrentRollouts: 3 });
    const name = 'fragile';
    await node.applyObjects([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fragile-config', namespace: NS }, data: { READY: 'true' } },
      {
        apiVersion: 'app.example.com/v1',
        kind: 'CustomApp',
        metadata: { name, namespace: NS },
        spec: {
          image: demoImage,
          configMapName: 'fragile-config',
          port: 8080,
          readinessPath: '/healthz',
          rollout: { progressDeadlineSeconds: 15 },
        },
      },
    ]);
    const appOf = async (): Promise<CustomApp> => node.get(`/apis/app.example.com/v1/namespaces/${NS}/customapps/${name}`);
    await waitFor('fragile Ready', 120_000, async () => (ready(await appOf()) ? true : undefined), { describe });
    const live = await node.get(`/apis/apps/v1/namespaces/${NS}/deployments/${name}`);
    t.like(live.spec.template.spec.containers[0].readinessProbe, { httpGet: { path: '/healthz', port: 8080 } });
    t.is(live.spec.progressDeadlineSeconds, 15);
    const [oldPod] = (await node.podsOf(NS, `app.kubernetes.io/instance=${name}`)).filter((pod) => !pod.metadata.deletionTimestamp);

    const started = Date.now();
    await node.kubectlOk(['-n', NS, 'patch', 'configmap', 'fragile-config', '--type=merge', '-p', '{"data":{"READY":"false"}}']);
    const failed = await waitFor(
      'the rollout fails',
      180_000,
      async () => {
        const app = await appOf();
        return app.status?.lastRollout?.result === 'Failed' ? app : undefined;
      },
      { describe },
    );
    t.log(`READY=false → lastRollout Failed after ${Date.now() - started} ms (progressDeadlineSeconds 15)`);
    const change = `ConfigMap "fragile-config" ${contentHash({ data: { READY: 'true' } }).slice(0, 12)}→${contentHash({ data: { READY: 'false' } }).slice(0, 12)}`;
    t.like(failed.status?.lastRollout, { trigger: 'ConfigMap', name: 'fragile-config', toHash: contentHash({ data: { READY: 'false' } }) });
    t.truthy(failed.status?.lastRollout?.completionTime);
    const readyCondition = failed.status!.conditions!.find((each) => each.type === 'Ready')!;
    t.is(readyCondition.reason, 'RolloutFailed');
    t.true(readyCondition.message.startsWith(`the rollout of ${change} failed: `), readyCondition.message);
    t.regex(readyCondition.message, /has timed out progressing/);
    const events = await waitFor('the RolloutFailed Event', 30_000, async () => {
      const found = (await node.get(`/api/v1/namespaces/${NS}/events`)).items.filter(
        (event: any) => event.involvedObject.name === name && event.reason === 'RolloutFailed',
      );
      return found.length > 0 ? found : undefined;
    });
    t.true(events[0].message.startsWith(`The rollout of ${change} failed`), events[0].message);
    const describeApp = await node.kubectlOk(['-n', NS, 'describe', 'customapp', name]);
    t.regex(describeApp, /RolloutFailed/);
    const table = await node.kubectlOk(['-n', NS, 'get', 'ca', name]);
    t.regex(table, new RegExp(`${name}\\s+\\S+\\s+fragile-config\\s+False\\s+Failed`));
    const pods = (await node.podsOf(NS, `app.kubernetes.io/instance=${name}`)).filter((pod) => !pod.metadata.deletionTimestamp);
    const still = pods.find((pod) => pod.metadata.name === oldPod.metadata.name);
    t.truthy(still && podReady(still), 'the old pod still runs and is Ready: the failed rollout took nothing down');
    t.true(
      pods.some((pod) => pod.metadata.name !== oldPod.metadata.name && !podReady(pod)),
      'the new pod runs un-Ready',
    );

    await node.kubectlOk(['-n', NS, 'patch', 'configmap', 'fragile-config', '--type=merge', '-p', '{"data":{"READY":"true"}}']);
    const recovered = await waitFor('the fix rolls out', 180_000, async () => {
      const app = await appOf();
      return ready(app) && app.status?.lastRollout?.result === 'Succeeded' ? app : undefined;
    });
    t.like(recovered.status?.lastRollout, { trigger: 'ConfigMap', toHash: contentHash({ data: { READY: 'true' } }) });
    await node.kubectlOk(['-n', NS, 'delete', 'customapp', name, '--wait=true', '--timeout=120s'], { timeoutMs: 150_000 });
  },
);

onNode(
  '20 edits of the shared ConfigMap in 10 s: the flap breaker holds the apps, and no app rolls more than twice; all end on the last content',
  async (t) => {
    // The default threshold (more than 5 changes); the window shortened from 60 s to 20 s to keep the test short.
    await operatorWith({ maxConcurrentRollouts: 3, flapThreshold: 5, flapWindowMs: 20_000 });
    const before = await replicaSetCounts();
    const current = (await deployments()).find((deployment) => deployment.metadata.name === APPS[0])!.spec.template.metadata.annotations[
      CONFIG_HASH_ANNOTATION
    ];
    const started = Date.now();
    for (let edit = 1; edit <= 20; edit += 1) {
      await editShared(`flap-${edit}`);
      const next = started + edit * 500;
      await new Promise((done) => setTimeout(done, Math.max(0, next - Date.now())));
    }
    t.log(`20 edits in ${Date.now() - started} ms`);
    const held = await waitFor('apps held as Flapping', 30_000, async () => {
      const found = (await apps()).filter((app) => app.status?.pendingRollout?.reason === 'Flapping');
      return found.length > 0 ? found : undefined;
    });
    t.true(held.length >= 20, `most apps are held (${held.length})`);
    const events = (await node.get(`/api/v1/namespaces/${NS}/events`)).items.filter((event: any) => event.reason === 'RolloutHeld');
    t.true(
      events.some((event: any) => /^ConfigMap "shared" is flapping: \d+ content changes within 20s \(more than 5\)/.test(event.message)),
      'a RolloutHeld Event names the ConfigMap and the count',
    );
    t.is(await running!.operator.metrics.total('customapp_flap_breakers_open'), 1);
    const { ms, maxInProgress } = await converge('flap-20', started, 300_000);
    t.log(`all 30 on the last content ${ms} ms after the first edit; at most ${maxInProgress} in progress`);
    t.true(maxInProgress <= 3);
    const after = await replicaSetCounts();
    const rolled = APPS.map((name) => after.get(name)! - before.get(name)!);
    t.log(
      `rollouts per app: ${JSON.stringify(Object.fromEntries(APPS.map((name, index) => [name, rolled[index]])))} (from ${current.slice(0, 12)})`,
    );
    for (const [index, name] of APPS.entries()) t.true(rolled[index]! >= 1 && rolled[index]! <= 2, `${name} rolled ${rolled[index]} times`);
  },
);
