// The least-privilege install on a real node: an install synthesized with the chart's `namespaces` runs the operator's
// image, which rolls a CustomApp in its namespace, ignores one elsewhere, and cannot read a Secret there.
import test from 'ava';
import { rmSync } from 'node:fs';
import { synthInstall } from '../support/synthesized-install.js';
import { nodeSuite, podReady, rolloutComplete, waitFor } from './node-helpers.js';

const SYSTEM = 'customapp-system';
const OPERATOR = 'customapp-operator';
const WATCHED = 'node-team-a';
const ELSEWHERE = 'node-team-c';
const APP = 'demo';
const OPERATOR_USER = `system:serviceaccount:${SYSTEM}:${OPERATOR}`;

let installDir = '';

const { onNode, node } = nodeSuite(test, {
  started: async () => {
    installDir = synthInstall({ namespaces: [WATCHED] });
  },
  stopping: async () => {
    if (installDir) rmSync(installDir, { recursive: true, force: true });
  },
});

const describe = async (): Promise<string> =>
  node.kubectlOk(['get', 'customapp,deploy,rs,pods', '-o', 'wide', '-n', WATCHED]).catch(String);
const deployment = (namespace: string): Promise<any> => node.get(`/apis/apps/v1/namespaces/${namespace}/deployments/${APP}`);
const customApp = (namespace: string): Promise<any> => node.get(`/apis/app.example.com/v1/namespaces/${namespace}/customapps/${APP}`);

/** The demo image's ConfigMap, Secret and CustomApp (2 replicas) in `namespace`. */
const applyApp = async (namespace: string): Promise<void> => {
  const image = node.images.demo;
  await node.applyObjects([
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'demo-config', namespace }, data: { A: 'one' } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'demo-secret', namespace }, stringData: { TOKEN: `of-${namespace}` } },
  ]);
  await node.kubectlOk(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      metadata: { name: APP, namespace },
      spec: { image, configMapName: 'demo-config', secretName: 'demo-secret', replicas: 2, port: 8080 },
    }),
  });
};

onNode(
  `an install synthesized with namespaces [${WATCHED}] runs the operator Ready with --namespaces, under Roles in ${WATCHED} and ${SYSTEM} and a ClusterRole that reads nothing`,
  async (t) => {
    for (const namespace of [WATCHED, ELSEWHERE]) await node.kubectlOk(['create', 'namespace', namespace]);
    await node.kubectlOk(['apply', '-f', installDir]);
    await node.kubectlOk(['-n', SYSTEM, 'rollout', 'status', `deployment/${OPERATOR}`, '--timeout=180s'], { timeoutMs: 200_000 });
    const [pod] = (await node.podsOf(SYSTEM, `app.kubernetes.io/name=${OPERATOR}`)).filter((each) => !each.metadata.deletionTimestamp);
    t.truthy(pod, 'an operator pod exists');
    t.true(podReady(pod), 'Ready: its caches of the watched namespace synced under the Roles alone');
    t.true(pod.spec.containers[0].args.includes(`--namespaces=${WATCHED}`));
    const clusterRole = await node.get(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${OPERATOR}`);
    t.deepEqual(
      clusterRole.rules.flatMap((rule: { resources: string[] }) => rule.resources),
      ['tokenreviews', 'subjectaccessreviews'],
    );
    const roles = await node.kubectlOk([
      'get',
      'roles',
      '--all-namespaces',
      '-o',
      'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}',
    ]);
    t.deepEqual(
      roles
        .trim()
        .split(' ')
        .filter((role) => role.endsWith(`/${OPERATOR}`))
        .sort(),
      [`${SYSTEM}/${OPERATOR}`, `${WATCHED}/${OPERATOR}`].sort(),
    );
    const lines = await node.podLogLines(SYSTEM, pod.metadata.name);
    t.deepEqual(lines.find((line) => line.msg === 'started')?.namespaces, [WATCHED]);
    t.deepEqual(
      lines.filter((line) => line.msg === 'api.unavailable'),
      [],
      'nothing forbidden',
    );
  },
);

onNode(
  `a CustomApp in ${WATCHED} becomes Ready and a ConfigMap edit rolls its pods; the same CustomApp in ${ELSEWHERE} gets no Deployment, no finalizer and no status`,
  async (t) => {
    await applyApp(ELSEWHERE);
    await applyApp(WATCHED);
    await node.kubectlOk(['-n', WATCHED, 'wait', '--for=condition=Ready', `customapp/${APP}`, '--timeout=180s'], {
      timeoutMs: 200_000,
    });
    const before = await deployment(WATCHED);
    const replicaSets = (await node.replicaSetsOf(WATCHED, APP)).length;
    await node.kubectlOk(['-n', WATCHED, 'patch', 'configmap', 'demo-config', '--type=merge', '-p', '{"data":{"A":"two"}}']);
    await waitFor(
      `the rollout of ${WATCHED}/${APP} with A=two`,
      180_000,
      async () => {
        const current = await deployment(WATCHED);
        if (JSON.stringify(current.spec.template) === JSON.stringify(before.spec.template) || !rolloutComplete(current)) return undefined;
        const pods = (await node.podsOf(WATCHED, `app.kubernetes.io/instance=${APP}`)).filter((pod) => !pod.metadata.deletionTimestamp);
        return pods.length === 2 && pods.every(podReady) ? true : undefined;
      },
      { intervalMs: 200, describe },
    );
    t.is((await node.replicaSetsOf(WATCHED, APP)).length, replicaSets + 1, 'one new ReplicaSet');

    // The app in team-c was created first: whatever the operator could have done with it, it would have done by now.
    const ignored = await customApp(ELSEWHERE);
    t.deepEqual(ignored.metadata.finalizers ?? [], [], 'no finalizer');
    t.is(ignored.status, undefined, 'no status');
    const absent = await node.nodeCluster.envtest.request('GET', `/apis/apps/v1/namespaces/${ELSEWHERE}/deployments/${APP}`);
    t.is(absent.status, 404, 'no Deployment');
    t.deepEqual(await node.podsOf(ELSEWHERE, `app.kubernetes.io/instance=${APP}`), [], 'no pod');
  },
);

onNode(
  `the operator's identity cannot read a Secret in ${ELSEWHERE}: kubectl auth can-i says no, and a GET with its own token is refused with 403`,
  async (t) => {
    const canI = async (...args: string[]): Promise<string> =>
      (await node.cluster.kubectl(['auth', 'can-i', ...args, '--as', OPERATOR_USER])).stdout.trim();
    t.is(await canI('get', 'secrets', '-n', ELSEWHERE), 'no');
    t.is(await canI('list', 'secrets', '--all-namespaces'), 'no');
    t.is(await canI('list', 'secrets', '-n', WATCHED), 'yes');
    const { path } = await node.cluster.serviceAccount(SYSTEM, OPERATOR);
    const refused = await node.cluster.kubectl(['get', 'secret', 'demo-secret', '-n', ELSEWHERE, '-v=6'], { kubeconfig: path });
    t.log(
      refused.stderr
        .split('\n')
        .filter((line) => /secrets|Forbidden/.test(line))
        .join('\n'),
    );
    t.not(refused.code, 0);
    t.regex(refused.stderr, /403 Forbidden/);
    t.regex(refused.stderr, /cannot get resource "secrets" in API group "" in the namespace "node-team-c"/);
    t.is(refused.stdout, '', 'nothing of the Secret printed');
  },
);
