// The reconcile with the rollout governance on, in a fake world: the budget's queue, spec changes, the flap breaker,
// pause, debounce, failed rollouts, Ready during a rollout, and a restart that rebuilds the queue.
import test from 'ava';
import { CONFIG_HASH_ANNOTATION, ROLLOUT_ANNOTATION, SECRET_HASH_ANNOTATION } from '../../api/customapp.js';
import type { CustomApp } from '../customapp/custom-app.js';
import { CUSTOM_APPS } from '../customapp/custom-app.js';
import { contentHash } from '../dependencies/content-hash.js';
import type { RolloutSettings } from '../governance/governance.js';
import { rolloutCause } from '../governance/rollout-cause.js';
import type { Deployment } from '../kube/objects.js';
import { DEPLOYMENTS, EVENTS, SERVICES } from '../kube/resources.js';
import { ApiError } from '../kube/errors.js';
import { FakeWorld } from './testing/fake-world.js';

const hash = (value: string): string => FakeWorld.hash({ V: value });
const deploymentOf = (world: FakeWorld, name: string): Deployment => world.client.stored<Deployment>(DEPLOYMENTS, 'ns', name)!;
const appOf = (world: FakeWorld, name: string): CustomApp => world.client.stored<CustomApp>(CUSTOM_APPS, 'ns', name)!;
const running = (world: FakeWorld, name: string): string | undefined =>
  deploymentOf(world, name).spec.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION];
const ready = (world: FakeWorld, name: string): string => {
  const found = appOf(world, name).status?.conditions?.find((condition) => condition.type === 'Ready');
  return `${found?.status} ${found?.reason}`;
};
const readyMessage = (world: FakeWorld, name: string): string =>
  appOf(world, name).status?.conditions?.find((condition) => condition.type === 'Ready')?.message ?? '';
/** How many times the Deployment's pod template was rolled by an update (each one moves its generation). */
const rollouts = (world: FakeWorld, name: string): number =>
  world.client.calls.filter(
    (call) =>
      call.verb === 'update' &&
      call.resource === 'deployments.apps' &&
      call.key === `ns/${name}` &&
      (call.body as Deployment).metadata.annotations?.[ROLLOUT_ANNOTATION] !== undefined &&
      rolloutCause(call.body as Deployment)?.trigger !== undefined,
  ).length;

/** Moves the world's clock on. */
const advance = (world: FakeWorld, ms: number): void => {
  world.now = new Date(world.now.getTime() + ms);
};

/** Apps sharing ConfigMap `shared` (V=1), created, their first rollout done and recorded: every app Ready. */
async function settled(names: readonly string[], rollouts: RolloutSettings, spec: Partial<CustomApp['spec']> = {}): Promise<FakeWorld> {
  const world = new FakeWorld(rollouts);
  world.configMap('shared', { V: '1' });
  for (const name of names) world.app(name, { image: 'example/app:1', configMapName: 'shared', ...spec });
  for (const name of names) await world.reconcile(name);
  world.sync();
  for (const name of names) {
    world.settleDeployment(name, 'Succeeded');
    advance(world, 1);
    await world.reconcile(name);
    world.sync();
  }
  return world;
}

/**
 * Apps a and b on a budget of 1 (`settled`), then ConfigMap `shared` edited to V=2 and both reconciled: a rolls, b
 * waits in the queue. `eligible` records what the budget lets go from then on.
 */
async function contended(): Promise<{ world: FakeWorld; eligible: string[] }> {
  const world = await settled(['a', 'b'], { maxConcurrentRollouts: 1, flapThreshold: 0 });
  const eligible: string[] = [];
  world.governance.eligible.subscribe((key) => eligible.push(key));
  world.configMap('shared', { V: '2' });
  await reconcileAll(world, ['a', 'b']);
  return { world, eligible };
}

/** Reconciles each name once, syncing after each (as the informers would), and answers the results. */
async function reconcileAll(world: FakeWorld, names: readonly string[]): Promise<unknown[]> {
  const results: unknown[] = [];
  for (const name of names) {
    advance(world, 1);
    results.push(await world.reconcile(name));
    world.sync();
  }
  return results;
}

test('an app is Ready only once its rollout completed: in progress it says RolloutInProgress, then Ready, and lastRollout follows', async (t) => {
  const world = new FakeWorld({ maxConcurrentRollouts: 1, flapThreshold: 0 });
  world.configMap('shared', { V: '1' });
  world.app('a', { image: 'example/app:1', configMapName: 'shared', replicas: 2 });
  await world.reconcile('a');
  world.sync();
  t.is(ready(world, 'a'), 'False RolloutInProgress');
  t.like(appOf(world, 'a').status?.lastRollout, { trigger: 'Spec', generation: 1, result: 'InProgress' });
  world.settleDeployment('a', 'Succeeded');
  await world.reconcile('a');
  world.sync();
  t.is(ready(world, 'a'), 'True Ready');
  t.like(appOf(world, 'a').status?.lastRollout, { trigger: 'Spec', result: 'Succeeded', completionTime: '2026-11-30T12:00:00Z' });
  // A pod that later turns un-Ready is not a rollout: the replicas say so, and lastRollout stays Succeeded.
  const live = deploymentOf(world, 'a');
  world.client.seed(DEPLOYMENTS, { ...live, status: { ...live.status, readyReplicas: 1, availableReplicas: 1 } });
  world.sync();
  await world.reconcile('a');
  world.sync();
  t.is(ready(world, 'a'), 'False ReplicasNotReady');
  t.like(appOf(world, 'a').status?.lastRollout, { result: 'Succeeded' });
});

test('budget 1: the second app waits RolloutQueued with its position and an Event; a slot freed lets it go once, to the latest content', async (t) => {
  const world = await settled(['a', 'b', 'c'], { maxConcurrentRollouts: 1, flapThreshold: 0 });
  const eligible: string[] = [];
  world.governance.eligible.subscribe((key) => eligible.push(key));
  const before = { a: rollouts(world, 'a'), b: rollouts(world, 'b'), c: rollouts(world, 'c') };

  world.configMap('shared', { V: '2' });
  await reconcileAll(world, ['a', 'b', 'c']);
  t.is(running(world, 'a'), hash('2'), 'a took the one slot');
  t.is(running(world, 'b'), hash('1'));
  t.is(running(world, 'c'), hash('1'));
  t.is(ready(world, 'b'), 'False RolloutQueued');
  t.regex(
    readyMessage(world, 'b'),
    /waits for a slot of the rollout budget \(--max-concurrent-rollouts=1, all in use\): position 1 in the queue/,
  );
  t.regex(readyMessage(world, 'c'), /position 2 in the queue/);
  t.like(appOf(world, 'b').status?.pendingRollout, {
    reason: 'Queued',
    trigger: 'ConfigMap',
    name: 'shared',
    fromHash: hash('1'),
    toHash: hash('2'),
  });
  t.true(
    world
      .events('b')
      .some((event) =>
        /^RolloutQueued: Rollout of ConfigMap "shared" \w+→\w+ queued at position 1 of 1: 1 of 1 rollouts in progress/.test(event),
      ),
  );
  t.like(appOf(world, 'a').status?.lastRollout, {
    trigger: 'ConfigMap',
    name: 'shared',
    fromHash: hash('1'),
    toHash: hash('2'),
    result: 'InProgress',
  });

  // Two more edits while they wait: the queued apps will roll once, to the latest.
  world.configMap('shared', { V: '3' });
  await reconcileAll(world, ['a', 'b', 'c']);
  world.configMap('shared', { V: '4' });
  await reconcileAll(world, ['a', 'b', 'c']);
  t.is(running(world, 'a'), hash('2'), "a's new content waits for its own rollout to end");
  t.like(appOf(world, 'a').status?.pendingRollout, { reason: 'Queued', toHash: hash('4') });
  t.like(appOf(world, 'b').status?.pendingRollout, { reason: 'Queued', toHash: hash('4') });
  t.deepEqual(eligible, []);

  world.settleDeployment('a', 'Succeeded');
  await reconcileAll(world, ['a']);
  t.deepEqual(eligible, ['ns/b'], 'the slot a freed goes to the head of the queue, b, and a queues behind c');
  t.is(running(world, 'a'), hash('2'));
  await reconcileAll(world, ['b', 'c']);
  t.is(running(world, 'b'), hash('4'));
  t.is(running(world, 'c'), hash('1'));

  world.settleDeployment('b', 'Succeeded');
  await reconcileAll(world, ['b']);
  t.deepEqual(eligible, ['ns/b', 'ns/c']);
  await reconcileAll(world, ['c', 'a']);
  world.settleDeployment('c', 'Succeeded');
  await reconcileAll(world, ['c']);
  t.deepEqual(eligible, ['ns/b', 'ns/c', 'ns/a']);
  await reconcileAll(world, ['a']);
  world.settleDeployment('a', 'Succeeded');
  await reconcileAll(world, ['a', 'b', 'c']);
  for (const name of ['a', 'b', 'c']) {
    t.is(running(world, name), hash('4'), `${name} runs the latest content`);
    t.is(ready(world, name), 'True Ready', name);
    t.is(appOf(world, name).status?.pendingRollout, undefined);
  }
  t.deepEqual(
    { a: rollouts(world, 'a') - before.a, b: rollouts(world, 'b') - before.b, c: rollouts(world, 'c') - before.c },
    { a: 2, b: 1, c: 1 },
    'b and c rolled once through three edits; a twice (2, then the latest)',
  );
  t.is(world.governance.budget.inProgress, 0);
});

test('a spec change is never queued: it rolls at once with the latest content, with trigger Spec', async (t) => {
  const world = await settled(['a', 'b'], { maxConcurrentRollouts: 1, flapThreshold: 0 });
  world.configMap('shared', { V: '2' });
  await reconcileAll(world, ['a', 'b']);
  t.is(ready(world, 'b'), 'False RolloutQueued');
  const app = appOf(world, 'b');
  world.client.seed(CUSTOM_APPS, { ...app, spec: { ...app.spec, image: 'example/app:2' }, metadata: { ...app.metadata, generation: 2 } });
  world.sync();
  await reconcileAll(world, ['b']);
  const live = deploymentOf(world, 'b');
  t.is(live.spec.template.spec.containers[0]!.image, 'example/app:2');
  t.is(running(world, 'b'), hash('2'), 'the latest content rolls with the spec');
  t.like(appOf(world, 'b').status?.lastRollout, { trigger: 'Spec', generation: 2, result: 'InProgress' });
  t.is(appOf(world, 'b').status?.pendingRollout, undefined);
  t.is(world.governance.budget.inProgress, 1, 'a spec rollout occupies no slot: only a');
});

test('a change of replicas alone while queued is written at once, without the queued content', async (t) => {
  const world = await settled(['a', 'b'], { maxConcurrentRollouts: 1, flapThreshold: 0 });
  world.configMap('shared', { V: '2' });
  await reconcileAll(world, ['a', 'b']);
  const app = appOf(world, 'b');
  world.client.seed(CUSTOM_APPS, { ...app, spec: { ...app.spec, replicas: 3 }, metadata: { ...app.metadata, generation: 2 } });
  world.sync();
  await reconcileAll(world, ['b']);
  t.is(deploymentOf(world, 'b').spec.replicas, 3);
  t.is(running(world, 'b'), hash('1'));
  t.is(ready(world, 'b'), 'False RolloutQueued');
});

test('flapping: more than the threshold of changes within the window hold the rollout, say so once, and roll once to the latest when quiet', async (t) => {
  const world = await settled(['a'], { maxConcurrentRollouts: 10, flapThreshold: 2, flapWindowMs: 10_000 });
  const first = rollouts(world, 'a');
  for (const value of ['2', '3', '4', '5']) {
    advance(world, 500);
    world.configMap('shared', { V: value });
    world.sync();
  }
  const result = await world.reconcile('a');
  world.sync();
  t.deepEqual(result, { requeueAfterMs: 10_000 }, 'looked at again when the ConfigMap will have been quiet for the window');
  t.is(running(world, 'a'), hash('1'));
  t.is(ready(world, 'a'), 'False Flapping');
  t.regex(readyMessage(world, 'a'), /ConfigMap "shared" is flapping: 4 content changes within 10s \(more than 2\)/);
  t.like(appOf(world, 'a').status?.pendingRollout, { reason: 'Flapping', name: 'shared', toHash: hash('5') });
  const held = world.events('a').filter((event) => event.startsWith('RolloutHeld'));
  t.deepEqual(held, [
    'RolloutHeld: ConfigMap "shared" is flapping: 4 content changes within 10s (more than 2); the rollout is held until it has not changed for 10s',
  ]);

  advance(world, 5_000);
  world.configMap('shared', { V: '6' });
  t.deepEqual(await world.reconcile('a'), { requeueAfterMs: 10_000 });
  world.sync();
  t.is(world.events('a').filter((event) => event.startsWith('RolloutHeld')).length, 1, 'one Event per hold, not per change');
  advance(world, 10_000);
  t.deepEqual(await world.reconcile('a'), {});
  world.sync();
  t.is(running(world, 'a'), hash('6'));
  t.is(rollouts(world, 'a') - first, 1, 'rolled once, to the latest content');
  t.like(appOf(world, 'a').status?.lastRollout, { trigger: 'ConfigMap', toHash: hash('6') });
});

test('paused: content changes wait with the latest tracked in status; unpausing rolls once', async (t) => {
  const world = new FakeWorld({ maxConcurrentRollouts: 10, flapThreshold: 0 });
  world.configMap('shared', { V: '1' });
  world.app('a', { image: 'example/app:1', configMapName: 'shared', rollout: { paused: true } });
  await world.reconcile('a');
  world.sync();
  t.is(running(world, 'a'), hash('1'), 'a creation is a spec rollout: pause does not stop it');
  for (const value of ['2', '3']) {
    world.configMap('shared', { V: value });
    t.deepEqual(await world.reconcile('a'), {}, 'no requeue: the spec change that unpauses queues it');
    world.sync();
  }
  t.is(running(world, 'a'), hash('1'));
  t.is(ready(world, 'a'), 'False RolloutPaused');
  t.like(appOf(world, 'a').status?.pendingRollout, { reason: 'Paused', toHash: hash('3') });
  t.deepEqual(
    world.events('a').filter((event) => event.startsWith('RolloutPaused')),
    [`RolloutPaused: Rollout of ConfigMap "shared" ${hash('1').slice(0, 12)}→${hash('2').slice(0, 12)} paused by spec.rollout.paused`],
  );
  const app = appOf(world, 'a');
  world.client.seed(CUSTOM_APPS, {
    ...app,
    spec: { ...app.spec, rollout: { paused: false } },
    metadata: { ...app.metadata, generation: 2 },
  });
  world.sync();
  await world.reconcile('a');
  world.sync();
  t.is(running(world, 'a'), hash('3'));
  t.like(appOf(world, 'a').status?.lastRollout, { trigger: 'ConfigMap', fromHash: hash('1'), toHash: hash('3') });
});

test('debounce: the rollout waits until the content has not changed for debounceSeconds, then rolls once', async (t) => {
  const world = new FakeWorld({ maxConcurrentRollouts: 10, flapThreshold: 0 });
  world.configMap('shared', { V: '1' });
  world.app('a', { image: 'example/app:1', configMapName: 'shared', rollout: { debounceSeconds: 5 } });
  await world.reconcile('a');
  world.sync();
  world.settleDeployment('a', 'Succeeded');
  world.configMap('shared', { V: '2' });
  t.deepEqual(await world.reconcile('a'), { requeueAfterMs: 5_000 });
  world.sync();
  t.is(ready(world, 'a'), 'False RolloutDebouncing');
  advance(world, 3_000);
  world.configMap('shared', { V: '3' });
  t.deepEqual(await world.reconcile('a'), { requeueAfterMs: 5_000 });
  world.sync();
  advance(world, 4_000);
  t.deepEqual(await world.reconcile('a'), { requeueAfterMs: 1_000 }, 'the trigger came early: the rest of the quiet time');
  world.sync();
  t.is(running(world, 'a'), hash('1'));
  advance(world, 1_000);
  t.deepEqual(await world.reconcile('a'), {});
  world.sync();
  t.is(running(world, 'a'), hash('3'));
});

test('a failed rollout: Ready=False RolloutFailed naming the change, one Event, lastRollout Failed, and its slot is free', async (t) => {
  const { world, eligible } = await contended();
  world.settleDeployment('a', 'Failed');
  await reconcileAll(world, ['a']);
  const change = `ConfigMap "shared" ${hash('1').slice(0, 12)}→${hash('2').slice(0, 12)}`;
  t.is(ready(world, 'a'), 'False RolloutFailed');
  t.is(readyMessage(world, 'a'), `the rollout of ${change} failed: ReplicaSet "a-x" has timed out progressing.`);
  t.like(appOf(world, 'a').status?.lastRollout, {
    trigger: 'ConfigMap',
    name: 'shared',
    toHash: hash('2'),
    result: 'Failed',
    message: `${change}: ReplicaSet "a-x" has timed out progressing.`,
  });
  t.truthy(appOf(world, 'a').status?.lastRollout?.completionTime);
  t.deepEqual(
    world.events('a').filter((event) => event.startsWith('RolloutFailed')),
    [`RolloutFailed: The rollout of ${change} failed: ReplicaSet "a-x" has timed out progressing.`],
  );
  t.deepEqual(eligible, ['ns/b'], 'a failed rollout is over: its slot goes to the next');
  const calls = world.client.calls.length;
  await reconcileAll(world, ['a']);
  t.is(world.client.calls.length, calls, 'a rerun writes nothing and records no second Event');
});

test('a restart rebuilds the queue in its order from status and the slots from the Deployments: nothing dropped, nothing rolled twice', async (t) => {
  const world = await settled(['a', 'b', 'c', 'd'], { maxConcurrentRollouts: 1, flapThreshold: 0 });
  world.configMap('shared', { V: '2' });
  await reconcileAll(world, ['c', 'a', 'd', 'b']);
  t.is(running(world, 'c'), hash('2'));
  const order = ['a', 'd', 'b'].map((name) => readyMessage(world, name).match(/position (\d) in the queue/)?.[1]);
  t.deepEqual(order, ['1', '2', '3']);

  const rebuilt = world.restart();
  t.deepEqual(rebuilt.budget.snapshot().inProgress, ['ns/c'], 'c is still rolling, by its Deployment');
  t.deepEqual(
    rebuilt.budget.snapshot().queue.map((entry) => entry.key),
    ['ns/a', 'ns/d', 'ns/b'],
    'the queue in the order of pendingRollout.since',
  );
  const eligible: string[] = [];
  rebuilt.eligible.subscribe((key) => eligible.push(key));
  const calls = world.client.calls.length;
  // Every app is reconciled after a restart, in any order: none may pass the queue, and nothing changes.
  await reconcileAll(world, ['b', 'd', 'a', 'c']);
  t.deepEqual(world.writes(calls), [], 'the restart wrote nothing: same positions, same since');
  world.settleDeployment('c', 'Succeeded');
  await reconcileAll(world, ['c']);
  t.deepEqual(eligible, ['ns/a']);
  await reconcileAll(world, ['b', 'd', 'a']);
  t.deepEqual(
    ['a', 'b', 'c', 'd'].map((name) => running(world, name)),
    [hash('2'), hash('1'), hash('2'), hash('1')],
  );
});

test('the upgrade from unkeyed Secret hashes is no content change (nothing queued), and the next Secret change names no plain hash', async (t) => {
  const world = new FakeWorld({ maxConcurrentRollouts: 1, flapThreshold: 0 });
  world.configMap('config', { V: '1' });
  world.secret('creds', { TOKEN: 't' });
  world.app('app', { image: 'example/app:1', configMapName: 'config', secretName: 'creds' });
  await world.reconcile('app');
  world.settleDeployment('app', 'Succeeded');
  await world.reconcile('app');
  world.sync();
  // An operator before keyed hashes wrote the plain SHA-256 of the Secret's content.
  const plain = contentHash({ data: { TOKEN: 't' } });
  world.annotateTemplate('app', { [SECRET_HASH_ANNOTATION]: plain });
  world.sync();
  const calls = world.client.calls.length;
  await world.reconcile('app');
  world.sync();
  t.deepEqual(world.writes(calls), [], 'no rollout, nothing queued, nothing to write');
  t.is(appOf(world, 'app').status?.pendingRollout, undefined);

  world.secret('creds', { TOKEN: 'u' });
  await world.reconcile('app');
  world.sync();
  t.is(
    deploymentOf(world, 'app').spec.template.metadata?.annotations?.[SECRET_HASH_ANNOTATION],
    FakeWorld.secretHash({ TOKEN: 'u' }, 'creds'),
  );
  t.like(appOf(world, 'app').status?.lastRollout, {
    trigger: 'Secret',
    name: 'creds',
    toHash: FakeWorld.secretHash({ TOKEN: 'u' }, 'creds'),
  });
  t.is(appOf(world, 'app').status?.lastRollout?.fromHash, undefined, 'the plain hash the pods ran with is not written');
  const everything = JSON.stringify([appOf(world, 'app'), deploymentOf(world, 'app').metadata, world.client.all(EVENTS)]);
  t.false(everything.includes(plain.slice(0, 12)), 'no plain digits in the status, the cause annotation or an Event');
});

test("a Service step that keeps failing does not keep the slot: the budget settles from the Deployment's rollout alone", async (t) => {
  const world = await settled(['a', 'b'], { maxConcurrentRollouts: 1, flapThreshold: 0 }, { port: 8080 });
  const eligible: string[] = [];
  world.governance.eligible.subscribe((key) => eligible.push(key));
  // The Service is deleted and its re-creation refused, as a quota of 0 Services would.
  await world.client.delete(SERVICES, 'ns', 'a');
  world.sync();
  world.client.failEvery(
    (call) => call.verb === 'create' && call.resource === 'services' && call.key === 'ns/a',
    new ApiError(
      'services "a" is forbidden: exceeded quota: no-services, requested: services=1, used: services=1, limited: services=1',
      403,
    ),
  );
  world.configMap('shared', { V: '2' });
  await t.throwsAsync(world.reconcile('a'), { message: /exceeded quota/ });
  world.sync();
  t.is(running(world, 'a'), hash('2'), 'a took the one slot and rolled');
  await reconcileAll(world, ['b']);
  t.is(ready(world, 'b'), 'False RolloutQueued');

  world.settleDeployment('a', 'Succeeded');
  await t.throwsAsync(world.reconcile('a'), { message: /exceeded quota/ });
  world.sync();
  t.deepEqual(world.governance.budget.snapshot().inProgress, [], "a's rollout is done: its slot is free although its Service is not");
  t.deepEqual(eligible, ['ns/b'], 'and goes to the next in the queue');
  await reconcileAll(world, ['b']);
  t.is(running(world, 'b'), hash('2'));
});

test('a paused Deployment (kubectl rollout pause) occupies no slot: Ready says DeploymentPaused, and a resume counts it again', async (t) => {
  const { world, eligible } = await contended();
  t.is(running(world, 'a'), hash('2'));
  t.is(ready(world, 'b'), 'False RolloutQueued');

  world.pauseDeployment('a', true);
  const calls = world.client.calls.length;
  await reconcileAll(world, ['a']);
  t.deepEqual(
    world.writes(calls).filter((line) => line.includes('deployments')),
    [],
    "the pause is the user's: the operator leaves spec.paused alone",
  );
  t.true(deploymentOf(world, 'a').spec.paused);
  t.deepEqual(world.governance.budget.snapshot().inProgress, [], 'a paused rollout occupies no slot');
  t.deepEqual(eligible, ['ns/b']);
  t.is(ready(world, 'a'), 'False DeploymentPaused');
  t.regex(
    readyMessage(world, 'a'),
    /the rollout of ConfigMap "shared" \w+→\w+ is paused on the Deployment: 0 of 1 new replicas have been updated; `kubectl rollout resume deployment\/a` resumes it/,
  );
  t.like(appOf(world, 'a').status?.lastRollout, { trigger: 'ConfigMap', toHash: hash('2'), result: 'InProgress' });
  await reconcileAll(world, ['b']);
  t.is(running(world, 'b'), hash('2'), 'b rolls meanwhile');

  world.pauseDeployment('a', false);
  await reconcileAll(world, ['a']);
  t.is(ready(world, 'a'), 'False RolloutInProgress');
  t.deepEqual([...world.governance.budget.snapshot().inProgress].sort(), ['ns/a', 'ns/b'], 'resumed, it rolls again and is counted');
  const restarted = world.restart();
  t.deepEqual([...restarted.budget.snapshot().inProgress].sort(), ['ns/a', 'ns/b'], 'a restart counts the same');
  world.pauseDeployment('a', true);
  const rebuilt = world.restart();
  t.deepEqual(rebuilt.budget.snapshot().inProgress, ['ns/b'], 'and a restart does not count a paused one');
});

test('a forged rollout annotation on the Deployment is ignored: status.lastRollout keeps what fits the schema, and the app reconciles on', async (t) => {
  const world = await settled(['a'], { maxConcurrentRollouts: 1, flapThreshold: 0 });
  const recorded = appOf(world, 'a').status?.lastRollout;
  const real = deploymentOf(world, 'a').metadata.annotations![ROLLOUT_ANNOTATION]!;
  const forgeries: Record<string, unknown> = {
    'a start that is no date-time': {
      trigger: 'ConfigMap',
      start: 'yesterday',
      changes: [{ kind: 'ConfigMap', name: 'shared', to: 'ab' }],
    },
    'a fractional generation': { trigger: 'Spec', start: '2026-11-30T12:00:00Z', generation: 1.5 },
    'a huge generation': { trigger: 'Spec', start: '2026-11-30T12:00:00Z', generation: 1e300 },
    'a name of 100,000 characters': {
      trigger: 'ConfigMap',
      start: '2026-11-30T12:00:00Z',
      changes: [{ kind: 'ConfigMap', name: 'x'.repeat(100_000), to: 'ab' }],
    },
    'a hash of 1,000 characters': {
      trigger: 'ConfigMap',
      start: '2026-11-30T12:00:00Z',
      changes: [{ kind: 'ConfigMap', name: 'shared', from: 'f'.repeat(1_000), to: 'ab' }],
    },
    'a thousand changes': {
      trigger: 'ConfigMap',
      start: '2026-11-30T12:00:00Z',
      changes: Array.from({ length: 1_000 }, (_, index) => ({ kind: 'ConfigMap', name: `c${index}`, to: 'ab' })),
    },
    'a name with a newline': {
      trigger: 'Secret',
      start: '2026-11-30T12:00:00Z',
      changes: [{ kind: 'Secret', name: 'creds\n\u001b[31mred', to: 'ab' }],
    },
  };
  for (const [what, forged] of Object.entries(forgeries)) {
    const live = deploymentOf(world, 'a');
    world.client.seed(DEPLOYMENTS, {
      ...live,
      metadata: { ...live.metadata, annotations: { ...live.metadata.annotations, [ROLLOUT_ANNOTATION]: JSON.stringify(forged) } },
    });
    world.sync();
    await t.notThrowsAsync(world.reconcile('a'), what);
    world.sync();
    t.deepEqual(appOf(world, 'a').status?.lastRollout, recorded, `${what}: lastRollout keeps the recorded rollout`);
    t.is(ready(world, 'a'), 'True Ready', what);
  }
  // Unknown fields beside a cause that fits are ignored, and the cause is kept.
  const live = deploymentOf(world, 'a');
  world.client.seed(DEPLOYMENTS, {
    ...live,
    metadata: {
      ...live.metadata,
      annotations: { ...live.metadata.annotations, [ROLLOUT_ANNOTATION]: JSON.stringify({ ...JSON.parse(real), extra: { x: 1 } }) },
    },
  });
  world.sync();
  await world.reconcile('a');
  world.sync();
  t.deepEqual(appOf(world, 'a').status?.lastRollout, recorded, 'an unknown field changes nothing');
  // The next content change rolls as usual and writes a true cause over the forged one.
  world.configMap('shared', { V: '2' });
  await reconcileAll(world, ['a']);
  t.is(running(world, 'a'), hash('2'));
  t.like(appOf(world, 'a').status?.lastRollout, { trigger: 'ConfigMap', toHash: hash('2'), result: 'InProgress' });
});

test('a Deployment update that keeps failing after the rollout ended does not keep the slot; a grant not yet written is kept', async (t) => {
  const { world, eligible } = await contended();
  t.is(running(world, 'a'), hash('2'));
  world.settleDeployment('a', 'Succeeded');
  // A change of replicas whose update is refused (an admission policy, say): the reconcile fails at the Deployment.
  const app = appOf(world, 'a');
  world.client.seed(CUSTOM_APPS, { ...app, spec: { ...app.spec, replicas: 3 }, metadata: { ...app.metadata, generation: 2 } });
  world.sync();
  const lift = world.client.failEvery(
    (call) => call.verb === 'update' && call.resource === 'deployments.apps' && call.key === 'ns/a',
    new ApiError('deployments.apps "a" is forbidden: ValidatingAdmissionPolicy denied request', 403),
  );
  await t.throwsAsync(world.reconcile('a'), { message: /forbidden/ });
  t.deepEqual(world.governance.budget.snapshot().inProgress, [], "a's rollout is over: its slot is free although its update fails");
  t.deepEqual(eligible, ['ns/b']);

  // b is granted, and its update refused too: the grant stays with b for the retry, and its place is not lost.
  const liftB = world.client.failEvery(
    (call) => call.verb === 'update' && call.resource === 'deployments.apps' && call.key === 'ns/b',
    new ApiError('deployments.apps "b" is forbidden: ValidatingAdmissionPolicy denied request', 403),
  );
  await t.throwsAsync(world.reconcile('b'), { message: /forbidden/ });
  t.deepEqual(world.governance.budget.snapshot().inProgress, ['ns/b'], 'the grant not yet written is kept');
  lift();
  liftB();
  await reconcileAll(world, ['b']);
  t.is(running(world, 'b'), hash('2'));
});

test('a CustomApp deleted in the middle of its content rollout keeps its slot, across a restart, until the garbage collector deletes its Deployment', async (t) => {
  const { world, eligible } = await contended();
  t.is(running(world, 'a'), hash('2'));
  // `kubectl delete`: the API server holds it on our finalizer; the Deployment controller rolls on.
  const app = appOf(world, 'a');
  world.client.seed(CUSTOM_APPS, { ...app, metadata: { ...app.metadata, deletionTimestamp: world.now.toISOString() } });
  world.sync();
  await reconcileAll(world, ['a']);
  t.deepEqual(appOf(world, 'a').metadata.finalizers ?? [], [], 'finalized');
  t.deepEqual(world.governance.budget.snapshot().inProgress, ['ns/a'], 'its Deployment still rolls: the slot is kept');
  await world.client.delete(CUSTOM_APPS, 'ns', 'a');
  world.sync();
  await reconcileAll(world, ['a', 'b']);
  t.deepEqual(world.governance.budget.snapshot().inProgress, ['ns/a'], 'gone, its Deployment still rolls');
  t.is(running(world, 'b'), hash('1'), 'b still waits');

  const rebuilt = world.restart();
  t.deepEqual(rebuilt.budget.snapshot().inProgress, ['ns/a'], 'a restart counts the rollout a gone CustomApp left');
  const after: string[] = [];
  rebuilt.eligible.subscribe((key) => after.push(key));
  await world.client.delete(DEPLOYMENTS, 'ns', 'a');
  world.sync();
  await reconcileAll(world, ['a']);
  t.deepEqual([eligible, after], [[], ['ns/b']], 'the Deployment collected: its slot goes to the next');
  await reconcileAll(world, ['b']);
  t.is(running(world, 'b'), hash('2'));
});
