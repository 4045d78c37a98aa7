// Upgrading from unkeyed Secret hashes: an older operator's annotation rolls nothing until the Secret changes.
import test from 'ava';
import { SECRET_HASH_ANNOTATION } from '../../api/customapp.js';
import { CUSTOM_APPS, type CustomApp } from '../customapp/custom-app.js';
import { contentHash } from '../dependencies/content-hash.js';
import { DEPLOYMENTS, EVENTS } from '../kube/resources.js';
import type { CoreEvent, Deployment } from '../kube/objects.js';
import { annotationForEvent, keyedForStatus, secretHashAnnotation } from './secret-hash-migration.js';
import { FakeWorld } from './testing/fake-world.js';

const SPEC = { image: 'example/app:1', configMapName: 'config', secretName: 'creds' };
const STATUS_WRITE = 'update customapps.app.example.com/status ns/app';
const plain = (data: Record<string, string>): string => contentHash({ data });

const deploymentOf = (world: FakeWorld): Deployment => world.client.stored<Deployment>(DEPLOYMENTS, 'ns', 'app')!;
const appOf = (world: FakeWorld): CustomApp => world.client.stored<CustomApp>(CUSTOM_APPS, 'ns', 'app')!;
const annotationOf = (world: FakeWorld): string | undefined =>
  deploymentOf(world).spec.template.metadata?.annotations?.[SECRET_HASH_ANNOTATION];

/**
 * A world as an operator before keyed hashes left it: the Deployment's secret-hash annotation and the status carry
 * the plain SHA-256 of the Secret's content `{ TOKEN: 't' }`.
 */
async function upgraded(): Promise<FakeWorld> {
  const world = new FakeWorld();
  world.configMap('config', { V: '1' });
  world.secret('creds', { TOKEN: 't' });
  world.app('app', SPEC);
  await world.reconcile('app');
  world.annotateTemplate('app', { [SECRET_HASH_ANNOTATION]: plain({ TOKEN: 't' }) });
  world.client.seed(CUSTOM_APPS, { ...appOf(world), status: { ...appOf(world).status, secretHash: plain({ TOKEN: 't' }) } });
  world.sync();
  return world;
}

test('an unkeyed annotation that still describes the Secret stays: no Deployment write, no Event; the status turns keyed at once', async (t) => {
  const world = await upgraded();
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before), [STATUS_WRITE]);
  t.is(annotationOf(world), plain({ TOKEN: 't' }), 'the pod template is untouched: nothing rolls');
  t.is(appOf(world).status?.secretHash, FakeWorld.secretHash({ TOKEN: 't' }, 'creds'));
  world.sync();
  const after = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(after), [], 'and it stays quiet');
});

test('the next change of the Secret writes the keyed hash, and the Event says "unkeyed" instead of the plain digits', async (t) => {
  const world = await upgraded();
  world.secret('creds', { TOKEN: 'u' });
  const before = world.client.calls.length;
  await world.reconcile('app');
  t.deepEqual(world.writes(before), ['update deployments.apps ns/app', 'event RolloutTriggered', STATUS_WRITE]);
  t.is(annotationOf(world), FakeWorld.secretHash({ TOKEN: 'u' }, 'creds'));
  const events = world.client.all<CoreEvent>(EVENTS).map((event) => event.message ?? '');
  const rollout = events.find((message) => message.startsWith('Rolling out'));
  t.is(rollout, `Rolling out Deployment "app": secret-hash unkeyed→${FakeWorld.secretHash({ TOKEN: 'u' }, 'creds').slice(0, 12)}`);
  t.false(events.join('\n').includes(plain({ TOKEN: 't' }).slice(0, 12)), 'no digit of the plain hash in an Event');
});

test('an unkeyed annotation of older content (the Secret changed during the upgrade) rolls to the keyed hash', async (t) => {
  const world = await upgraded();
  world.secret('creds', { TOKEN: 'changed while the operator was down' });
  await world.reconcile('app');
  t.is(annotationOf(world), FakeWorld.secretHash({ TOKEN: 'changed while the operator was down' }, 'creds'));
});

test('a rollout for another reason (a new image) takes the keyed hash along, instead of copying the plain one into a new ReplicaSet', async (t) => {
  const world = await upgraded();
  world.client.seed(CUSTOM_APPS, {
    ...appOf(world),
    spec: { ...SPEC, image: 'example/app:2' },
    metadata: { ...appOf(world).metadata, generation: 2 },
  });
  world.sync();
  await world.reconcile('app');
  t.is(deploymentOf(world).spec.template.spec.containers[0]?.image, 'example/app:2');
  t.is(annotationOf(world), FakeWorld.secretHash({ TOKEN: 't' }, 'creds'));
  const rollout = world.client.all<CoreEvent>(EVENTS).find((event) => event.reason === 'RolloutTriggered');
  t.regex(rollout?.message ?? '', /secret-hash unkeyed→[0-9a-f]{12}/);
});

test('a held rollout (its ConfigMap deleted) reads the unkeyed annotation back, and the status still gets the keyed hash', async (t) => {
  const world = await upgraded();
  world.configMap('config', undefined);
  await world.reconcile('app');
  t.is(annotationOf(world), plain({ TOKEN: 't' }), 'held: the Deployment is untouched');
  t.is(appOf(world).status?.secretHash, FakeWorld.secretHash({ TOKEN: 't' }, 'creds'));
  t.is(appOf(world).status?.conditions?.find((condition) => condition.type === 'Ready')?.reason, 'RolloutHeld');
});

test('keyedForStatus maps an unkeyed hash to the keyed one only while it describes the Secret, and drops it otherwise', (t) => {
  const present = { phase: 'present', hash: 'k'.repeat(32), unkeyedHash: 'a'.repeat(64) };
  t.is(keyedForStatus('a'.repeat(64), present), 'k'.repeat(32));
  t.is(keyedForStatus('b'.repeat(64), present), undefined);
  t.is(keyedForStatus('a'.repeat(64), { phase: 'missing' }), undefined);
  t.is(keyedForStatus('k'.repeat(32), { phase: 'missing' }), 'k'.repeat(32), 'a keyed hash is kept as it is');
  t.is(keyedForStatus(undefined, present), undefined);
});

test('secretHashAnnotation keeps only an annotation equal to the unkeyed hash of the current content', (t) => {
  const withAnnotation = (value: string | undefined): Deployment =>
    ({ spec: { template: { metadata: { annotations: value === undefined ? {} : { [SECRET_HASH_ANNOTATION]: value } } } } }) as Deployment;
  const secret = { hash: 'k'.repeat(32), unkeyedHash: 'a'.repeat(64) };
  t.is(secretHashAnnotation(secret, withAnnotation('a'.repeat(64))), 'a'.repeat(64));
  t.is(secretHashAnnotation(secret, withAnnotation('b'.repeat(64))), 'k'.repeat(32));
  t.is(secretHashAnnotation(secret, withAnnotation(undefined)), 'k'.repeat(32));
  t.is(secretHashAnnotation(secret, undefined), 'k'.repeat(32));
  t.is(
    secretHashAnnotation({ hash: 'k'.repeat(32) }, withAnnotation('a'.repeat(64))),
    'k'.repeat(32),
    'a ConfigMap-like state has no unkeyed hash',
  );
});

test('annotationForEvent hides unkeyed Secret hashes only', (t) => {
  t.is(annotationForEvent(SECRET_HASH_ANNOTATION, 'a'.repeat(64)), 'unkeyed');
  t.is(annotationForEvent(SECRET_HASH_ANNOTATION, '0123456789abcdef0123456789abcdef'), '0123456789ab');
  t.is(annotationForEvent('app.example.com/config-hash', 'a'.repeat(64)), 'aaaaaaaaaaaa');
  t.is(annotationForEvent(SECRET_HASH_ANNOTATION, undefined), 'none');
});
