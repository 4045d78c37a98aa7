// An Argo Rollout's progress read from literal statuses as `kubectl argo rollouts status` reads them, and its reconcile in a fake world.
import test from 'ava';
import type { CoreEvent, PodTemplate } from '../kube/objects.js';
import { EVENTS } from '../kube/resources.js';
import { FakeWorld } from '../reconcile/testing/fake-world.js';
import { type ArgoRollout, argoRolloutProgress, ROLLOUTS } from './argo-rollout.js';
import { lastWorkloadRollout } from './last-rollout.js';

const rollout = (status: ArgoRollout['status'], spec: Partial<ArgoRollout['spec']> = {}, generation = 3): ArgoRollout => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Rollout',
  metadata: { name: 'web', namespace: 'ns', generation },
  spec: { template: { spec: { containers: [] } }, ...spec },
  status,
});

test("progress: the generation observed first, then an unpause under way, then the controller's phase", (t) => {
  const phase = (status: ArgoRollout['status'], spec?: Partial<ArgoRollout['spec']>) => argoRolloutProgress(rollout(status, spec));
  t.is(phase(undefined).phase, 'InProgress', 'no controller has looked at it');
  t.is(phase({ observedGeneration: '2', phase: 'Healthy' }).phase, 'InProgress', 'an older generation observed');
  t.is(phase({ observedGeneration: '4', phase: 'Healthy' }).phase, 'Succeeded', 'a newer one counts as observed (Argo: >)');
  t.is(phase({ observedGeneration: '5d8f7c9b6', phase: 'Healthy' }).phase, 'Succeeded', 'a pre-0.10 hash counts as observed');
  t.deepEqual(phase({ observedGeneration: '3', phase: 'Paused', controllerPause: true, pauseConditions: [] }), {
    phase: 'InProgress',
    message: 'waiting for rollout to unpause',
  });
  t.deepEqual(phase({ observedGeneration: '3', phase: 'Healthy' }), { phase: 'Succeeded' });
  t.deepEqual(phase({ observedGeneration: '3', phase: 'Progressing', message: 'more replicas need to be updated' }), {
    phase: 'InProgress',
    message: 'more replicas need to be updated',
  });
  t.deepEqual(phase({ observedGeneration: '3', phase: 'Degraded', message: 'RolloutAborted: Rollout aborted update to revision 2' }), {
    phase: 'Failed',
    message: 'RolloutAborted: Rollout aborted update to revision 2',
  });
  t.deepEqual(
    phase({
      observedGeneration: '3',
      phase: 'Paused',
      message: 'CanaryPauseStep',
      controllerPause: true,
      pauseConditions: [{ reason: 'CanaryPauseStep', startTime: '2026-12-01T15:00:00Z' }],
    }),
    { phase: 'Paused', message: 'CanaryPauseStep; `kubectl argo rollouts promote web` resumes it' },
    'a canary step pauses by design',
  );
});

test('progress without a phase (an Argo controller older than 1.0): spec.paused and pause conditions still say Paused', (t) => {
  t.deepEqual(argoRolloutProgress(rollout({ observedGeneration: '3' }, { paused: true })), {
    phase: 'Paused',
    message: 'manually paused; `kubectl argo rollouts resume web` resumes it',
  });
  t.like(argoRolloutProgress(rollout({ observedGeneration: '3', pauseConditions: [{ reason: 'BlueGreenPause' }] })), {
    phase: 'Paused',
  });
  t.is(argoRolloutProgress(rollout({ observedGeneration: '3' })).phase, 'InProgress');
});

const USES: Partial<PodTemplate['spec']> = {
  containers: [{ name: 'app', image: 'app:1', envFrom: [{ configMapRef: { name: 'app-config' } }] }],
};
const AUTO = { 'reloader.stakater.com/auto': 'true' };
const stored = (world: FakeWorld): ArgoRollout => world.client.stored<ArgoRollout>(ROLLOUTS, 'ns', 'web')!;
/** Plays the Argo Rollouts controller: `status` observing the Rollout's generation now. */
function argoSays(world: FakeWorld, status: Omit<NonNullable<ArgoRollout['status']>, 'observedGeneration'>): void {
  const live = stored(world);
  world.client.seed(ROLLOUTS, { ...live, status: { ...status, observedGeneration: String(live.metadata.generation) } });
  world.sync();
}

/** A world with app-config (V=1), the Rollout `web` opted in and reconciled (its baseline), then V=2 rolled out. */
async function rolledOut(): Promise<FakeWorld> {
  const world = new FakeWorld({ maxConcurrentRollouts: 1, flapThreshold: 0, flapWindowMs: 60_000 });
  world.configMap('app-config', { V: '1' });
  world.workload('Rollout', 'web', AUTO, USES);
  await world.reconcileWorkloadAndSync('Rollout', 'web');
  world.configMap('app-config', { V: '2' });
  await world.reconcileWorkloadAndSync('Rollout', 'web');
  return world;
}

test('a Rollout paused at a canary step occupies no slot and has not ended; Healthy, it succeeded', async (t) => {
  const world = await rolledOut();
  t.deepEqual(world.governance.budget.snapshot().inProgress, ['Rollout/ns/web'], 'the rollout of ours takes the slot');
  argoSays(world, { phase: 'Paused', message: 'CanaryPauseStep', controllerPause: true, pauseConditions: [{ reason: 'CanaryPauseStep' }] });
  await world.reconcileWorkloadAndSync('Rollout', 'web');
  t.deepEqual(world.governance.budget.snapshot().inProgress, [], 'a canary pause may wait for a promotion for ever');
  t.like(lastWorkloadRollout(stored(world)), { result: 'InProgress' });
  t.deepEqual(world.restart().budget.snapshot().inProgress, [], 'nor after a restart');
  argoSays(world, { phase: 'Progressing' });
  await world.reconcileWorkload('Rollout', 'web');
  t.deepEqual(world.governance.budget.snapshot().inProgress, ['Rollout/ns/web'], 'promoted, it counts again');
  argoSays(world, { phase: 'Healthy' });
  await world.reconcileWorkloadAndSync('Rollout', 'web');
  t.like(lastWorkloadRollout(stored(world)), { result: 'Succeeded' });
  t.deepEqual(world.governance.budget.snapshot().inProgress, []);
});

test("a Degraded Rollout (aborted): last-rollout Failed with Argo's message", async (t) => {
  const world = await rolledOut();
  argoSays(world, { phase: 'Degraded', message: 'RolloutAborted: Rollout aborted update to revision 2' });
  await world.reconcileWorkloadAndSync('Rollout', 'web');
  t.like(lastWorkloadRollout(stored(world)), { result: 'Failed', message: 'RolloutAborted: Rollout aborted update to revision 2' });
});

test('a Rollout with spec.workloadRef: one Warning naming the Deployment to annotate, nothing acquired or written to it', async (t) => {
  const world = new FakeWorld();
  world.configMap('app-config', { V: '1' });
  world.client.seed(ROLLOUTS, {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name: 'web', namespace: 'ns', annotations: AUTO },
    spec: { workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web-base' } },
  });
  world.sync();
  await world.reconcileWorkload('Rollout', 'web');
  await world.reconcileWorkload('Rollout', 'web');
  t.deepEqual(world.dependencies.watched(), []);
  t.deepEqual(
    world.writes().filter((line) => !line.startsWith('event')),
    [],
  );
  const events = world.client
    .all<CoreEvent>(EVENTS)
    .map((event) => `${event.type} ${event.reason}: ${event.message}`)
    .join('\n');
  t.regex(events, /^Warning ReloadAnnotationInvalid: .*uses spec\.workloadRef .*annotate Deployment "web-base" instead/);
  t.is(events.split('\n').length, 1, 'posted once');
});
