// An upgrade in flight on the real node: the operator of an earlier commit fans a shared ConfigMap's edit out to 30
// CustomApps, its Deployment is switched to this tree's image midway, and every app rolls exactly once; then the same
// with a downgrade, to show what it does.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { operatorImageAt, operatorImageInDist, type CommitImage } from '../../envtest/node/build.js';
import { CONFIG_HASH_ANNOTATION, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { CONFIGMAPS } from '../../operator/kube/resources.js';
import type { KubeClient } from '../../operator/kube/client.js';
import { adminClient, createAll, createNamespace, objects } from '../support/operator-harness.js';
import { nodeSuite, rolloutComplete, waitFor } from './node-helpers.js';
import { DEMO_RESOURCES, staleTargets, type Target } from './node-soak.js';

/** The commit whose operator is upgraded from: `UPGRADE_FROM_REF`, by default the last commit before the fault soak. */
const FROM_REF = process.env.UPGRADE_FROM_REF?.trim() || 'c656fed';
const DIST = resolve(import.meta.dirname, '../../dist');
const NS = 'upgrade';
/** Apps on the edited ConfigMap, and apps on a ConfigMap no one edits (an upgrade must roll none of them). */
const SHARED_APPS = 30;
const QUIET_APPS = 5;
const REVISION = 'deployment.kubernetes.io/revision';

let earlier: CommitImage;
let admin: KubeClient;
const targets: Target[] = [];

const { onNode, node } = nodeSuite(test, {
  started: async (t) => {
    earlier = await operatorImageAt(FROM_REF, (line) => t.log(line));
    t.log(`the operator of ${earlier.commit}: ${earlier.name}`);
    await node.nodeCluster.ctr(['images', 'import', earlier.archive]);
    admin = await adminClient(node.cluster);
  },
  stopping: async () => {
    admin?.close();
    earlier?.dispose();
  },
});

/** A dist/ directory's manifests as one stream, with the operator's image named `image`. */
const manifests = (dist: string, image: string): string => {
  const shipped = operatorImageInDist(dist);
  return readdirSync(dist)
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => readFileSync(join(dist, file), 'utf8').replaceAll(`image: ${shipped}`, `image: ${image}`))
    .join('\n---\n');
};
const install = async (dist: string, image: string): Promise<void> => {
  await node.kubectlOk(['apply', '-f', '-'], { input: manifests(dist, image) });
};
const operatorRolledOut = (): Promise<string> =>
  node.kubectlOk(['-n', OPERATOR_NAMESPACE, 'rollout', 'status', `deployment/${OPERATOR_NAME}`, '--timeout=300s'], {
    timeoutMs: 320_000,
  });
const deployments = async (): Promise<Map<string, any>> =>
  new Map(((await node.get(`/apis/apps/v1/namespaces/${NS}/deployments`)).items as any[]).map((each) => [each.metadata.name, each]));
const revisions = async (): Promise<Map<string, number>> =>
  new Map([...(await deployments())].map(([name, deployment]) => [name, Number(deployment.metadata.annotations?.[REVISION] ?? 0)]));
const allRolledOut = async (): Promise<void> => {
  await waitFor(
    'every app rolled out',
    600_000,
    async () => {
      const all = [...(await deployments()).values()];
      return all.length === targets.length && all.every(rolloutComplete) ? true : undefined;
    },
    { intervalMs: 2_000 },
  );
};
/**
 * Edits the shared ConfigMap, waits until the operator has rolled some of its apps and not all (the fan-out in
 * flight: the rollout budget lets 10 go at once), then switches the operator with `switchOperator`; answers how far
 * the fan-out was at the switch.
 */
const editDuringSwitch = async (value: string, switchOperator: () => Promise<void>): Promise<string> => {
  const before = new Map(
    [...(await deployments())].map(([name, each]) => [name, each.spec.template.metadata.annotations?.[CONFIG_HASH_ANNOTATION]]),
  );
  await admin.patch(CONFIGMAPS, NS, 'shared', 'merge', { data: { VALUE: value } });
  const progress = await waitFor(
    'the fan-out under way',
    120_000,
    async () => {
      const moved = [...(await deployments())].filter(
        ([name, each]) => each.spec.template.metadata.annotations?.[CONFIG_HASH_ANNOTATION] !== before.get(name),
      );
      return moved.length > 0 ? `${moved.length} of ${SHARED_APPS} apps rolled when the operator was switched` : undefined;
    },
    { intervalMs: 100 },
  );
  await switchOperator();
  await operatorRolledOut();
  await allRolledOut();
  return progress;
};
/** Waits until every app's pods show the latest content, then a quiet moment, and answers each app's revision change. */
const settledRevisions = async (before: Map<string, number>): Promise<Map<string, number>> => {
  await waitFor(
    'every app running the latest content',
    600_000,
    async () => ((await staleTargets(node.cluster, targets, NS)).length === 0 ? true : undefined),
    { intervalMs: 5_000, describe: async () => (await staleTargets(node.cluster, targets, NS)).slice(0, 10).join('\n') },
  );
  await new Promise((done) => setTimeout(done, 15_000));
  const after = await revisions();
  return new Map([...after].map(([name, revision]) => [name, revision - (before.get(name) ?? 0)]));
};

onNode(
  `upgrade in flight from ${FROM_REF}: the Deployment switched to this build (kubectl apply -f dist/) while a shared ConfigMap's edit fans out to ${SHARED_APPS} apps rolls each exactly once, and none of the ${QUIET_APPS} others`,
  async (t) => {
    await install(join(earlier.tree, 'dist'), earlier.name);
    await operatorRolledOut();
    const [pod] = (await node.podsOf(OPERATOR_NAMESPACE, `app.kubernetes.io/name=${OPERATOR_NAME}`)).filter(
      (each) => !each.metadata.deletionTimestamp,
    );
    t.is(pod.spec.containers[0].image, earlier.name, `the operator of ${earlier.commit} runs`);

    await createNamespace(admin, NS);
    await createAll(admin, objects.configMap(NS, 'shared', { VALUE: 'first' }), objects.configMap(NS, 'quiet', { VALUE: 'still' }));
    await createAll(admin, objects.secret(NS, 'token', { TOKEN: 'token' }));
    const image = node.images.demo;
    for (let index = 0; index < SHARED_APPS + QUIET_APPS; index += 1) {
      const target: Target = {
        kind: 'CustomApp',
        name: `app-${index}`,
        configMap: index < SHARED_APPS ? 'shared' : 'quiet',
        secret: 'token',
        replicas: 1,
        live: true,
        changes: 0,
      };
      targets.push(target);
      await createAll(
        admin,
        objects.customApp(NS, target.name, {
          image,
          configMapName: target.configMap,
          secretName: 'token',
          replicas: 1,
          resources: DEMO_RESOURCES,
        }),
      );
    }
    await allRolledOut();
    const before = await revisions();

    const progress = await editDuringSwitch('second', () => node.kubectlOk(['apply', '-f', DIST]).then(() => undefined));
    t.log(`upgrade: ${progress}`);
    const [upgraded] = (await node.podsOf(OPERATOR_NAMESPACE, `app.kubernetes.io/name=${OPERATOR_NAME}`)).filter(
      (each) => !each.metadata.deletionTimestamp,
    );
    t.is(upgraded.spec.containers[0].image, node.images.operator, 'this build runs');
    const rolled = await settledRevisions(before);
    const shared = targets.filter((target) => target.configMap === 'shared').map((target) => [target.name, rolled.get(target.name)]);
    const quiet = targets.filter((target) => target.configMap === 'quiet').map((target) => [target.name, rolled.get(target.name)]);
    t.deepEqual(
      shared,
      shared.map(([name]) => [name, 1]),
      'each app of the edited ConfigMap rolled exactly once',
    );
    t.deepEqual(
      quiet,
      quiet.map(([name]) => [name, 0]),
      'no app of the unedited ConfigMap rolled',
    );
  },
);

onNode(
  `downgrade in flight back to ${FROM_REF} (unsupported, shown): every app ends on the latest content; how many rolled twice is logged`,
  async (t) => {
    const before = await revisions();
    const progress = await editDuringSwitch('third', () => install(join(earlier.tree, 'dist'), earlier.name));
    t.log(`downgrade: ${progress}`);
    const rolled = await settledRevisions(before);
    const counts: Record<string, number> = {};
    for (const target of targets) {
      const key = `${target.configMap} apps rolled ${rolled.get(target.name)} times`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    t.log(`downgrade to ${earlier.commit}: ${JSON.stringify(counts)}`);
    t.deepEqual(await staleTargets(node.cluster, targets, NS), [], 'every app runs the latest content after the downgrade');
    t.true(
      targets.filter((target) => target.configMap === 'shared').every((target) => (rolled.get(target.name) ?? 0) >= 1),
      'no app of the edited ConfigMap missed the edit',
    );
  },
);
