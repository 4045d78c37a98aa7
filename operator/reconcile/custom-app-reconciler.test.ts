// The reconciler alone, in a fake world: for each case that matters, the exact writes it makes and their order.
import test from 'ava';
import { CONFIG_HASH_ANNOTATION, FINALIZER } from '../../api/customapp.js';
import type { CustomApp } from '../customapp/custom-app.js';
import { ApiError } from '../kube/errors.js';
import { DEPLOYMENTS, SERVICES } from '../kube/resources.js';
import { CUSTOM_APPS } from '../customapp/custom-app.js';
import type { Deployment, Service } from '../kube/objects.js';
import { MANAGED_BY_LABEL } from '../customapp/labels.js';
import { FakeWorld } from './testing/fake-world.js';

const FINALIZER_WRITE = 'update customapps.app.example.com ns/app';
const STATUS_WRITE = 'update customapps.app.example.com/status ns/app';
const SPEC = { image: 'example/app:1', configMapName: 'config', secretName: 'creds' };

/** A world with one CustomApp `ns/app` whose ConfigMap and Secret exist, reconciled once and synced. */
async function converged(spec: CustomApp['spec'] = SPEC): Promise<FakeWorld> {
  const world = new FakeWorld();
  world.configMap('config', { V: '1' });
  world.secret('creds', { TOKEN: 't' });
  world.app('app', spec);
  await world.reconcile('app');
  world.sync();
  return world;
}

/** Edits `ns/app`'s spec as a user would (its generation moves to 2), and syncs the caches. */
function editSpec(world: FakeWorld, spec: CustomApp['spec']): void {
  world.client.seed(CUSTOM_APPS, { ...appOf(world), spec, metadata: { ...appOf(world).metadata, generation: 2 } });
  world.sync();
}

/** Records each `use` of the world's dependency source from now on, as its refs' `Kind/name`. */
function recordUses(world: FakeWorld): string[][] {
  const uses: string[][] = [];
  const use = world.dependencies.use.bind(world.dependencies);
  world.dependencies.use = (owner, refs) => {
    uses.push(refs.map((ref) => `${ref.kind}/${ref.name}`));
    use(owner, refs);
  };
  return uses;
}

const deploymentOf = (world: FakeWorld, name = 'app'): Deployment | undefined => world.client.stored<Deployment>(DEPLOYMENTS, 'ns', name);
const appOf = (world: FakeWorld, name = 'app'): CustomApp => world.client.stored<CustomApp>(CUSTOM_APPS, 'ns', name)!;
const condition = (world: FakeWorld, type: string, name = 'app'): string | undefined => {
  const found = appOf(world, name).status?.conditions?.find((each) => each.type === type);
  return found && `${found.status} ${found.reason}`;
};

/** Stores a Deployment named `ns/app` that no CustomApp owns (no ownerReference), as another writer would. */
function seedForeignDeployment(world: FakeWorld): void {
  world.client.seed(DEPLOYMENTS, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'app', namespace: 'ns' },
    spec: {},
  } as Deployment);
}

test('create: the finalizer first, then the Deployment (no Event for a new CustomApp), then the status guarded by its resourceVersion', async (t) => {
  const world = new FakeWorld();
  world.configMap('config', { V: '1' });
  world.secret('creds', { TOKEN: 't' });
  world.app('app', SPEC);
  t.deepEqual(await world.reconcile('app'), {});
  t.deepEqual(world.writes(), [FINALIZER_WRITE, 'create deployments.apps ns/app', STATUS_WRITE]);
  t.deepEqual(appOf(world).metadata.finalizers, [FINALIZER]);
  t.is(deploymentOf(world)?.spec.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION], FakeWorld.hash({ V: '1' }));
  const statusPatch = world.client.calls.at(-1)!.body as { metadata?: { resourceVersion?: string } };
  t.truthy(statusPatch.metadata?.resourceVersion, 'a stale writer of the status gets a 409');
  t.is(
    condition(world, 'Ready'),
    'False RolloutInProgress',
    'no Deployment controller runs here: the rollout of the creation never completes',
  );
  t.deepEqual(
    world.dependencies
      .watched()
      .map((ref) => `${ref.kind}/${ref.name}`)
      .sort(),
    ['ConfigMap/config', 'Secret/creds'],
  );
});

test('a Deployment deleted under a CustomApp is created again, and a Created Event says so', async (t) => {
  const world = await converged();
  await world.client.delete(DEPLOYMENTS, 'ns', 'app');
  world.sync();
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before), ['create deployments.apps ns/app', 'event Created']);
});

test('no-op: the same cached world again writes nothing', async (t) => {
  const world = await converged();
  const before = world.client.calls.length;
  t.deepEqual(await world.reconcile('app'), {});
  t.deepEqual(world.writes(before), []);
});

test('drift: new ConfigMap content rolls the Deployment, with an Event naming the hashes, then the status', async (t) => {
  const world = await converged();
  const before = world.client.calls.length;
  world.configMap('config', { V: '2' });
  await world.reconcile('app');
  t.deepEqual(world.writes(before), ['update deployments.apps ns/app', 'event RolloutTriggered', STATUS_WRITE]);
  t.is(deploymentOf(world)?.spec.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION], FakeWorld.hash({ V: '2' }));
  t.is(appOf(world).status?.configHash, FakeWorld.hash({ V: '2' }));
});

test('while other keys wait, a rollout writes the Deployment first and its status in a second pass, which writes it even if keys still wait', async (t) => {
  const world = await converged();
  world.busy = true;
  const before = world.client.calls.length;
  world.configMap('config', { V: '2' });
  t.deepEqual(await world.reconcile('app'), { requeueNow: true });
  t.deepEqual(world.writes(before), ['update deployments.apps ns/app', 'event RolloutTriggered'], 'no status yet');
  t.is(appOf(world).status?.configHash, FakeWorld.hash({ V: '1' }));
  const second = world.client.calls.length;
  t.deepEqual(await world.reconcile('app'), {});
  t.deepEqual(world.writes(second), [STATUS_WRITE], 'the second pass writes the status and nothing else');
  t.is(appOf(world).status?.configHash, FakeWorld.hash({ V: '2' }));

  world.busy = false;
  world.configMap('config', { V: '3' });
  const third = world.client.calls.length;
  t.deepEqual(await world.reconcile('app'), {});
  t.deepEqual(world.writes(third), ['update deployments.apps ns/app', 'event RolloutTriggered', STATUS_WRITE], 'idle: one pass');
});

/** Scales `ns/app`'s Deployment to `replicas` as another writer would (an HPA, `kubectl scale deployment`), and syncs. */
function scaleDeployment(world: FakeWorld, replicas: number): void {
  const live = deploymentOf(world)!;
  world.client.seed(DEPLOYMENTS, { ...live, spec: { ...live.spec, replicas } });
  world.sync();
}

test('drift: a field of ours edited on the Deployment is put back without a rollout Event', async (t) => {
  const world = await converged({ ...SPEC, replicas: 1 });
  scaleDeployment(world, 5);
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before), ['update deployments.apps ns/app', 'event Updated']);
  t.is(deploymentOf(world)?.spec.replicas, 1);
});

test('with spec.replicas unset the Deployment is created without a count and another writer scales it freely', async (t) => {
  const world = await converged();
  t.false('replicas' in deploymentOf(world)!.spec, 'the API server defaults it to 1');
  scaleDeployment(world, 5);
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before), [STATUS_WRITE], 'no Deployment write: the count is not ours');
  t.is(deploymentOf(world)?.spec.replicas, 5);
  t.like(appOf(world).status, { selector: 'app.kubernetes.io/instance=app,app.kubernetes.io/name=app' });
  const again = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(again), []);
});

test('handoff: the old ConfigMap is held until the rollout with the new one is recorded in status, then released', async (t) => {
  const world = await converged();
  world.configMap('other', { V: 'other' });
  editSpec(world, { ...SPEC, configMapName: 'other' });
  const uses = recordUses(world);
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(uses, [
    ['ConfigMap/other', 'Secret/creds', 'ConfigMap/config'],
    ['ConfigMap/other', 'Secret/creds'],
  ]);
  t.deepEqual(world.writes(before), ['update deployments.apps ns/app', 'event RolloutTriggered', STATUS_WRITE]);
  t.is(appOf(world).status?.observedConfigMapName, 'other');
});

test('hold: a missing ConfigMap creates no Deployment; the condition and one Event say why, and a rerun writes nothing', async (t) => {
  const world = new FakeWorld();
  world.configMap('config', undefined);
  world.secret('creds', { TOKEN: 't' });
  world.app('app', SPEC);
  await world.reconcile('app');
  t.deepEqual(world.writes(), [FINALIZER_WRITE, 'event RolloutHeld', STATUS_WRITE]);
  t.is(deploymentOf(world), undefined);
  t.is(condition(world, 'Ready'), 'False RolloutHeld');
  t.is(condition(world, 'ConfigMapAvailable'), 'False ConfigMapNotFound');
  world.sync();
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before), []);
});

test('not synced: a ref the dependency source does not know yet ends the reconcile with no write but the finalizer', async (t) => {
  const world = new FakeWorld();
  world.app('app', SPEC);
  t.deepEqual(await world.reconcile('app'), {});
  t.deepEqual(world.writes(), [FINALIZER_WRITE]);
});

test('not owned: a foreign Deployment of that name is read once, left alone, reported, and looked at again later', async (t) => {
  const world = new FakeWorld();
  world.configMap('config', { V: '1' });
  world.secret('creds', { TOKEN: 't' });
  seedForeignDeployment(world);
  world.app('app', SPEC);
  const result = await world.reconcile('app');
  t.deepEqual(result, { requeueAfterMs: 30_000 });
  t.deepEqual(world.writes(), [
    FINALIZER_WRITE,
    'create deployments.apps ns/app',
    'get deployments.apps ns/app',
    'event DeploymentNotOwned',
    STATUS_WRITE,
  ]);
  t.is(condition(world, 'Ready'), 'False DeploymentNotOwned');
  t.deepEqual(deploymentOf(world)?.spec, {}, 'untouched');
});

test('deletion: the dependencies are released, then the finalizer removed; nothing else is written', async (t) => {
  const world = await converged();
  const app = appOf(world);
  world.client.seed(CUSTOM_APPS, { ...app, metadata: { ...app.metadata, deletionTimestamp: '2026-11-30T12:00:00Z' } });
  world.sync();
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before), [FINALIZER_WRITE]);
  t.deepEqual(appOf(world).metadata.finalizers, []);
  t.deepEqual(world.dependencies.watched(), []);
});

test('gone from the cache: the dependencies are released and nothing is written', async (t) => {
  const world = await converged();
  world.apps.forget('ns/app');
  const before = world.client.calls.length;
  t.deepEqual(await world.reconcile('app'), {});
  t.deepEqual(world.writes(before), []);
  t.deepEqual(world.dependencies.watched(), []);
});

// ─── the correctness review's cases ────────────────────────────────────────────────────────────────────────────

test('a Deployment of ours whose managed-by label was removed is found by its ownerReference, relabelled, and rolls again', async (t) => {
  const world = await converged();
  const live = deploymentOf(world)!;
  const { [MANAGED_BY_LABEL]: _removed, ...labels } = live.metadata.labels ?? {};
  world.client.seed(DEPLOYMENTS, { ...live, metadata: { ...live.metadata, labels } });
  world.sync();
  t.is(world.deployments.get('ns/app'), undefined, 'out of the informer sight');
  let before = world.client.calls.length;
  t.deepEqual(await world.reconcile('app'), {});
  t.deepEqual(world.writes(before), [
    'create deployments.apps ns/app',
    'get deployments.apps ns/app',
    'update deployments.apps ns/app',
    'event Updated',
  ]);
  t.truthy(deploymentOf(world)?.metadata.labels?.[MANAGED_BY_LABEL], 'the label is back');
  t.is(condition(world, 'DeploymentAvailable'), 'False ReplicasNotReady', 'still owned');
  world.sync();
  world.configMap('config', { V: '2' });
  before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before), ['update deployments.apps ns/app', 'event RolloutTriggered', STATUS_WRITE]);
});

test('the same for a Service of ours that lost its label', async (t) => {
  const world = await converged({ ...SPEC, port: 8080 });
  const live = world.client.stored<Service>(SERVICES, 'ns', 'app')!;
  world.client.seed(SERVICES, { ...live, metadata: { ...live.metadata, labels: {} } });
  world.sync();
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before), ['create services ns/app', 'get services ns/app', 'update services ns/app', 'event Updated']);
  t.truthy(world.client.stored<Service>(SERVICES, 'ns', 'app')?.metadata.labels?.[MANAGED_BY_LABEL]);
  t.is(condition(world, 'ServiceAvailable'), 'True ServiceReady');
});

test('a name that cannot carry a Service is reported by one Event, not one per reconcile, while the rollout is held', async (t) => {
  const world = new FakeWorld();
  world.configMap('config', undefined);
  world.secret('creds', { TOKEN: 't' });
  world.app('app.v2', { ...SPEC, port: 8080 });
  for (let round = 0; round < 3; round += 1) {
    await world.reconcile('app.v2');
    world.sync();
  }
  const events = world.writes().filter((line) => line.startsWith('event'));
  t.deepEqual(events, ['event ServiceNameInvalid', 'event RolloutHeld']);
  t.is(condition(world, 'ServiceAvailable', 'app.v2'), 'False ServiceNameInvalid');
  t.is(condition(world, 'Ready', 'app.v2'), 'False RolloutHeld');
});

test('a foreign Deployment under the name of one this process created moments ago is reported at once, not retried as ours', async (t) => {
  const world = await converged();
  // The CustomApp is deleted and made again under the same name while a foreign Deployment takes the name.
  world.client.seed(CUSTOM_APPS, {
    ...appOf(world),
    metadata: { name: 'app', namespace: 'ns', generation: 1, uid: 'second-uid' },
    status: undefined,
  });
  seedForeignDeployment(world);
  world.sync();
  const before = world.client.calls.length;
  t.deepEqual(await world.reconcile('app'), { requeueAfterMs: 30_000 });
  t.deepEqual(world.writes(before), [
    FINALIZER_WRITE,
    'create deployments.apps ns/app',
    'get deployments.apps ns/app',
    'event DeploymentNotOwned',
    STATUS_WRITE,
  ]);
});

test('a handoff to a missing ConfigMap keeps the old one acquired and observed even when the status write of the first rollout was lost to a 409', async (t) => {
  const world = new FakeWorld();
  world.configMap('config', { V: '1' });
  world.secret('creds', { TOKEN: 't' });
  world.app('app', SPEC);
  // The spec moves on between the Deployment's creation and the status write: that write gets a 409.
  world.client.failNext(
    (call) => call.resource === 'customapps.app.example.com/status',
    new ApiError('conflict', 409, { reason: 'Conflict' }),
  );
  await t.throwsAsync(world.reconcile('app'), { message: 'conflict' });
  t.is(appOf(world).status, undefined, 'nothing recorded the rollout');
  world.configMap('missing', undefined);
  editSpec(world, { ...SPEC, configMapName: 'missing' });
  await world.reconcile('app');
  t.is(condition(world, 'ConfigMapAvailable'), 'False ConfigMapNotFound');
  t.is(appOf(world).status?.observedConfigMapName, 'config', 'read back from the Deployment, which still runs with it');
  t.is(appOf(world).status?.configHash, FakeWorld.hash({ V: '1' }));
  t.deepEqual(
    world.dependencies
      .watched()
      .map((ref) => `${ref.kind}/${ref.name}`)
      .sort(),
    ['ConfigMap/config', 'ConfigMap/missing', 'Secret/creds'],
    'the old ConfigMap stays acquired: its edits still roll the pods that read it',
  );
});

const LISTED: CustomApp['spec'] = {
  image: 'example/app:1',
  configMaps: [{ name: 'web' }, { name: 'files', mountPath: '/etc/app', keys: ['app.yaml'] }, { name: 'extra', optional: true }],
  secrets: [{ name: 'db', keys: ['PASSWORD'] }],
};

/** A world with `ns/app` listing ConfigMaps `web`, `files` (by key) and optional `extra` (missing), and Secret `db` by key. */
async function convergedListed(): Promise<FakeWorld> {
  const world = new FakeWorld();
  world.configMap('web', { MODE: 'a' });
  world.configMap('files', { 'app.yaml': 'x: 1', 'other.yaml': 'y: 1' });
  world.configMap('extra', undefined);
  world.secret('db', { PASSWORD: 'p', USER: 'u' });
  world.app('app', LISTED);
  await world.reconcile('app');
  world.sync();
  return world;
}

test('listed objects: the Deployment reads each as env or files, the keyed ones are acquired by key, the status lists what runs', async (t) => {
  const world = await convergedListed();
  t.deepEqual(
    world.dependencies.acquired.get('ns/app')?.map((ref) => `${ref.kind}/${ref.name}${ref.keys ? `[${ref.keys.join(',')}]` : ''}`),
    ['ConfigMap/web', 'ConfigMap/files[app.yaml]', 'ConfigMap/extra', 'Secret/db[PASSWORD]'],
  );
  const container = deploymentOf(world)!.spec.template.spec.containers[0]!;
  t.deepEqual(container.envFrom, [{ configMapRef: { name: 'web', optional: false } }, { configMapRef: { name: 'extra', optional: true } }]);
  t.deepEqual(container.env, [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'PASSWORD', optional: false } } }]);
  t.deepEqual(container.volumeMounts, [{ name: 'configmap-0', mountPath: '/etc/app', readOnly: true }]);
  const status = appOf(world).status!;
  t.deepEqual(
    status.observedConfigMaps?.map((each) => `${each.name} ${each.hash ? 'hash' : 'none'}`),
    ['extra none', 'files hash', 'web hash'],
  );
  t.deepEqual(
    status.observedSecrets?.map((each) => each.name),
    ['db'],
  );
  t.is(condition(world, 'ConfigMapAvailable'), 'True ConfigMapFound', 'a missing optional ConfigMap is fine');
  t.regex(
    appOf(world).status!.conditions!.find((each) => each.type === 'ConfigMapAvailable')!.message,
    /optional ConfigMap "extra" not found/,
  );
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before), [], 'level-based: the same world writes nothing');
});

test('listed objects: a change to an unlisted key writes nothing; a listed key rolls with a cause naming the object', async (t) => {
  const world = await convergedListed();
  const before = world.client.calls.length;
  world.configMap('files', { 'app.yaml': 'x: 1', 'other.yaml': 'y: 2' });
  world.secret('db', { PASSWORD: 'p', USER: 'v' });
  await world.reconcile('app');
  t.deepEqual(world.writes(before), [], 'other.yaml and USER are not listed');
  world.configMap('files', { 'app.yaml': 'x: 2', 'other.yaml': 'y: 2' });
  await world.reconcile('app');
  t.deepEqual(world.writes(before), ['update deployments.apps ns/app', 'event RolloutTriggered', STATUS_WRITE]);
  world.sync();
  const last = appOf(world).status?.lastRollout;
  t.like(last, { trigger: 'ConfigMap', name: 'files', keys: ['app.yaml'] });
  t.regex(last?.message ?? '', /ConfigMap "files" \(key app\.yaml\)/);
  t.regex(world.events('app').findLast((event) => event.startsWith('RolloutTriggered')) ?? '', /ConfigMap\/files \(key app\.yaml\)/);
  world.secret('db', { PASSWORD: 'q', USER: 'v' });
  await world.reconcile('app');
  world.sync();
  t.like(appOf(world).status?.lastRollout, { trigger: 'Secret', name: 'db', keys: ['PASSWORD'] });
  t.regex(world.events('app').findLast((event) => event.startsWith('RolloutTriggered')) ?? '', /Secret\/db \(key PASSWORD\)/);
  t.notRegex(
    world.events('app').findLast((event) => event.startsWith('RolloutTriggered')) ?? '',
    /key-digests/,
    'the digests are how keys are named, not a change of their own',
  );
});

test('listed objects: a required listed key missing holds the rollout and says which; an optional object appearing rolls it in', async (t) => {
  const world = new FakeWorld();
  world.configMap('web', { MODE: 'a' });
  world.configMap('files', { 'other.yaml': 'y: 1' });
  world.configMap('extra', undefined);
  world.secret('db', { PASSWORD: 'p' });
  world.app('app', LISTED);
  await world.reconcile('app');
  world.sync();
  t.is(deploymentOf(world), undefined, 'the pods could not start');
  t.is(condition(world, 'ConfigMapAvailable'), 'False ConfigMapKeyNotFound');
  t.is(condition(world, 'Ready'), 'False RolloutHeld');
  t.regex(appOf(world).status!.conditions!.find((each) => each.type === 'Ready')!.message, /ConfigMap "files" lacks key "app.yaml"/);
  world.configMap('files', { 'app.yaml': 'x: 1' });
  await world.reconcile('app');
  world.sync();
  t.truthy(deploymentOf(world));
  const before = world.client.calls.length;
  world.configMap('extra', { MORE: '1' });
  await world.reconcile('app');
  t.deepEqual(world.writes(before), ['update deployments.apps ns/app', 'event RolloutTriggered', STATUS_WRITE]);
});

test('listed objects: one dropped from the list stays acquired until the rollout without it is recorded in status', async (t) => {
  const world = await convergedListed();
  editSpec(world, { ...LISTED, configMaps: [{ name: 'web' }] });
  const uses = recordUses(world);
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(uses, [
    ['ConfigMap/web', 'Secret/db', 'ConfigMap/extra', 'ConfigMap/files'],
    ['ConfigMap/web', 'Secret/db'],
  ]);
  t.deepEqual(world.writes(before), ['update deployments.apps ns/app', 'event RolloutTriggered', STATUS_WRITE]);
  t.deepEqual(
    appOf(world).status?.observedConfigMaps?.map((each) => each.name),
    ['web'],
  );
  t.is(deploymentOf(world)?.spec.template.spec.volumes, undefined, 'the volume of the dropped object is gone');
});

test('listed objects: optional turned off is drift: the Deployment is updated to require the object', async (t) => {
  const world = await convergedListed();
  editSpec(world, { ...LISTED, configMaps: [{ name: 'web', optional: true }] });
  await world.reconcile('app');
  world.sync();
  t.deepEqual(deploymentOf(world)?.spec.template.spec.containers[0]?.envFrom, [{ configMapRef: { name: 'web', optional: true } }]);
  editSpec(world, { ...LISTED, configMaps: [{ name: 'web' }] });
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before).slice(0, 1), ['update deployments.apps ns/app']);
  world.sync();
  t.deepEqual(deploymentOf(world)?.spec.template.spec.containers[0]?.envFrom, [{ configMapRef: { name: 'web', optional: false } }]);
});

test('listed objects: configMapName and a listed entry of the same ConfigMap combine: both projections, one rollout with both views', async (t) => {
  const world = new FakeWorld();
  world.configMap('web', { MODE: 'a', OTHER: '1' });
  world.app('app', { image: 'example/app:1', configMapName: 'web', configMaps: [{ name: 'web', mountPath: '/etc/web', keys: ['MODE'] }] });
  await world.reconcile('app');
  world.sync();
  const template = deploymentOf(world)!.spec.template;
  t.deepEqual(template.spec.containers[0]?.envFrom, [{ configMapRef: { name: 'web' } }]);
  t.deepEqual(template.spec.volumes, [
    { name: 'configmap-0', configMap: { name: 'web', items: [{ key: 'MODE', path: 'MODE' }], optional: false } },
  ]);
  const before = world.client.calls.length;
  world.configMap('web', { MODE: 'a', OTHER: '2' });
  await world.reconcile('app');
  t.deepEqual(
    world.writes(before),
    ['update deployments.apps ns/app', 'event RolloutTriggered', STATUS_WRITE],
    'the whole object rolls the seed field',
  );
  world.sync();
  t.like(appOf(world).status?.lastRollout, { trigger: 'ConfigMap', name: 'web' });
  t.is(appOf(world).status?.lastRollout?.keys, undefined, 'the whole object changed, not a listed key');
  world.configMap('web', { MODE: 'b', OTHER: '2' });
  await world.reconcile('app');
  world.sync();
  t.regex(appOf(world).status?.lastRollout?.message ?? '', /ConfigMap "web" .*ConfigMap "web" \(key MODE\)/);
});
