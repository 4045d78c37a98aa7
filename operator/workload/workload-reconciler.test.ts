// The workload reconcile in a fake world: opting in, rolling on new content, restarts, opting out, deletion, outcome,
// bad input, and the budget shared with CustomApps.
import test from 'ava';
import { RUNNING_HASHES_ANNOTATION, TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import { ApiError } from '../kube/errors.js';
import type { CoreEvent, PodTemplate } from '../kube/objects.js';
import { EVENTS, resourceLabel } from '../kube/resources.js';
import { decodeHashes, encodeHashes } from '../podtemplate/hash-annotation.js';
import { FakeWorld } from '../reconcile/testing/fake-world.js';
import { lastWorkloadRollout } from './last-rollout.js';
import { WORKLOAD_RESOURCES, type Workload, type WorkloadKind } from './workload.js';

const KINDS: readonly WorkloadKind[] = ['Deployment', 'StatefulSet', 'DaemonSet', 'Rollout'];
const AUTO = { 'reloader.stakater.com/auto': 'true' };
/** A pod template using ConfigMap app-config (envFrom) and Secret db (a volume). */
const USES: Partial<PodTemplate['spec']> = {
  containers: [{ name: 'app', image: 'app:1', envFrom: [{ configMapRef: { name: 'app-config' } }] }],
  volumes: [{ name: 'db', secret: { secretName: 'db' } }],
};

const stored = (world: FakeWorld, kind: WorkloadKind, name: string): Workload =>
  world.client.stored<Workload>(WORKLOAD_RESOURCES[kind], 'ns', name)!;
const templateHashes = (world: FakeWorld, kind: WorkloadKind, name: string): string | undefined =>
  stored(world, kind, name).spec.template.metadata?.annotations?.[TEMPLATE_HASHES_ANNOTATION];
const record = (world: FakeWorld, kind: WorkloadKind, name: string) =>
  decodeHashes(stored(world, kind, name).metadata.annotations?.[RUNNING_HASHES_ANNOTATION]);
const eventsOf = (world: FakeWorld, name: string): string[] =>
  world.client
    .all<CoreEvent>(EVENTS)
    .filter((event) => event.involvedObject.name === name)
    .map((event) => `${event.involvedObject.kind} ${event.reason}: ${event.message}`);
/** Sets `annotations` over the stored workload's, as `kubectl annotate` would, reconciles it and syncs the caches. */
async function annotate(world: FakeWorld, kind: WorkloadKind, name: string, annotations: Record<string, string>): Promise<void> {
  world.workload(kind, name, { ...stored(world, kind, name).metadata.annotations, ...annotations }, USES);
  await world.reconcileWorkloadAndSync(kind, name);
}

/** The calls from `from` on, other than Events. */
const writes = (world: FakeWorld, from: number): string[] => world.writes(from).filter((line) => !line.startsWith('event'));

/** A world with app-config (V=1) and db (P=1), and `name` of `kind` opted in and reconciled once (its baseline). */
async function optedIn(kind: WorkloadKind, name = 'web', annotations: Record<string, string> = AUTO): Promise<FakeWorld> {
  const world = new FakeWorld();
  world.configMap('app-config', { V: '1' });
  world.secret('db', { P: '1' });
  world.workload(kind, name, annotations, USES);
  await world.reconcileWorkloadAndSync(kind, name);
  return world;
}

/** A Deployment opted in, whose ConfigMap then changed and was reconciled and synced: its rollout under way. */
async function rollingDeployment(): Promise<FakeWorld> {
  const world = await optedIn('Deployment');
  world.configMap('app-config', { V: '2' });
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  return world;
}

test('a workload without an opt-in annotation: nothing acquired, nothing written', async (t) => {
  const world = new FakeWorld();
  world.configMap('app-config', { V: '1' });
  world.workload('Deployment', 'plain', {}, USES);
  t.deepEqual(await world.reconcileWorkload('Deployment', 'plain'), {});
  t.deepEqual(world.dependencies.watched(), []);
  t.deepEqual(world.writes(), []);
});

for (const kind of KINDS) {
  test(`${kind}: opting in rolls nothing; the content at first sight is recorded on its metadata, not its pod template`, async (t) => {
    const world = await optedIn(kind);
    t.deepEqual(world.writes(), [`patch ${resourceLabel(WORKLOAD_RESOURCES[kind])} ns/web`]);
    t.deepEqual(
      [...world.dependencies.acquired.get(`${kind}/ns/web`)!].map((ref) => `${ref.kind}/${ref.name}`),
      ['ConfigMap/app-config', 'Secret/db'],
    );
    t.is(templateHashes(world, kind, 'web'), undefined, 'the pod template is untouched');
    t.deepEqual(
      [...record(world, kind, 'web')!],
      [
        ['ConfigMap/app-config', FakeWorld.hash({ V: '1' })],
        ['Secret/db', FakeWorld.secretHash({ P: '1' }, 'db')],
      ],
    );
    const before = world.client.calls.length;
    await world.reconcileWorkload(kind, 'web');
    t.deepEqual(world.writes(before), [], 'a second reconcile writes nothing');
  });

  test(`${kind}: new ConfigMap content, then new Secret content, each roll it with one patch of the pod template`, async (t) => {
    const world = await optedIn(kind);
    const from = world.client.calls.length;
    world.configMap('app-config', { V: '2' });
    await world.reconcileWorkloadAndSync(kind, 'web');
    t.deepEqual(writes(world, from), [`patch ${resourceLabel(WORKLOAD_RESOURCES[kind])} ns/web`]);
    const patch = world.client.calls.at(-2)!.body as { metadata: { resourceVersion: string } };
    t.truthy(patch.metadata.resourceVersion, 'guarded by the resourceVersion read');
    const rolled = decodeHashes(templateHashes(world, kind, 'web'))!;
    t.is(rolled.get('ConfigMap/app-config'), FakeWorld.hash({ V: '2' }));
    t.deepEqual(record(world, kind, 'web'), rolled, 'the record says what the template says');
    t.like(lastWorkloadRollout(stored(world, kind, 'web')), {
      trigger: 'ConfigMap',
      result: 'InProgress',
      changes: [{ kind: 'ConfigMap', name: 'app-config', from: FakeWorld.hash({ V: '1' }), to: FakeWorld.hash({ V: '2' }) }],
    });
    t.regex(eventsOf(world, 'web').join('\n'), new RegExp(`${kind} RolloutTriggered: Rolling out ${kind} "web": ConfigMap "app-config"`));

    const secretFrom = world.client.calls.length;
    world.secret('db', { P: '2' });
    await world.reconcileWorkloadAndSync(kind, 'web');
    t.deepEqual(writes(world, secretFrom), [`patch ${resourceLabel(WORKLOAD_RESOURCES[kind])} ns/web`]);
    t.is(decodeHashes(templateHashes(world, kind, 'web'))!.get('Secret/db'), FakeWorld.secretHash({ P: '2' }, 'db'));
    t.is(lastWorkloadRollout(stored(world, kind, 'web'))?.trigger, 'Secret');
  });
}

test('a restart rolls nothing; a change made while the operator was down rolls once after it', async (t) => {
  const world = await optedIn('StatefulSet');
  world.restart();
  const from = world.client.calls.length;
  await world.reconcileWorkload('StatefulSet', 'web');
  t.deepEqual(world.writes(from), [], 'same content: no write at all');

  world.configMap('app-config', { V: 'changed while down' });
  world.restart();
  await world.reconcileWorkloadAndSync('StatefulSet', 'web');
  t.deepEqual(writes(world, from), ['patch statefulsets.apps ns/web']);
  t.is(decodeHashes(templateHashes(world, 'StatefulSet', 'web'))!.get('ConfigMap/app-config'), FakeWorld.hash({ V: 'changed while down' }));
  const after = world.client.calls.length;
  await world.reconcileWorkload('StatefulSet', 'web');
  t.deepEqual(world.writes(after), [], 'once');
});

test('a metadata-only change of a ConfigMap (same hash) rolls nothing', async (t) => {
  const world = await optedIn('Deployment');
  const from = world.client.calls.length;
  world.configMap('app-config', { V: '1' });
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(world.writes(from), []);
});

test('opting out releases the refs and removes the record; opting in again later rolls nothing', async (t) => {
  const world = await optedIn('DaemonSet');
  await annotate(world, 'DaemonSet', 'web', { 'reloader.stakater.com/auto': 'false' });
  t.deepEqual(world.dependencies.watched(), [], 'released');
  t.is(record(world, 'DaemonSet', 'web'), undefined, 'the record is gone');

  world.configMap('app-config', { V: 'edited while opted out' });
  world.workload('DaemonSet', 'web', AUTO, USES);
  const from = world.client.calls.length;
  await world.reconcileWorkloadAndSync('DaemonSet', 'web');
  t.deepEqual(writes(world, from), ['patch daemonsets.apps ns/web'], 'the new baseline');
  t.is(templateHashes(world, 'DaemonSet', 'web'), undefined, 'rolled nothing');
});

test('a deleted workload (no finalizer of ours) is released by its next reconcile', async (t) => {
  const world = await optedIn('Deployment');
  world.workloads.Deployment.forget('ns/web');
  t.deepEqual(await world.reconcileWorkload('Deployment', 'web'), {});
  t.deepEqual(world.dependencies.watched(), []);
  t.is(stored(world, 'Deployment', 'web').metadata.finalizers, undefined);
});

test('an optional reference created later rolls; a missing required one gets one Warning and acquires nothing else', async (t) => {
  const world = new FakeWorld();
  world.configMap('app-config', { V: '1' });
  world.configMap('flags', undefined);
  world.secret('db', undefined);
  world.workload('Deployment', 'web', AUTO, {
    containers: [
      {
        name: 'app',
        image: 'app:1',
        envFrom: [
          { configMapRef: { name: 'app-config' } },
          { configMapRef: { name: 'flags', optional: true } },
          { secretRef: { name: 'db' } },
        ],
      },
    ],
  });
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  t.deepEqual(eventsOf(world, 'web'), [
    'Deployment ReferenceMissing: Secret "db" does not exist (the pod template uses it without optional: true)',
  ]);
  t.is(record(world, 'Deployment', 'web')!.get('ConfigMap/flags'), null);
  await world.reconcileWorkload('Deployment', 'web');
  t.is(eventsOf(world, 'web').length, 1, 'reported once');

  world.configMap('flags', { F: 'on' });
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  t.like(lastWorkloadRollout(stored(world, 'Deployment', 'web')), {
    trigger: 'ConfigMap',
    changes: [{ kind: 'ConfigMap', name: 'flags', to: FakeWorld.hash({ F: 'on' }) }],
  });
});

test('bad annotations: one Warning Event quoting them, never a throw, served as if they were absent', async (t) => {
  const world = new FakeWorld();
  world.configMap('app-config', { V: '1' });
  world.workload('Deployment', 'web', { 'app.example.com/reload-configmaps': 'app-config,,x/y', 'app.example.com/reload-jobs': 'a' }, USES);
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(eventsOf(world, 'web'), [
    'Deployment ReloadAnnotationInvalid: annotation app.example.com/reload-jobs is unknown: the kinds are app.example.com/reload-configmaps and app.example.com/reload-secrets; ' +
      'annotation app.example.com/reload-configmaps: an empty name in "app-config,,x/y"; ' +
      'annotation app.example.com/reload-configmaps: "x/y" is not a DNS-1123 name; it is ignored',
  ]);
  t.deepEqual(
    world.dependencies.watched().map((ref) => ref.name),
    ['app-config'],
  );

  world.workload(
    'Deployment',
    'huge',
    { 'app.example.com/reload-secrets': Array.from({ length: 10_000 }, (_, i) => `s${i}`).join(',') },
    USES,
  );
  t.deepEqual(await world.reconcileWorkload('Deployment', 'huge'), {});
  t.deepEqual(eventsOf(world, 'huge'), [
    'Deployment ReloadAnnotationInvalid: annotation app.example.com/reload-secrets: 10000 names, more than 256; the list is ignored',
  ]);
  t.false(world.dependencies.acquired.has('Deployment/ns/huge'));
});

test('a bad annotation is reported once; once its reports are forgotten (a shard gave the key up), it is reported again', async (t) => {
  const world = new FakeWorld();
  world.configMap('app-config', { V: '1' });
  world.workload('Deployment', 'web', { 'app.example.com/reload-configmaps': 'app-config', 'app.example.com/reload-jobs': 'a' }, USES);
  const events = (from: number): string[] => world.writes(from).filter((line) => line.startsWith('event'));
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  const first = world.client.calls.length;
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(events(first), [], 'the same problem is not posted twice');
  world.workloadReconciler.forgetReports('Deployment/ns/web');
  const again = world.client.calls.length;
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(events(again), ['event patch count 2'], 'the Warning is posted again (aggregated into its Event)');
});

test("the rollout's outcome: last-rollout Succeeded with an Event once the Deployment's status says so", async (t) => {
  const world = await rollingDeployment();
  world.settleDeployment('web', 'Succeeded');
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  t.like(lastWorkloadRollout(stored(world, 'Deployment', 'web')), { result: 'Succeeded', completionTime: world.now.toISOString() });
  t.true(
    eventsOf(world, 'web').some((event) =>
      event.startsWith('Deployment RolloutSucceeded: Rolled out Deployment "web": ConfigMap "app-config"'),
    ),
  );
  const from = world.client.calls.length;
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(world.writes(from), [], 'recorded once');
});

test('paused by annotation: no roll and one RolloutPaused Event; unpaused, the latest content rolls once', async (t) => {
  const world = await optedIn('Deployment', 'web', { ...AUTO, 'app.example.com/rollout-paused': 'true' });
  world.configMap('app-config', { V: '2' });
  await world.reconcileWorkload('Deployment', 'web');
  world.configMap('app-config', { V: '3' });
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  t.is(templateHashes(world, 'Deployment', 'web'), undefined);
  t.deepEqual(
    eventsOf(world, 'web').filter((event) => event.includes('Paused')),
    [
      `Deployment RolloutPaused: Rollout of ConfigMap "app-config" ${FakeWorld.hash({ V: '1' }).slice(0, 12)}→${FakeWorld.hash({ V: '2' }).slice(0, 12)} paused by app.example.com/rollout-paused`,
    ],
  );
  await annotate(world, 'Deployment', 'web', { 'app.example.com/rollout-paused': 'false' });
  t.is(decodeHashes(templateHashes(world, 'Deployment', 'web'))!.get('ConfigMap/app-config'), FakeWorld.hash({ V: '3' }));
});

test('a reconcile before the watch delivers its own rollout reads it: no second rollout, no 409, its slot kept', async (t) => {
  const world = await optedIn('Deployment');
  world.lagging.add('Deployment/ns/web');
  world.configMap('app-config', { V: '2' });
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  // The watch has not delivered the rollout: run again (a trigger that came while it was in flight), it is in progress.
  const from = world.client.calls.length;
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(world.writes(from), [], 'nothing rolled twice, nothing written on the old resourceVersion');
  t.deepEqual(world.governance.budget.snapshot().inProgress, ['Deployment/ns/web'], 'the rollout keeps its slot');
  world.lagging.clear();
  world.sync();
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(world.writes(from), [], 'the watch caught up: still nothing to write');
});

test('the budget is shared with CustomApps: one slot, occupied by a CustomApp, queues the workload until it frees', async (t) => {
  const world = new FakeWorld({ maxConcurrentRollouts: 1, flapThreshold: 0, flapWindowMs: 60_000 });
  world.configMap('app-config', { V: '1' });
  world.secret('db', { P: '1' });
  world.app('app', { image: 'example/app:1', configMapName: 'app-config' });
  await world.reconcile('app');
  world.sync();
  world.settleDeployment('app', 'Succeeded');
  await world.reconcile('app');
  world.workload('StatefulSet', 'web', AUTO, USES);
  await world.reconcileWorkloadAndSync('StatefulSet', 'web');

  const eligible: string[] = [];
  world.governance.eligible.subscribe((key) => eligible.push(key));
  world.configMap('app-config', { V: '2' });
  await world.reconcile('app');
  world.sync();
  t.deepEqual(world.governance.budget.snapshot().inProgress, ['ns/app'], 'the CustomApp took the slot');
  await world.reconcileWorkloadAndSync('StatefulSet', 'web');
  t.is(templateHashes(world, 'StatefulSet', 'web'), undefined, 'the workload waits');
  t.deepEqual(
    world.governance.budget.snapshot().queue.map((entry) => entry.key),
    ['StatefulSet/ns/web'],
  );
  t.true(eventsOf(world, 'web').some((event) => event.startsWith('StatefulSet RolloutQueued: Rollout of ConfigMap "app-config"')));

  world.settleDeployment('app', 'Succeeded');
  await world.reconcile('app');
  t.deepEqual(eligible, ['StatefulSet/ns/web'], 'the free slot goes to the workload');
  await world.reconcileWorkloadAndSync('StatefulSet', 'web');
  t.is(decodeHashes(templateHashes(world, 'StatefulSet', 'web'))!.get('ConfigMap/app-config'), FakeWorld.hash({ V: '2' }));
  t.deepEqual(world.governance.budget.snapshot().inProgress, ['StatefulSet/ns/web']);

  world.restart();
  t.deepEqual(
    world.governance.budget.snapshot().inProgress,
    ['StatefulSet/ns/web'],
    'a restart finds the slot in the workload’s status and record',
  );
});

test("a Deployment a CustomApp controls is the CustomApp's: reload annotations on it are ignored, with one Warning", async (t) => {
  const world = new FakeWorld();
  world.configMap('app-config', { V: '1' });
  world.app('app', { image: 'example/app:1', configMapName: 'app-config' });
  await world.reconcile('app');
  const owned = world.client.stored<Workload>(WORKLOAD_RESOURCES.Deployment, 'ns', 'app')!;
  world.client.seed(WORKLOAD_RESOURCES.Deployment, {
    ...owned,
    metadata: { ...owned.metadata, annotations: { ...owned.metadata.annotations, ...AUTO } },
  });
  world.sync();
  const from = world.client.calls.length;
  t.deepEqual(await world.reconcileWorkload('Deployment', 'app'), {});
  t.deepEqual(writes(world, from), [], 'no baseline, no rollout: its CustomApp rolls it');
  t.false(world.dependencies.acquired.has('Deployment/ns/app'));
  t.deepEqual(
    eventsOf(world, 'app').filter((event) => event.startsWith('Deployment ')),
    [
      'Deployment ReloadAnnotationInvalid: controlled by CustomApp "app", which rolls it on its own ConfigMap and Secret: the reload annotations are ignored',
    ],
  );
});

test('a rollout that fails its progress deadline: last-rollout Failed with the reason, one Warning, its slot free', async (t) => {
  const world = await rollingDeployment();
  world.settleDeployment('web', 'Failed');
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  const last = lastWorkloadRollout(stored(world, 'Deployment', 'web'));
  t.like(last, { result: 'Failed', completionTime: world.now.toISOString() });
  t.truthy(last?.message);
  t.deepEqual(
    eventsOf(world, 'web').filter((event) => event.includes('RolloutFailed')),
    [
      `Deployment RolloutFailed: Rollout of ConfigMap "app-config" ${FakeWorld.hash({ V: '1' }).slice(0, 12)}→${FakeWorld.hash({ V: '2' }).slice(0, 12)} failed: ${last?.message}`,
    ],
  );
  t.deepEqual(world.governance.budget.snapshot().inProgress, []);
});

test('a write refused with a 409 posts and remembers nothing: the retry reports the bad annotation', async (t) => {
  const world = new FakeWorld();
  world.configMap('app-config', { V: '1' });
  world.secret('db', { P: '1' });
  world.workload('Deployment', 'web', { ...AUTO, 'app.example.com/rollout-paused': 'maybe' }, USES);
  world.client.failNext(
    (call) => call.verb === 'patch' && call.resource === 'deployments.apps',
    new ApiError('conflict', 409, { kind: 'Status', status: 'Failure', code: 409, reason: 'Conflict', message: 'conflict' }),
  );
  await t.throwsAsync(world.reconcileWorkload('Deployment', 'web'));
  t.deepEqual(eventsOf(world, 'web'), [], 'nothing posted for a write that failed');
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(eventsOf(world, 'web'), [
    'Deployment ReloadAnnotationInvalid: annotation app.example.com/rollout-paused: "maybe" is not "true" or "false"',
  ]);
});

test('a paused Deployment (`kubectl rollout pause`) occupies no slot and has not ended; resumed, it counts again', async (t) => {
  const world = await rollingDeployment();
  t.deepEqual(world.governance.budget.snapshot().inProgress, ['Deployment/ns/web']);

  world.pauseDeployment('web', true);
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  t.deepEqual(world.governance.budget.snapshot().inProgress, [], 'a paused rollout occupies no slot');
  t.like(lastWorkloadRollout(stored(world, 'Deployment', 'web')), { result: 'InProgress' }, 'paused is not ended');
  t.false(
    eventsOf(world, 'web').some((event) => event.includes('RolloutSucceeded')),
    'no success is reported for a rollout that has not run',
  );
  t.deepEqual(world.restart().budget.snapshot().inProgress, [], 'a restart does not count a paused one');

  world.pauseDeployment('web', false);
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  t.deepEqual(world.governance.budget.snapshot().inProgress, ['Deployment/ns/web'], 'resumed, it rolls again and is counted');
  t.deepEqual(world.restart().budget.snapshot().inProgress, ['Deployment/ns/web'], 'a restart counts the same');
  world.settleDeployment('web', 'Succeeded');
  await world.reconcileWorkload('Deployment', 'web');
  t.like(lastWorkloadRollout(stored(world, 'Deployment', 'web')), { result: 'Succeeded' });
});

/** A pod template that reads only key `a` of ConfigMap `keyed` (env configMapKeyRef) and `token` of Secret `creds` (volume items). */
const KEYED_USES: Partial<PodTemplate['spec']> = {
  containers: [{ name: 'app', image: 'app:1', env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'keyed', key: 'a' } } }] }],
  volumes: [{ name: 'creds', secret: { secretName: 'creds', items: [{ key: 'token', path: 'token' }] } }],
};

test('key-level triggers: a change of a key the pod template does not read writes nothing; one of a key it reads rolls', async (t) => {
  const world = new FakeWorld();
  world.configMap('keyed', { a: '1', b: '1' });
  world.secret('creds', { token: 't1', other: 'o1' });
  world.workload('Deployment', 'web', AUTO, KEYED_USES);
  await world.reconcileWorkloadAndSync('Deployment', 'web');

  const from = world.client.calls.length;
  world.configMap('keyed', { a: '1', b: '2' });
  world.secret('creds', { token: 't1', other: 'o2' });
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(world.writes(from), [], 'unlisted keys changed: no write at all');

  world.configMap('keyed', { a: '2', b: '2' });
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  t.deepEqual(writes(world, from), ['patch deployments.apps ns/web'], 'a listed key changed: one rollout');
  t.like(lastWorkloadRollout(stored(world, 'Deployment', 'web')), {
    trigger: 'ConfigMap',
    changes: [{ kind: 'ConfigMap', name: 'keyed' }],
  });
});

test('key-level triggers: a required key removed gets one Warning naming it and rolls nothing; back with its value, nothing', async (t) => {
  const world = new FakeWorld();
  world.configMap('keyed', { a: '1', b: '1' });
  world.secret('creds', { token: 't1' });
  world.workload('Deployment', 'web', AUTO, KEYED_USES);
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  const from = world.client.calls.length;
  world.configMap('keyed', { b: '1' });
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  t.deepEqual(writes(world, from), [], 'no rollout to pods that would not start');
  t.deepEqual(eventsOf(world, 'web'), [
    'Deployment ReferenceMissing: ConfigMap "keyed" has no key "a" (the pod template reads it without optional: true)',
  ]);
  world.configMap('keyed', { a: '1', b: '1' });
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(writes(world, from), [], 'the same value back rolls nothing');
});

test('key-level triggers: a record of the whole object (before the template named keys) is the same content and rolls nothing', async (t) => {
  const world = new FakeWorld();
  world.configMap('keyed', { a: '1', b: '1' });
  world.secret('creds', { token: 't1', other: 'o1' });
  const whole = encodeHashes(
    new Map([
      ['ConfigMap/keyed', FakeWorld.hash({ a: '1', b: '1' })],
      ['Secret/creds', FakeWorld.secretHash({ token: 't1', other: 'o1' }, 'creds')],
    ]),
  );
  world.workload('Deployment', 'web', { ...AUTO, [RUNNING_HASHES_ANNOTATION]: whole }, KEYED_USES);
  await world.reconcileWorkloadAndSync('Deployment', 'web');
  t.deepEqual(world.writes(), ['patch deployments.apps ns/web'], 'the record is rewritten as the keys hashes, nothing else');
  t.is(templateHashes(world, 'Deployment', 'web'), undefined, 'no rollout');
  const from = world.client.calls.length;
  world.configMap('keyed', { a: '1', b: '2' });
  await world.reconcileWorkload('Deployment', 'web');
  t.deepEqual(world.writes(from), [], 'then an unlisted key changes: nothing');
});
