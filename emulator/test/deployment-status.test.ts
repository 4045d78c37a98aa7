// The emulator's simulated Deployment status: off by default (as envtest), kwok-like when asked: observed at once,
// ready after the delay, rolled out again on each spec change, never writing a deleted Deployment back.
import test from 'ava';
import { runKubectl } from '../../test/support/cluster.js';
import { simulatedTemplateHash } from '../controllers/deployment-status.js';
import { startEmulator, type Emulator } from '../index.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const READY_AFTER_MS = 1_000;
/** Long enough for kubectl to start and see the rollout in progress on a busy machine. */
const ROLLOUT_MS = 2_500;

async function call(emulator: Emulator, method: string, path: string, body?: unknown, contentType = 'application/json') {
  const response = await fetch(emulator.url + path, {
    method,
    headers: { authorization: `Bearer ${emulator.adminToken}`, 'content-type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

function deployment(name: string, replicas: number, image = 'demo:1') {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
    },
  };
}

const path = (name: string) => `/apis/apps/v1/namespaces/default/deployments/${name}`;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

test('without the option, Deployment status stays {} as on envtest', async (t) => {
  const emulator = await startEmulator({ port: 0 });
  t.teardown(() => emulator.close());
  t.is((await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('plain', 2))).status, 201);
  await sleep(READY_AFTER_MS + 200);
  t.deepEqual((await call(emulator, 'GET', path('plain'))).body.status, {});
});

test('a new Deployment is observed at once with no replica available, and every replica is ready after the delay', async (t) => {
  const emulator = await startEmulator({ port: 0, simulateDeploymentStatus: { readyAfterMs: READY_AFTER_MS } });
  t.teardown(() => emulator.close());
  const created = await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 2));
  t.is(created.status, 201);
  await sleep(50);
  const observed = (await call(emulator, 'GET', path('web'))).body;
  const hash = simulatedTemplateHash(observed.spec.template);
  t.regex(hash, /^[bcdfghjklmnpqrstvwxz2456789]{10}$/);
  t.like(observed.status, { observedGeneration: 1, replicas: 2, updatedReplicas: 2, unavailableReplicas: 2 });
  t.is(observed.status.readyReplicas, undefined);
  t.is(observed.status.availableReplicas, undefined);
  t.deepEqual(
    observed.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message]),
    [
      ['Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'],
      ['Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "web-${hash}" is progressing.`],
    ],
  );
  t.true(
    observed.metadata.managedFields.some((entry: any) => entry.manager === 'kube-controller-manager' && entry.subresource === 'status'),
    'written as the controller, on the status subresource',
  );

  await sleep(READY_AFTER_MS + 200);
  const ready = (await call(emulator, 'GET', path('web'))).body;
  t.deepEqual(
    { ...ready.status, conditions: undefined },
    { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2, conditions: undefined },
  );
  t.deepEqual(
    ready.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message]),
    [
      ['Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'],
      ['Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "web-${hash}" has successfully progressed.`],
    ],
  );
  const progressing = ready.status.conditions[1];
  t.is(progressing.lastTransitionTime, observed.status.conditions[1].lastTransitionTime, 'Progressing stayed True: no transition');
});

test('a template change runs the old replicas beside the new ones until the delay has passed; kubectl rollout status waits for it', async (t) => {
  const emulator = await startEmulator({ port: 0, simulateDeploymentStatus: { readyAfterMs: ROLLOUT_MS } });
  const dir = mkdtempSync(join(tmpdir(), 'emulator-deployment-status-'));
  t.teardown(async () => {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, emulator.adminKubeconfig());
  await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 4));
  await sleep(ROLLOUT_MS + 200);
  const patched = await call(emulator, 'PATCH', path('web'), deployment('web', 4, 'demo:2'), 'application/merge-patch+json');
  t.is(patched.status, 200);
  const started = Date.now();
  const rollout = runKubectl(kubeconfig, ['rollout', 'status', 'deployment/web', '--timeout=30s']);
  await sleep(50);
  const during = (await call(emulator, 'GET', path('web'))).body; // long before ROLLOUT_MS has passed
  t.like(during.status, { observedGeneration: 2, replicas: 8, updatedReplicas: 4, readyReplicas: 4, availableReplicas: 4 });
  t.is(during.status.unavailableReplicas, undefined, 'the old pods keep all four available');
  t.like(during.status.conditions[0], { type: 'Available', status: 'True' });
  t.like(during.status.conditions[1], { type: 'Progressing', reason: 'ReplicaSetUpdated' });
  const result = await rollout;
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /successfully rolled out/);
  t.regex(result.stdout, /old replicas are pending termination/, 'kubectl saw the rollout in progress');
  t.true(Date.now() - started >= ROLLOUT_MS - 100, `kubectl waited for the simulated pods (${Date.now() - started} ms)`);
  const after = (await call(emulator, 'GET', path('web'))).body;
  t.like(after.status.conditions[1], { type: 'Progressing', reason: 'NewReplicaSetAvailable' });
});

test('a change within the delay restarts it, and a Deployment deleted within the delay stays deleted', async (t) => {
  // Timers at 0 + 1500 (cancelled by the change at ~700) and ~700 + 1500: checked at ~1700 (between) and ~2600 (after).
  const delay = 1_500;
  const emulator = await startEmulator({ port: 0, simulateDeploymentStatus: { readyAfterMs: delay } });
  t.teardown(() => emulator.close());
  await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 1));
  await sleep(700);
  await call(emulator, 'PATCH', path('web'), { spec: { replicas: 3 } }, 'application/merge-patch+json');
  await sleep(1_000);
  const midway = (await call(emulator, 'GET', path('web'))).body;
  t.like(midway.status, { observedGeneration: 2, replicas: 3, unavailableReplicas: 3 }, 'the first timer was replaced');
  await sleep(900);
  t.like((await call(emulator, 'GET', path('web'))).body.status, { observedGeneration: 2, readyReplicas: 3, availableReplicas: 3 });

  await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('gone', 1));
  t.is((await call(emulator, 'DELETE', path('gone'))).status, 200);
  await sleep(delay + 300);
  t.is((await call(emulator, 'GET', path('gone'))).status, 404, 'no status write brought it back');
});

test('a scale leaves Progressing as it was, and Available moves last when it changes, as the controller orders them', async (t) => {
  const emulator = await startEmulator({ port: 0, simulateDeploymentStatus: { readyAfterMs: READY_AFTER_MS } });
  t.teardown(() => emulator.close());
  await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 2));
  await sleep(READY_AFTER_MS + 200);
  const before = (await call(emulator, 'GET', path('web'))).body.status.conditions;
  await call(emulator, 'PATCH', path('web'), { spec: { replicas: 3 } }, 'application/merge-patch+json');
  await sleep(50);
  const scaling = (await call(emulator, 'GET', path('web'))).body.status.conditions;
  // 25% of 3 rounds down to 0 unavailable: with 2 of 3 available, Available turns False.
  t.deepEqual(
    scaling.map((c: any) => [c.type, c.status, c.reason]),
    [
      ['Progressing', 'True', 'NewReplicaSetAvailable'],
      ['Available', 'False', 'MinimumReplicasUnavailable'],
    ],
  );
  t.deepEqual(scaling[0], before[1], 'Progressing untouched');
  await sleep(READY_AFTER_MS + 200);
  const settled = (await call(emulator, 'GET', path('web'))).body.status.conditions;
  t.deepEqual(
    settled.map((c: any) => [c.type, c.status, c.reason]),
    [
      ['Progressing', 'True', 'NewReplicaSetAvailable'],
      ['Available', 'True', 'MinimumReplicasAvailable'],
    ],
  );
  t.deepEqual(settled[0], before[1], 'Progressing still untouched');
});
