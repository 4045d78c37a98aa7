// The workloads' users' path on a real node: a chart with the `workloads` prop installs the operator, and existing
// StatefulSets, DaemonSets and Deployments of the demo image opted in by annotation roll with the new value in the pods.
import test from 'ava';
import { rmSync } from 'node:fs';
import {
  RELOAD_ANNOTATION,
  RELOADER_AUTO_ANNOTATION,
  RELOADER_CONFIGMAPS_ANNOTATION,
  RUNNING_HASHES_ANNOTATION,
  TEMPLATE_HASHES_ANNOTATION,
} from '../../api/workload.js';
import { synthInstall } from '../support/synthesized-install.js';
import { nodeSuite, podReady, rolloutComplete, waitFor } from './node-helpers.js';

const SYSTEM = 'customapp-system';
const OPERATOR = 'customapp-operator';
const NS = 'node-workloads';

let demoImage = '';
let chartDir = '';

const { onNode, node } = nodeSuite(test, {
  started: async () => {
    demoImage = node.images.demo;
    // The users' path: their own cdk8s app with the operator's chart and its `workloads` prop, synthesized and applied.
    chartDir = synthInstall({ workloads: ['deployments', 'statefulsets', 'daemonsets'] });
  },
  stopping: async () => {
    if (chartDir) rmSync(chartDir, { recursive: true, force: true });
  },
});

const describe = async (): Promise<string> =>
  node.kubectlOk(['-n', NS, 'get', 'statefulset,daemonset,deploy,rs,pods,events', '-o', 'wide']).catch(String);
/** The live (not terminating) pods of `app=<name>`. */
const livePods = async (name: string): Promise<any[]> =>
  (await node.podsOf(NS, `app=${name}`)).filter((pod) => !pod.metadata.deletionTimestamp);
const workload = (resource: string, name: string): Promise<any> => node.get(`/apis/apps/v1/namespaces/${NS}/${resource}/${name}`);
const edit = (kind: 'configmap' | 'secret', name: string, patch: object): Promise<string> =>
  node.kubectlOk(['-n', NS, 'patch', kind, name, '--type=merge', '-p', JSON.stringify(patch)]);
/** The value of `variable` on each live pod's demo page. */
const shown = async (name: string, variable: string): Promise<string[]> =>
  Promise.all(
    (await livePods(name)).map(
      async (pod) => new RegExp(`^${variable}=(.*)$`, 'm').exec(await node.demoPage(NS, pod.metadata.name))?.[1] ?? '(unset)',
    ),
  );
/**
 * Waits until `name`'s pods are as many as `replicas`, all Ready, none among `oldUids`, and each page shows
 * `variable=value`; answers the new pods' uids.
 */
const rolledTo = async (name: string, replicas: number, oldUids: readonly string[], variable: string, value: string) =>
  waitFor(
    `${name}'s pods replaced and showing ${variable}=${value}`,
    180_000,
    async () => {
      const pods = await livePods(name);
      if (pods.length !== replicas || !pods.every(podReady) || pods.some((pod) => oldUids.includes(pod.metadata.uid))) return undefined;
      const values = await shown(name, variable);
      return values.every((each) => each === value) ? pods.map((pod) => pod.metadata.uid as string) : undefined;
    },
    { intervalMs: 250, describe },
  );
const uids = async (name: string): Promise<string[]> => (await livePods(name)).map((pod) => pod.metadata.uid);
/** The hashes the operator recorded on the workload (its baseline, then the content each rollout ran with). */
const recorded = async (resource: string, name: string): Promise<string | undefined> =>
  (await workload(resource, name)).metadata.annotations?.[RUNNING_HASHES_ANNOTATION];
/** A quiet moment after the operator recorded a baseline, in which a wrong rollout would have been written. */
const quiet = (): Promise<void> => new Promise((done) => setTimeout(done, 3_000));

onNode(
  'a chart with the workloads prop (deployments, statefulsets, daemonsets) installs the operator: Ready, with --workloads and the Lease',
  async (t) => {
    await node.kubectlOk(['apply', '-f', chartDir]);
    await node.kubectlOk(['-n', SYSTEM, 'rollout', 'status', `deployment/${OPERATOR}`, '--timeout=180s'], { timeoutMs: 200_000 });
    const [pod] = (await node.podsOf(SYSTEM, `app.kubernetes.io/name=${OPERATOR}`)).filter((each) => !each.metadata.deletionTimestamp);
    t.true(podReady(pod));
    t.is(pod.spec.containers[0].image, node.images.operator, "the chart's default image, loaded into the node");
    t.true(pod.spec.containers[0].args.includes('--workloads=deployments,statefulsets,daemonsets'), pod.spec.containers[0].args.join(' '));
    await waitFor('the Lease', 60_000, async () => {
      const lease = await node.get(`/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases/${OPERATOR}-leader`);
      return lease.spec.holderIdentity?.startsWith(`${pod.metadata.name}_`) ? true : undefined;
    });
    await node.kubectlOk(['create', 'namespace', NS]);
  },
);

onNode(
  'a StatefulSet and a DaemonSet of the demo image opted in by annotation: opting in rolls nothing; a ConfigMap edit, then a Secret edit, roll both with the new value shown by every pod',
  async (t) => {
    // Both use ConfigMap `config` (envFrom) and Secret `secret` (env valueFrom secretKeyRef); the StatefulSet opts in
    // with our annotation, the DaemonSet with Reloader's.
    const template = (name: string) => ({
      metadata: { labels: { app: name } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'app',
            image: demoImage,
            envFrom: [{ configMapRef: { name: 'config' } }],
            env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'secret', key: 'TOKEN' } } }],
          },
        ],
      },
    });
    await node.applyObjects([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'config', namespace: NS }, data: { GREETING: 'hello' } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'secret', namespace: NS }, stringData: { TOKEN: 'first' } },
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db', namespace: NS, annotations: { [RELOAD_ANNOTATION]: 'true' } },
        spec: { serviceName: 'db', replicas: 1, selector: { matchLabels: { app: 'db' } }, template: template('db') },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'agent', namespace: NS, annotations: { [RELOADER_AUTO_ANNOTATION]: 'true' } },
        spec: { selector: { matchLabels: { app: 'agent' } }, template: template('agent') },
      },
    ]);
    const sets = [
      { resource: 'statefulsets', name: 'db', replicas: 1 },
      { resource: 'daemonsets', name: 'agent', replicas: 1 },
    ] as const;
    let pods = new Map<string, string[]>();
    for (const { resource, name, replicas } of sets) {
      pods.set(name, await rolledTo(name, replicas, [], 'GREETING', 'hello'));
      await waitFor(`${name}'s baseline recorded`, 60_000, () => recorded(resource, name), { describe });
    }
    await quiet();
    for (const { resource, name } of sets) {
      t.is(
        (await workload(resource, name)).spec.template.metadata.annotations?.[TEMPLATE_HASHES_ANNOTATION],
        undefined,
        `${name}: opting in rolled nothing`,
      );
      t.deepEqual(await uids(name), pods.get(name), `${name}: the same pods run`);
    }

    for (const [change, variable, value] of [
      [() => edit('configmap', 'config', { data: { GREETING: 'bonjour' } }), 'GREETING', 'bonjour'],
      [() => edit('secret', 'secret', { stringData: { TOKEN: 'second' } }), 'TOKEN', 'second'],
    ] as const) {
      const start = Date.now();
      await change();
      const next = new Map<string, string[]>();
      for (const { name, replicas } of sets) next.set(name, await rolledTo(name, replicas, pods.get(name)!, variable, value));
      t.log(`${variable} edit → the StatefulSet's and the DaemonSet's new pods show ${variable}=${value}: ${Date.now() - start} ms`);
      pods = next;
    }
    for (const { resource, name } of sets) {
      const current = await workload(resource, name);
      t.truthy(current.spec.template.metadata.annotations?.[TEMPLATE_HASHES_ANNOTATION], `${name} rolled by the hashes annotation`);
      t.true((current.status?.observedGeneration ?? 0) >= current.metadata.generation);
    }
    const events = await node.kubectlOk(['-n', NS, 'get', 'events', '--field-selector=reason=RolloutTriggered', '-o', 'json']);
    const triggered = (JSON.parse(events).items as any[])
      .map((event) => `${event.involvedObject.kind}/${event.involvedObject.name}`)
      .sort();
    t.deepEqual(triggered, ['DaemonSet/agent', 'DaemonSet/agent', 'StatefulSet/db', 'StatefulSet/db'], 'one rollout per edit each');
  },
);

onNode(
  'a Deployment made by kubectl create deployment and annotated afterwards (kubectl annotate): opting in rolls nothing, the next edit rolls it with the new value in its pods',
  async (t) => {
    await node.kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'web-config', namespace: NS },
        data: { GREETING: 'hi' },
      }),
    });
    await node.kubectlOk(['-n', NS, 'create', 'deployment', 'web', `--image=${demoImage}`]);
    // The user then wires the ConfigMap in (env valueFrom configMapKeyRef, one per key): kubectl's own rollout.
    await node.kubectlOk(['-n', NS, 'set', 'env', 'deployment/web', '--from=configmap/web-config']);
    await node.kubectlOk(['-n', NS, 'rollout', 'status', 'deployment/web', '--timeout=180s'], { timeoutMs: 200_000 });
    const before = await workload('deployments', 'web');
    const replicaSets = (await node.replicaSetsOf(NS, 'web')).map((rs) => rs.metadata.name).sort();
    const podsBefore = await rolledTo('web', 1, [], 'GREETING', 'hi');

    await node.kubectlOk(['-n', NS, 'annotate', 'deployment/web', `${RELOADER_CONFIGMAPS_ANNOTATION}=web-config`]);
    await waitFor("web's baseline recorded", 60_000, () => recorded('deployments', 'web'), { describe });
    await quiet();
    // The API server moves a Deployment's generation on an annotation change too (they are copied to its ReplicaSets):
    // the proof that nothing rolled is the template, the ReplicaSets and the pod.
    const annotated = await workload('deployments', 'web');
    t.deepEqual(annotated.spec.template, before.spec.template, 'opting in left the pod template as it was');
    t.deepEqual((await node.replicaSetsOf(NS, 'web')).map((rs) => rs.metadata.name).sort(), replicaSets, 'no new ReplicaSet');
    t.deepEqual(await uids('web'), podsBefore, 'the same pod runs');

    const start = Date.now();
    await edit('configmap', 'web-config', { data: { GREETING: 'next' } });
    await rolledTo('web', 1, podsBefore, 'GREETING', 'next');
    await waitFor('the rollout complete', 120_000, async () => (rolloutComplete(await workload('deployments', 'web')) ? true : undefined));
    t.log(`ConfigMap edit → the Deployment's new pod shows GREETING=next: ${Date.now() - start} ms`);
    t.is((await node.replicaSetsOf(NS, 'web')).length, replicaSets.length + 1, 'one new ReplicaSet');
  },
);
