// The users' path on a real node: kubectl apply -f dist/ runs the operator's image, and CustomApps become pods that roll.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { DEMO_IMAGE_CONFIGMAP } from '../../envtest/node/harness.js';
import { runKubectl, startCluster } from '../support/targets.js';
import { nodeSuite, podReady, rolloutComplete, waitFor } from './node-helpers.js';

const DIST = resolve(import.meta.dirname, '../../dist');
const SYSTEM = 'customapp-system';
const OPERATOR = 'customapp-operator';
const LEASE = 'customapp-operator-leader';
const NS = 'node-demo';
const APP = 'demo';
const APP_SELECTOR = `app.kubernetes.io/instance=${APP}`;
const OPERATOR_SELECTOR = `app.kubernetes.io/name=${OPERATOR}`;

let demoImage = '';

const { onNode, node } = nodeSuite(test, {
  started: async (t) => {
    t.log(`node cluster ready in ${node.nodeCluster.timings.total} ms: ${JSON.stringify(node.nodeCluster.timings)}`);
  },
});

const leaseHolder = async (): Promise<{ holder: string; renewTime?: string; acquireTime?: string; durationSeconds: number }> => {
  const lease = await node.get(`/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases/${LEASE}`);
  return {
    holder: lease.spec.holderIdentity ?? '',
    renewTime: lease.spec.renewTime,
    acquireTime: lease.spec.acquireTime,
    durationSeconds: lease.spec.leaseDurationSeconds,
  };
};
const describeApp = async (): Promise<string> =>
  node.kubectlOk(['-n', NS, 'get', 'customapp,deploy,rs,pods', '-o', 'wide']).catch((error) => String(error));
const operatorPods = async (): Promise<any[]> =>
  (await node.podsOf(SYSTEM, OPERATOR_SELECTOR)).filter((pod) => !pod.metadata.deletionTimestamp);
const appPods = async (): Promise<any[]> => node.podsOf(NS, APP_SELECTOR);
const deployment = async (): Promise<any> => node.get(`/apis/apps/v1/namespaces/${NS}/deployments/${APP}`);

/**
 * Waits from `start` until the Deployment's rollout is complete with a pod template different from `before`, and
 * answers the elapsed milliseconds; `kubectl rollout status` runs alongside and must complete too.
 */
const rolledOut = async (start: number, templateBefore: string, what: string): Promise<number> => {
  const status = node.cluster.kubectl(['-n', NS, 'rollout', 'status', `deployment/${APP}`, '--timeout=180s'], { timeoutMs: 200_000 });
  const elapsed = await waitFor(
    `${what}: rollout of deployment ${NS}/${APP}`,
    180_000,
    async () => {
      const current = await deployment();
      if (JSON.stringify(current.spec.template) === templateBefore || !rolloutComplete(current)) return undefined;
      const pods = (await appPods()).filter((pod) => !pod.metadata.deletionTimestamp);
      return pods.length === current.spec.replicas && pods.every(podReady) ? Date.now() - start : undefined;
    },
    { intervalMs: 100, describe: describeApp },
  );
  const result = await status;
  if (result.code !== 0 || !result.stdout.includes('successfully rolled out')) {
    throw new Error(`kubectl rollout status exited ${result.code}: ${result.stdout}${result.stderr}`);
  }
  return elapsed;
};

onNode(
  'kubectl apply -f dist/: the operator pod becomes Ready through its probes, in-cluster, as uid 65532 on a read-only root, and takes the Lease',
  async (t) => {
    await node.kubectlOk(['apply', '-f', DIST]);
    await node.kubectlOk(['-n', SYSTEM, 'rollout', 'status', `deployment/${OPERATOR}`, '--timeout=180s'], { timeoutMs: 200_000 });
    const [pod] = await operatorPods();
    t.truthy(pod, 'an operator pod exists');
    const name = pod.metadata.name as string;
    const container = pod.spec.containers[0];
    t.is(container.image, node.images.operator, 'the image dist/ names, loaded into the node');
    t.is(container.imagePullPolicy, 'IfNotPresent');
    t.is(container.readinessProbe.httpGet.path, '/readyz');
    t.is(container.livenessProbe.httpGet.path, '/healthz');
    t.true(podReady(pod), 'Ready: the kubelet polled /readyz and got 200');
    t.is(pod.status.containerStatuses[0].restartCount, 0, 'the liveness probe never failed');
    // The kubelet reaches the probe port on the pod's address; the API server's pod proxy reaches it the same way.
    const readyz = await node.kubectlOk(['get', '--raw', `/api/v1/namespaces/${SYSTEM}/pods/${name}:8081/proxy/readyz`]);
    t.regex(readyz, /ok/i);

    const kubeconfigLine = (await node.podLogLines(SYSTEM, name)).find((entry) => entry.msg === 'kubeconfig');
    t.is(kubeconfigLine?.source, 'in-cluster', 'the ServiceAccount token and KUBERNETES_SERVICE_HOST');
    t.is(
      kubeconfigLine?.server,
      `https://${node.nodeCluster.addresses.kubernetesServiceIp}:443`,
      'through the kubernetes Service (kube-proxy)',
    );

    t.is((await node.kubectlOk(['-n', SYSTEM, 'exec', name, '--', 'id', '-u'])).trim(), '65532');
    t.is((await node.kubectlOk(['-n', SYSTEM, 'exec', name, '--', 'id', '-g'])).trim(), '65532');
    const write = await node.cluster.kubectl(['-n', SYSTEM, 'exec', name, '--', 'sh', '-c', 'touch /app/probe || touch /tmp/probe']);
    t.not(write.code, 0);
    t.regex(write.stderr, /Read-only file system/);
    const rootMount = await node.kubectlOk(['-n', SYSTEM, 'exec', name, '--', 'sh', '-c', 'grep " / " /proc/self/mounts']);
    t.regex(rootMount, /\sro[\s,]/, `the root mount is read-only: ${rootMount.trim()}`);
    // The image's malloc: its LD_PRELOAD loaded jemalloc into the operator (the container's first process).
    const maps = await node.kubectlOk(['-n', SYSTEM, 'exec', name, '--', 'sh', '-c', 'grep -c libjemalloc /proc/1/maps || true']);
    t.true(Number(maps.trim()) > 0, `jemalloc is mapped into the operator: ${maps.trim()}`);

    const lease = await waitFor('the Lease', 60_000, async () => {
      const current = await leaseHolder();
      return current.holder.startsWith(`${name}_`) ? current : undefined;
    });
    t.log(`operator pod ${name} Ready; Lease held by ${lease.holder}`);
  },
);

onNode(
  'a CustomApp with the demo image and 2 replicas becomes Ready=True; its pods see the ConfigMap and Secret values, and its Service answers from a pod',
  async (t) => {
    demoImage = (await node.get(`/api/v1/namespaces/${DEMO_IMAGE_CONFIGMAP.namespace}/configmaps/${DEMO_IMAGE_CONFIGMAP.name}`)).data.image;
    t.is(demoImage, node.images.demo);
    await node.kubectlOk(['create', 'namespace', NS]);
    await node.applyObjects([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'demo-config', namespace: NS }, data: { A: 'one', GREETING: 'hello' } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'demo-secret', namespace: NS }, stringData: { TOKEN: 'first-token' } },
    ]);
    await node.kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'app.example.com/v1',
        kind: 'CustomApp',
        metadata: { name: APP, namespace: NS },
        spec: { image: demoImage, configMapName: 'demo-config', secretName: 'demo-secret', replicas: 2, port: 8080 },
      }),
    });
    await node.kubectlOk(['-n', NS, 'wait', '--for=condition=Ready', `customapp/${APP}`, '--timeout=180s'], { timeoutMs: 200_000 });
    const app = await node.get(`/apis/app.example.com/v1/namespaces/${NS}/customapps/${APP}`);
    t.is(app.status.readyReplicas, 2);
    const pods = (await appPods()).filter((pod) => !pod.metadata.deletionTimestamp);
    t.is(pods.length, 2);
    for (const pod of pods) {
      t.true(podReady(pod));
      t.is(await node.envInPod(NS, pod.metadata.name, 'A'), 'one');
      t.is(await node.envInPod(NS, pod.metadata.name, 'TOKEN'), 'first-token');
    }
    // The demo page shows the environment; the operator's Service reaches it through kube-proxy, from another pod.
    const service = await node.get(`/api/v1/namespaces/${NS}/services/${APP}`);
    const fetch = (path: string) =>
      node.kubectlOk(['-n', NS, 'exec', pods[0].metadata.name, '--', 'wget', '-qO-', `http://${service.spec.clusterIP}:8080${path}`]);
    const page = await fetch('/');
    t.regex(page, /^A=one$/m);
    t.regex(page, /^customapp demo on demo-/);
    t.is((await fetch('/healthz')).trim(), 'ok');
  },
);

onNode('a ConfigMap edit rolls the pods: a new ReplicaSet, pods Ready with the new value, kubectl rollout status completes', async (t) => {
  const before = await deployment();
  const replicaSets = (await node.replicaSetsOf(NS, APP)).map((rs) => rs.metadata.name);
  const start = Date.now();
  await node.kubectlOk(['-n', NS, 'patch', 'configmap', 'demo-config', '--type=merge', '-p', '{"data":{"A":"two"}}']);
  const elapsed = await rolledOut(start, JSON.stringify(before.spec.template), 'ConfigMap edit');
  const after = (await node.replicaSetsOf(NS, APP)).map((rs) => rs.metadata.name);
  t.is(after.length, replicaSets.length + 1, `one new ReplicaSet: ${after.join(', ')}`);
  const pods = (await appPods()).filter((pod) => !pod.metadata.deletionTimestamp);
  for (const pod of pods) t.is(await node.envInPod(NS, pod.metadata.name, 'A'), 'two');
  t.log(`ConfigMap edit → all ${pods.length} new pods Ready: ${elapsed} ms`);
});

onNode('a Secret edit rolls the pods, and the Secret value appears in no log, Event, status, Deployment or ReplicaSet', async (t) => {
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const before = await deployment();
  const start = Date.now();
  await node.kubectlOk([
    '-n',
    NS,
    'patch',
    'secret',
    'demo-secret',
    '--type=merge',
    '-p',
    JSON.stringify({ stringData: { TOKEN: canary } }),
  ]);
  const elapsed = await rolledOut(start, JSON.stringify(before.spec.template), 'Secret edit');
  const pods = (await appPods()).filter((pod) => !pod.metadata.deletionTimestamp);
  for (const pod of pods) t.is(await node.envInPod(NS, pod.metadata.name, 'TOKEN'), canary);
  t.log(`Secret edit → all ${pods.length} new pods Ready: ${elapsed} ms`);

  const forms = [canary, Buffer.from(canary).toString('base64')];
  const places: Record<string, string> = {
    'operator logs': (
      await Promise.all((await operatorPods()).map((pod) => node.kubectlOk(['-n', SYSTEM, 'logs', pod.metadata.name, '--all-containers'])))
    ).join('\n'),
    'demo pod logs': (await Promise.all(pods.map((pod) => node.kubectlOk(['-n', NS, 'logs', pod.metadata.name])))).join('\n'),
    events: await node.kubectlOk(['get', 'events', '--all-namespaces', '-o', 'json']),
    'CustomApp (status included)': await node.kubectlOk(['-n', NS, 'get', 'customapp', APP, '-o', 'json']),
    Deployment: await node.kubectlOk(['-n', NS, 'get', 'deployment', APP, '-o', 'json']),
    ReplicaSets: await node.kubectlOk(['-n', NS, 'get', 'replicasets', '-o', 'json']),
  };
  for (const [place, text] of Object.entries(places)) {
    t.true(text.length > 0, `${place} were read`);
    for (const form of forms)
      t.false(text.includes(form), `the Secret value (${form === canary ? 'plain' : 'base64'}) appears in the ${place}`);
  }
});

onNode('deleting the operator pod: the replacement takes the Lease and rolls nothing', async (t) => {
  const [old] = await operatorPods();
  const replicaSets = (await node.replicaSetsOf(NS, APP)).map((rs) => rs.metadata.name).sort();
  const generation = (await deployment()).metadata.generation;
  // Running pods only: a pod of the previous rollout may still be terminating, and leaves meanwhile.
  const running = async (): Promise<string[]> =>
    (await appPods())
      .filter((pod) => !pod.metadata.deletionTimestamp)
      .map((pod) => pod.metadata.name)
      .sort();
  const podsBefore = await running();
  await node.kubectlOk(['-n', SYSTEM, 'delete', 'pod', old.metadata.name, '--wait=true', '--timeout=120s'], { timeoutMs: 150_000 });
  const replacement = await waitFor('the replacement operator pod Ready', 120_000, async () => {
    const pods = (await operatorPods()).filter((pod) => pod.metadata.name !== old.metadata.name);
    return pods.length === 1 && podReady(pods[0]) ? pods[0] : undefined;
  });
  const lease = await waitFor('the replacement holds the Lease', 60_000, async () => {
    const current = await leaseHolder();
    return current.holder.startsWith(`${replacement.metadata.name}_`) ? current : undefined;
  });
  // The new leader reconciles every CustomApp at start; wait for its reconcile of ours, then a quiet moment.
  await waitFor('the new leader reconciled the CustomApp', 60_000, async () => {
    const logs = await node.kubectlOk(['-n', SYSTEM, 'logs', replacement.metadata.name]);
    return logs.includes('reconcile.end') && logs.includes(`${NS}/${APP}`) ? true : undefined;
  });
  await new Promise((done) => setTimeout(done, 3_000));
  t.deepEqual((await node.replicaSetsOf(NS, APP)).map((rs) => rs.metadata.name).sort(), replicaSets, 'no new ReplicaSet');
  t.is((await deployment()).metadata.generation, generation, 'the Deployment was not changed');
  t.deepEqual(await running(), podsBefore, 'the same pods run');
  t.log(`Lease taken by ${lease.holder}`);
});

onNode(
  'two operator replicas: killing the leader container, another takes over within the lease duration plus a retry period, and no update is lost',
  async (t) => {
    await node.kubectlOk(['-n', SYSTEM, 'scale', `deployment/${OPERATOR}`, '--replicas=2']);
    await node.kubectlOk(['-n', SYSTEM, 'rollout', 'status', `deployment/${OPERATOR}`, '--timeout=180s'], { timeoutMs: 200_000 });
    const leader = await leaseHolder();
    const leaderPod = (await operatorPods()).find((pod) => leader.holder.startsWith(`${pod.metadata.name}_`));
    t.truthy(leaderPod, `a pod holds the Lease (${leader.holder})`);
    const containerId = (leaderPod.status.containerStatuses[0].containerID as string).replace(/^containerd:\/\//, '');
    const before = await deployment();

    const killedAt = Date.now();
    await node.nodeCluster.ctr(['tasks', 'kill', '--signal', 'SIGKILL', containerId]);
    // An update while no one leads: it must not be lost.
    await node.kubectlOk(['-n', NS, 'patch', 'configmap', 'demo-config', '--type=merge', '-p', '{"data":{"A":"three"}}']);
    const lastRenew = (await leaseHolder()).renewTime;
    const taken = await waitFor(
      'another process takes the Lease',
      90_000,
      async () => {
        const current = await leaseHolder();
        return current.holder && current.holder !== leader.holder ? { ...current, at: Date.now() } : undefined;
      },
      { intervalMs: 100 },
    );
    const gapMs = Date.parse(taken.acquireTime!) - Date.parse(lastRenew!);
    // client-go's rule, which ours follows: a candidate takes an unrenewed Lease once leaseDuration has passed since it
    // last saw a change, polling every retryPeriod × [1, 2.2) (2 s here); so at most leaseDuration + 2 polls.
    const boundMs = taken.durationSeconds * 1000 + 2 * 4_400;
    t.true(gapMs <= boundMs, `Lease taken ${gapMs} ms after the last renewal; the bound is ${boundMs} ms`);
    t.true(gapMs >= taken.durationSeconds * 1000 - 1_000, `not taken before it expired (${gapMs} ms)`);
    const newHolderPod = (await operatorPods()).find((pod) => taken.holder.startsWith(`${pod.metadata.name}_`));
    t.truthy(newHolderPod, `a running operator pod holds the Lease (${taken.holder})`);
    t.log(
      `leader container killed; Lease taken by ${newHolderPod?.metadata.name === leaderPod.metadata.name ? "the killed pod's restarted container" : 'the other replica'} ${taken.at - killedAt} ms after the kill, ${gapMs} ms after the last renewal`,
    );

    const elapsed = await rolledOut(killedAt, JSON.stringify(before.spec.template), 'ConfigMap edit during the failover');
    const pods = (await appPods()).filter((pod) => !pod.metadata.deletionTimestamp);
    for (const pod of pods) t.is(await node.envInPod(NS, pod.metadata.name, 'A'), 'three');
    t.log(`the edit made while no one led rolled out ${elapsed} ms after the kill`);
  },
);

onNode(
  'the demo image fails readiness on a config value: with a readiness probe on /healthz, READY=false keeps its pod running un-Ready, READY=true makes it Ready',
  async (t) => {
    // A CustomApp without spec.readinessPath has no readiness probe (a pod is Ready whenever its container runs), so this
    // contract of the demo image is checked on a Deployment of its own that probes /healthz.
    const name = 'readiness-probe';
    await node.applyObjects([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { READY: 'false' } },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace: NS },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: demoImage,
                  envFrom: [{ configMapRef: { name } }],
                  readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1, failureThreshold: 1 },
                },
              ],
            },
          },
        },
      },
    ]);
    const running = await waitFor('the probed pod running', 120_000, async () => {
      const [pod] = await node.podsOf(NS, `app=${name}`);
      return pod?.status?.containerStatuses?.[0]?.state?.running ? pod : undefined;
    });
    // Watched for 8 s at 100 ms: running, never Ready, never restarted.
    let readySeen = false;
    const watchUntil = Date.now() + 8_000;
    while (Date.now() < watchUntil) {
      const [pod] = await node.podsOf(NS, `app=${name}`);
      readySeen ||= podReady(pod);
      await new Promise((done) => setTimeout(done, 100));
    }
    t.false(readySeen, 'never Ready while READY=false');
    const [pod] = await node.podsOf(NS, `app=${name}`);
    t.is(pod.metadata.name, running.metadata.name);
    t.truthy(pod.status.containerStatuses[0].state.running, 'still running');
    t.is(pod.status.containerStatuses[0].restartCount, 0);
    const healthz = await node.cluster.kubectl([
      '-n',
      NS,
      'exec',
      pod.metadata.name,
      '--',
      'wget',
      '-qO-',
      'http://127.0.0.1:8080/healthz',
    ]);
    t.regex(healthz.stderr, /503/, 'its /healthz answers 503');
    t.regex(await node.kubectlOk(['-n', NS, 'exec', pod.metadata.name, '--', 'wget', '-qO-', 'http://127.0.0.1:8080/']), /^READY=false$/m);

    await node.kubectlOk(['-n', NS, 'set', 'env', `deployment/${name}`, 'READY=true']);
    await node.kubectlOk(['-n', NS, 'rollout', 'status', `deployment/${name}`, '--timeout=120s'], { timeoutMs: 130_000 });
    const ready = (await node.podsOf(NS, `app=${name}`)).filter((candidate) => !candidate.metadata.deletionTimestamp);
    t.is(ready.length, 1);
    t.true(podReady(ready[0]), 'Ready once READY=true');
    await node.kubectlOk(['-n', NS, 'delete', 'deployment', name]);
  },
);

onNode('deleting the CustomApp removes its pods, and its finalizer leaves', async (t) => {
  await node.kubectlOk(['-n', NS, 'delete', 'customapp', APP, '--wait=true', '--timeout=120s'], { timeoutMs: 150_000 });
  const gone = await node.nodeCluster.envtest.request('GET', `/apis/app.example.com/v1/namespaces/${NS}/customapps/${APP}`);
  t.is(gone.status, 404, 'the CustomApp is gone: its finalizer left');
  await waitFor(
    'the Deployment and every pod removed',
    120_000,
    async () => {
      const deploymentGone =
        (await node.nodeCluster.envtest.request('GET', `/apis/apps/v1/namespaces/${NS}/deployments/${APP}`)).status === 404;
      return deploymentGone && (await appPods()).length === 0 ? true : undefined;
    },
    { describe: describeApp },
  );
});

onNode(
  "the emulator's simulated Deployment status equals the node's once a rollout settles: created, template changed, scaled",
  async (t) => {
    const emulator = await startCluster('emulator', { emulator: { simulateDeploymentStatus: { readyAfterMs: 1000 } } });
    t.teardown(() => emulator.stop());
    const emulatorKubeconfig = emulator.kubeconfigPath;
    const name = 'status-diff';
    const both = async (args: readonly string[], input?: string): Promise<void> => {
      await node.kubectlOk(args, { input });
      const onEmulator = await runKubectl(emulatorKubeconfig, args, { input, timeoutMs: 200_000 });
      if (onEmulator.code !== 0) throw new Error(`kubectl ${args.join(' ')} on the emulator: ${onEmulator.stderr}`);
    };
    // What both report where the simulation claims to match: counts, the conditions' types, statuses, reasons and
    // messages (the ReplicaSet name's hash is the controller's, not reproduced), and who wrote the status.
    const settled = async (kubeconfig: string): Promise<unknown> => {
      const answer = await runKubectl(kubeconfig, ['-n', 'default', 'get', 'deployment', name, '-o', 'json', '--show-managed-fields']);
      const deployment = JSON.parse(answer.stdout);
      const { conditions, ...counts } = deployment.status;
      return {
        generation: deployment.metadata.generation,
        counts,
        conditions: conditions.map((c: any) => [
          c.type,
          c.status,
          c.reason,
          c.message.replace(`"${name}-`, '"NAME-').replace(/NAME-[a-z0-9]+"/, 'NAME-HASH"'),
        ]),
        statusWriter: deployment.metadata.managedFields
          .filter((entry: any) => entry.subresource === 'status')
          .map((entry: any) => [entry.manager, entry.operation]),
      };
    };
    const compare = async (step: string): Promise<void> => {
      await both(['-n', 'default', 'rollout', 'status', `deployment/${name}`, '--timeout=180s']);
      const [real, simulated] = [await settled(node.cluster.kubeconfigPath), await settled(emulatorKubeconfig)];
      t.deepEqual(simulated, real, step);
      t.log(step, JSON.stringify(real));
    };
    const manifest = (image: string, replicas: number) =>
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace: 'default' },
        spec: {
          replicas,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: 'app', image, env: [{ name: 'STEP', value: String(replicas) }] }] },
          },
        },
      });
    await both(['apply', '-f', '-'], manifest(demoImage, 2));
    await compare('created with 2 replicas');
    await both(['-n', 'default', 'set', 'env', `deployment/${name}`, 'A=changed']);
    await compare('template changed');
    await both(['-n', 'default', 'scale', `deployment/${name}`, '--replicas=3']);
    await compare('scaled to 3');
    await node.kubectlOk(['-n', 'default', 'delete', 'deployment', name]);
  },
);
