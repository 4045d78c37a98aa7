// The emulator's simulated Deployment status: off by default (as envtest), kwok-like when asked: observed at once,
// ready after the delay, rolled out again on each spec change, never writing a deleted Deployment back.
import test from 'ava';
import { runKubectl } from '../../test/support/targets.js';
import { eventually } from '../../test/support/eventually.js';
import { simulatedTemplateHash } from '../controllers/deployment-status.js';
import { startEmulator, type Emulator } from '../index.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const READY_AFTER_MS = 1_000;
/** Long enough for kubectl to start and see the rollout in progress on a busy machine. */
const ROLLOUT_MS = 4_000;

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

/** The conditions as rows of the fields compared (type, status and reason unless told). */
const rows = (conditions: any[], fields = ['type', 'status', 'reason']): unknown[][] =>
  conditions.map((condition) => fields.map((field) => condition[field]));
const WITH_MESSAGE = ['type', 'status', 'reason', 'message'];

/**
 * Waits until the Deployment `name`'s status matches `expected` (a partial status), and answers the Deployment and
 * when that was first seen. The simulator's timers are real (startEmulator injects none), so the tests await what
 * they wait for, and measure the delays they check.
 */
async function statusReaches(emulator: Emulator, name: string, expected: Record<string, unknown>, what: string) {
  const deployment = await eventually(
    `${name}: ${what}`,
    async () => {
      const { body } = await call(emulator, 'GET', path(name));
      return Object.entries(expected).every(([field, value]) => body.status?.[field] === value) && body;
    },
    15_000,
    25,
  );
  return { deployment, seenAt: performance.now() };
}

test('without the option, Deployment status stays {} as on envtest', async (t) => {
  const emulator = await startEmulator({ port: 0 });
  // Beside it, the same Deployment on a simulating emulator: once that one is ready, the plain one would be too.
  const simulating = await startEmulator({ port: 0, simulateDeploymentStatus: { readyAfterMs: READY_AFTER_MS } });
  t.teardown(() => Promise.all([emulator.close(), simulating.close()]));
  for (const each of [emulator, simulating])
    t.is((await call(each, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('plain', 2))).status, 201);
  await statusReaches(simulating, 'plain', { readyReplicas: 2 }, 'ready where simulated');
  t.deepEqual((await call(emulator, 'GET', path('plain'))).body.status, {});
});

test('a new Deployment is observed at once with no replica available, and every replica is ready after the delay', async (t) => {
  const emulator = await startEmulator({ port: 0, simulateDeploymentStatus: { readyAfterMs: READY_AFTER_MS } });
  t.teardown(() => emulator.close());
  const createdAt = performance.now();
  const created = await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 2));
  t.is(created.status, 201);
  const { deployment: observed } = await statusReaches(emulator, 'web', { observedGeneration: 1 }, 'observed');
  const hash = simulatedTemplateHash(observed.spec.template);
  t.regex(hash, /^[bcdfghjklmnpqrstvwxz2456789]{10}$/);
  t.like(observed.status, { observedGeneration: 1, replicas: 2, updatedReplicas: 2, unavailableReplicas: 2 });
  t.is(observed.status.readyReplicas, undefined);
  t.is(observed.status.availableReplicas, undefined);
  t.deepEqual(rows(observed.status.conditions, WITH_MESSAGE), [
    ['Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'],
    ['Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "web-${hash}" is progressing.`],
  ]);
  t.true(
    observed.metadata.managedFields.some((entry: any) => entry.manager === 'kube-controller-manager' && entry.subresource === 'status'),
    'written as the controller, on the status subresource',
  );

  const { deployment: ready, seenAt } = await statusReaches(emulator, 'web', { readyReplicas: 2 }, 'ready');
  t.true(seenAt - createdAt >= READY_AFTER_MS, `ready after the delay (${Math.round(seenAt - createdAt)} ms)`);
  t.deepEqual(
    { ...ready.status, conditions: undefined },
    { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2, conditions: undefined },
  );
  t.deepEqual(rows(ready.status.conditions, WITH_MESSAGE), [
    ['Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'],
    ['Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "web-${hash}" has successfully progressed.`],
  ]);
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
  await statusReaches(emulator, 'web', { availableReplicas: 4 }, 'every replica available');
  const patched = await call(emulator, 'PATCH', path('web'), deployment('web', 4, 'demo:2'), 'application/merge-patch+json');
  t.is(patched.status, 200);
  const started = Date.now();
  const rollout = runKubectl(kubeconfig, ['rollout', 'status', 'deployment/web', '--timeout=30s']);
  const { deployment: during } = await statusReaches(emulator, 'web', { observedGeneration: 2 }, 'the change observed');
  t.true(Date.now() - started < ROLLOUT_MS, 'read long before the simulated pods are ready');
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
  const delay = 1_500;
  const emulator = await startEmulator({ port: 0, simulateDeploymentStatus: { readyAfterMs: delay } });
  t.teardown(() => emulator.close());
  const createdAt = performance.now();
  await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 1));
  await statusReaches(emulator, 'web', { observedGeneration: 1 }, 'observed');
  const changedAt = performance.now();
  await call(emulator, 'PATCH', path('web'), { spec: { replicas: 3 } }, 'application/merge-patch+json');
  t.true(changedAt - createdAt < delay, `changed within the delay (${Math.round(changedAt - createdAt)} ms after the creation)`);
  const { deployment: midway } = await statusReaches(emulator, 'web', { observedGeneration: 2 }, 'the change observed');
  t.like(midway.status, { replicas: 3, unavailableReplicas: 3 });
  const { deployment: ready, seenAt } = await statusReaches(emulator, 'web', { observedGeneration: 2, readyReplicas: 3 }, 'ready');
  t.like(ready.status, { availableReplicas: 3 });
  t.true(seenAt - changedAt >= delay, `the delay restarted at the change (ready ${Math.round(seenAt - changedAt)} ms after it)`);

  const goneAt = performance.now();
  await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('gone', 1));
  t.is((await call(emulator, 'DELETE', path('gone'))).status, 200);
  // A third Deployment created after it: once that one is ready, the deleted one's timer has fired too.
  await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('later', 1));
  const { seenAt: laterReady } = await statusReaches(emulator, 'later', { readyReplicas: 1 }, 'ready');
  t.true(laterReady - goneAt >= delay);
  t.is((await call(emulator, 'GET', path('gone'))).status, 404, 'no status write brought it back');
});

test('a scale leaves Progressing as it was, and Available moves last when it changes, as the controller orders them', async (t) => {
  const emulator = await startEmulator({ port: 0, simulateDeploymentStatus: { readyAfterMs: READY_AFTER_MS } });
  t.teardown(() => emulator.close());
  await call(emulator, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 2));
  const before = (await statusReaches(emulator, 'web', { readyReplicas: 2 }, 'ready')).deployment.status.conditions;
  await call(emulator, 'PATCH', path('web'), { spec: { replicas: 3 } }, 'application/merge-patch+json');
  const scaling = (await statusReaches(emulator, 'web', { observedGeneration: 2 }, 'the scale observed')).deployment.status.conditions;
  // 25% of 3 rounds down to 0 unavailable: with 2 of 3 available, Available turns False.
  t.deepEqual(rows(scaling), [
    ['Progressing', 'True', 'NewReplicaSetAvailable'],
    ['Available', 'False', 'MinimumReplicasUnavailable'],
  ]);
  t.deepEqual(scaling[0], before[1], 'Progressing untouched');
  const settled = (await statusReaches(emulator, 'web', { readyReplicas: 3 }, 'ready at the new scale')).deployment.status.conditions;
  t.deepEqual(rows(settled), [
    ['Progressing', 'True', 'NewReplicaSetAvailable'],
    ['Available', 'True', 'MinimumReplicasAvailable'],
  ]);
  t.deepEqual(settled[0], before[1], 'Progressing still untouched');
});
