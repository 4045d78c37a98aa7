// What each kind of write costs the API server: kube-apiserver + etcd CPU per request, ours' shapes beside the peer's.
//
//   npx tsx bench/write-cost.ts [--count 600] [--rounds 3]
//
// A fresh envtest, no operator and no watcher: the harness writes `count` objects of each kind, four at a time, and
// reads the CPU time of kube-apiserver and etcd from /proc before and after each batch. It explains the cold start:
// ours writes three objects per new CustomApp (the Deployment, the finalizer, the status), the peer two, and a
// CustomApp (a custom resource) costs the API server more per write than a Deployment.
import { parseArgs } from 'node:util';
import { contentHash } from '../operator/dependencies/content-hash.js';
import { updateBody } from '../operator/customapp/custom-app.js';
import { desiredDeployment } from '../operator/reconcile/desired-deployment.js';
import { desiredStatus } from '../operator/reconcile/status.js';
import { startEnvtest } from '../envtest/harness.js';
import { findServerProcesses, processCpuSeconds } from './cpu.js';
import { forEachConcurrent } from './load.js';
import { installCrd } from './server.js';

const { values } = parseArgs({ options: { count: { type: 'string', default: '600' }, rounds: { type: 'string', default: '3' } } });
const COUNT = Number(values.count);
const ROUNDS = Number(values.rounds);
const MERGE = 'application/merge-patch+json';
const HASH = contentHash({ data: { key: 'value' } });
const NEXT_HASH = contentHash({ data: { key: 'value 2' } });
const NOW = '2026-11-30T21:00:00Z';
const PEER_LABELS = (name: string) => ({
  'app.kubernetes.io/name': 'customapp',
  'app.kubernetes.io/instance': name,
  'app.kubernetes.io/managed-by': 'customapp-peer',
});

type Json = any;
const env = await startEnvtest({});
try {
  await installCrd(env.request);
  const pids = findServerProcesses(env.dir);
  const serverCpu = (): number => (processCpuSeconds(pids.apiserver!) ?? 0) + (processCpuSeconds(pids.etcd!) ?? 0);
  const send = async (method: string, path: string, body: Json, contentType?: string): Promise<Json> => {
    const answer = await env.request(method, path, body, contentType);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
    return answer.body;
  };
  const costs = new Map<string, number[]>();
  /** Server CPU milliseconds per item of `work`, after a quiet second. */
  const measure = async (label: string, items: readonly Json[], work: (item: Json) => Promise<void>): Promise<void> => {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = serverCpu();
    await forEachConcurrent(items, 4, work);
    await new Promise((resolve) => setTimeout(resolve, 300));
    costs.set(label, [...(costs.get(label) ?? []), ((serverCpu() - before) * 1000) / items.length]);
  };
  /**
   * Two forms of one write, measured on alternate chunks of `items` (even chunks `a`, odd chunks `b`), so that a change
   * of the machine's load weighs on both alike.
   */
  const measurePair = async (
    labels: [string, string],
    items: readonly Json[],
    works: [(item: Json) => Promise<void>, (item: Json) => Promise<void>],
    chunk = 50,
  ): Promise<void> => {
    const spent = [0, 0];
    const counts = [0, 0];
    for (let start = 0; start < items.length; start += chunk) {
      const side = (start / chunk) % 2;
      const batch = items.slice(start, start + chunk);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const before = serverCpu();
      await forEachConcurrent(batch, 4, works[side]!);
      await new Promise((resolve) => setTimeout(resolve, 200));
      spent[side]! += serverCpu() - before;
      counts[side]! += batch.length;
    }
    for (const [side, label] of labels.entries()) costs.set(label, [...(costs.get(label) ?? []), (spent[side]! * 1000) / counts[side]!]);
  };
  const appPath = (app: Json, subresource = ''): string =>
    `/apis/app.example.com/v1/namespaces/${app.metadata.namespace}/customapps/${app.metadata.name}${subresource}`;

  for (let round = 1; round <= ROUNDS; round += 1) {
    const sets: Record<'ours' | 'peer', Json[]> = { ours: [], peer: [] };
    for (const side of ['ours', 'peer'] as const) {
      const namespace = `${side}-${round}`;
      await send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      await forEachConcurrent([...Array(COUNT).keys()], 8, async (index) => {
        sets[side].push(
          await send('POST', `/apis/app.example.com/v1/namespaces/${namespace}/customapps`, {
            apiVersion: 'app.example.com/v1',
            kind: 'CustomApp',
            metadata: { name: `app-${index}`, namespace },
            spec: { image: 'registry.example/app:1', configMapName: `config-${index}`, replicas: 1 },
          }),
        );
      });
    }
    // The finalizer as the operator's merge patch, and as the operator's update of the cached object (updateBody),
    // both guarded by the resourceVersion.
    await measurePair(['finalizer patch (ours only)', 'finalizer, as an update of the cached object'], sets.ours, [
      async (app) => {
        const body = { metadata: { finalizers: ['app.example.com/finalizer'], resourceVersion: app.metadata.resourceVersion } };
        app.metadata = (await send('PATCH', `${appPath(app)}?fieldManager=customapp-operator`, body, MERGE)).metadata;
      },
      async (app) => {
        const body = updateBody(app, { ...app.metadata, finalizers: ['app.example.com/finalizer'] });
        app.metadata = (await send('PUT', `${appPath(app)}?fieldManager=customapp-operator`, body)).metadata;
      },
    ]);
    await measure('Deployment create, ours', sets.ours, async (app) => {
      const deployment = desiredDeployment({ app, configMap: { name: app.spec.configMapName, hash: HASH } });
      await send('POST', `/apis/apps/v1/namespaces/${app.metadata.namespace}/deployments?fieldManager=customapp-operator`, deployment);
    });
    await measure('Deployment create, peer', sets.peer, async (app) => {
      const labels = PEER_LABELS(app.metadata.name);
      const owner = {
        apiVersion: 'app.example.com/v1',
        kind: 'CustomApp',
        name: app.metadata.name,
        uid: app.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      };
      const securityContext = {
        allowPrivilegeEscalation: false,
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      };
      const container = {
        name: 'app',
        image: app.spec.image,
        envFrom: [{ configMapRef: { name: app.spec.configMapName } }],
        securityContext,
      };
      await send('POST', `/apis/apps/v1/namespaces/${app.metadata.namespace}/deployments?fieldManager=customapp-peer`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: app.metadata.name, namespace: app.metadata.namespace, labels, ownerReferences: [owner] },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: { metadata: { labels, annotations: { 'app.example.com/config-hash': HASH } }, spec: { containers: [container] } },
        },
      });
    });
    const oursStatus = (app: Json): Json => {
      const configMap = { name: app.spec.configMapName, hash: HASH };
      return desiredStatus({
        app,
        configMap: { phase: 'present', ...configMap },
        secret: { phase: 'unreferenced' },
        deployment: { phase: 'owned', deployment: desiredDeployment({ app, configMap }) },
        rolledOut: { configMap },
        now: NOW,
      });
    };
    await measurePair(['status patch, ours (4 conditions)', 'status, ours, as an update of the cached object'], sets.ours, [
      async (app) => {
        const body = { metadata: { resourceVersion: app.metadata.resourceVersion }, status: oursStatus(app) };
        await send('PATCH', `${appPath(app, '/status')}?fieldManager=customapp-operator`, body, MERGE);
      },
      async (app) => {
        await send('PUT', `${appPath(app, '/status')}?fieldManager=customapp-operator`, updateBody(app, app.metadata, oursStatus(app)));
      },
    ]);
    await measure('status patch, peer (1 condition)', sets.peer, async (app) => {
      const ready = {
        type: 'Ready',
        status: 'True',
        reason: 'Reconciled',
        message: 'Reconciled',
        observedGeneration: 1,
        lastTransitionTime: NOW,
      };
      const status = { observedGeneration: 1, observedConfigMapName: app.spec.configMapName, configHash: HASH, conditions: [ready] };
      await send('PATCH', `${appPath(app, '/status')}?fieldManager=customapp-peer`, { status }, MERGE);
    });
    const deployments = async (namespace: string): Promise<Json[]> =>
      (await send('GET', `/apis/apps/v1/namespaces/${namespace}/deployments`, undefined)).items;
    // Ours' Deployments, half rolled by a whole-object update, half by the operator's merge patch; the peer's by its patch.
    const ours = await deployments(`ours-${round}`);
    const half = Math.floor(ours.length / 2);
    const rolloutAnnotations = { 'app.example.com/rollout': 'ConfigMap config 3f2a→e4e8' };
    const deploymentPath = (deployment: Json, manager: string): string =>
      `/apis/apps/v1/namespaces/${deployment.metadata.namespace}/deployments/${deployment.metadata.name}?fieldManager=${manager}`;
    await measure('Deployment rollout, ours, as a whole-object update', ours.slice(0, half), async (deployment) => {
      deployment.spec.template.metadata.annotations['app.example.com/config-hash'] = NEXT_HASH;
      deployment.metadata.annotations = rolloutAnnotations;
      await send('PUT', deploymentPath(deployment, 'customapp-operator'), deployment);
    });
    await measure('Deployment rollout, ours, as a merge patch', ours.slice(half), async (deployment) => {
      const patch = {
        metadata: { annotations: rolloutAnnotations, resourceVersion: deployment.metadata.resourceVersion },
        spec: { template: { metadata: { annotations: { 'app.example.com/config-hash': NEXT_HASH } } } },
      };
      await send('PATCH', deploymentPath(deployment, 'customapp-operator'), patch, MERGE);
    });
    await measure('Deployment rollout, peer, as a merge patch', await deployments(`peer-${round}`), async (deployment) => {
      const patch = { spec: { template: { metadata: { annotations: { 'app.example.com/config-hash': NEXT_HASH } } } } };
      await send('PATCH', deploymentPath(deployment, 'customapp-peer'), patch, MERGE);
    });
    await measure('Event create (ours only: RolloutTriggered)', sets.ours, async (app) => {
      const { name, namespace, uid } = app.metadata;
      await send('POST', `/api/v1/namespaces/${namespace}/events`, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${name}.`, namespace },
        involvedObject: { apiVersion: 'app.example.com/v1', kind: 'CustomApp', name, namespace, uid },
        reason: 'RolloutTriggered',
        message: 'ConfigMap "config" changed (3f2a→e4e8): rolling out',
        type: 'Normal',
        source: { component: 'customapp-operator' },
        firstTimestamp: NOW,
        lastTimestamp: NOW,
        count: 1,
      });
    });
  }
  console.log(`kube-apiserver + etcd CPU per write (ms), ${COUNT} writes of each kind, 4 at a time, ${ROUNDS} rounds on one envtest:`);
  console.log('| write | ms per write (each round) | mean |\n| --- | --- | --- |');
  for (const [label, rounds] of costs) {
    const mean = rounds.reduce((sum, value) => sum + value, 0) / rounds.length;
    console.log(`| ${label} | ${rounds.map((value) => value.toFixed(2)).join(' / ')} | ${mean.toFixed(2)} |`);
  }
} finally {
  await env.stop();
}
