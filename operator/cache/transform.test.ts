// Tests of the cache transforms: managedFields dropped, everything else kept, events rewritten.
import test from 'ava';
import { map } from 'rxjs';
import { CONFIGMAPS } from '../kube/resources.js';
import { VirtualClock, settle } from '../../test/support/virtual-time.js';
import { ScriptedClient, type ConfigMap } from '../watch/testing/scripted-client.js';
import { informer } from './informer.js';
import { stripManagedFields } from './transform.js';

const managed = [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:data': { 'f:key': {} } } }];
const cm = (name: string, resourceVersion: string): ConfigMap =>
  ({
    metadata: { namespace: 'ns', name, resourceVersion, uid: `uid-${name}`, labels: { team: 'blue' }, managedFields: managed },
    data: { key: name },
  }) as ConfigMap;

test('stripManagedFields drops metadata.managedFields only, without touching its input', (t) => {
  const object = cm('a', '3');
  const stripped = stripManagedFields(object);
  t.false('managedFields' in stripped.metadata);
  t.deepEqual(stripped, {
    metadata: { namespace: 'ns', name: 'a', resourceVersion: '3', uid: 'uid-a', labels: { team: 'blue' } },
    data: { key: 'a' },
  });
  t.deepEqual(object.metadata.managedFields, managed, 'the input is unchanged');
  const bare = stripped;
  t.is(stripManagedFields(bare), bare, 'an object without managedFields is returned as is');
});

test('an informer caches and emits listed, watched and deleted objects without managedFields', async (t) => {
  const clock = new VirtualClock();
  const client = new ScriptedClient(
    [{ metadata: { resourceVersion: '10' }, items: [cm('a', '3')] }],
    [
      [
        { type: 'ADDED', object: cm('b', '11') },
        { type: 'DELETED', object: cm('a', '12') },
      ],
    ],
  );
  const configMaps = informer<ConfigMap>(client, CONFIGMAPS, { namespace: 'ns' }, {}, { scheduler: clock });
  const seen: string[] = [];
  const subscription = configMaps.events$
    .pipe(map((change) => `${change.type} ${change.key} ${'managedFields' in change.object.metadata ? 'with' : 'without'}`))
    .subscribe((line) => seen.push(line));
  await settle(50);
  t.deepEqual(seen, ['apply ns/a without', 'apply ns/b without', 'delete ns/a without']);
  t.false('managedFields' in configMaps.store.get('ns/b')!.metadata);
  t.is(configMaps.store.get('ns/b')!.data?.key, 'b');
  subscription.unsubscribe();
  await settle(20);
  t.is(client.open, 0);
});

test('a transform of its own replaces the default', async (t) => {
  const clock = new VirtualClock();
  const client = new ScriptedClient([{ metadata: { resourceVersion: '10' }, items: [cm('a', '3')] }], [[]]);
  const configMaps = informer<ConfigMap>(
    client,
    CONFIGMAPS,
    { namespace: 'ns' },
    {},
    { scheduler: clock },
    { transform: (object) => object },
  );
  const subscription = configMaps.events$.subscribe();
  await settle(50);
  t.deepEqual(configMaps.store.get('ns/a')!.metadata.managedFields, managed);
  subscription.unsubscribe();
  await settle(20);
});
