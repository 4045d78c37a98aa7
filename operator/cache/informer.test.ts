// Tests of the informer on a scripted client: one shared watch, changes after the store, indexes, synced$, teardown.
import test from 'ava';
import { map } from 'rxjs';
import { CONFIGMAPS } from '../kube/resources.js';
import { VirtualClock, settle } from '../../test/support/virtual-time.js';
import { ScriptedClient, type ConfigMap } from '../watch/testing/scripted-client.js';
import { informer } from './informer.js';

const cm = (name: string, resourceVersion: string, team: string): ConfigMap => ({
  metadata: { namespace: 'ns', name, resourceVersion, labels: { team } },
});

test('two subscribers share one watch; each change is emitted with the store already updated; the index follows', async (t) => {
  const clock = new VirtualClock();
  const client = new ScriptedClient(
    [{ metadata: { resourceVersion: '10' }, items: [cm('a', '3', 'blue'), cm('b', '4', 'red')] }],
    [
      [
        { type: 'MODIFIED', object: cm('a', '11', 'red') },
        { type: 'DELETED', object: cm('b', '12', 'red') },
      ],
    ],
  );
  const apps = informer<ConfigMap>(
    client,
    CONFIGMAPS,
    { namespace: 'ns' },
    { byTeam: (object) => [object.metadata.labels!.team!] },
    { scheduler: clock },
  );
  const synced: boolean[] = [];
  apps.synced$.subscribe((value) => synced.push(value));
  const seen: string[] = [];
  const first = apps.events$
    .pipe(map((change) => `${change.type} ${change.key}: ${apps.store.byIndex('byTeam', 'red').join(',') || 'none'} red`))
    .subscribe((line) => seen.push(line));
  const second = apps.events$.subscribe();
  await settle(50);
  t.deepEqual(seen, ['apply ns/a: ns/b red', 'apply ns/b: ns/b red', 'apply ns/a: ns/b,ns/a red', 'delete ns/b: ns/a red']);
  t.deepEqual(synced, [false, true]);
  t.is(client.lists.length, 1, 'one list for both subscribers');
  t.is(client.watches.length, 1, 'one watch for both subscribers');
  first.unsubscribe();
  await settle(20);
  t.is(client.open, 1, 'the second subscriber keeps the watch');
  second.unsubscribe();
  await settle(20);
  t.is(client.open, 0, 'the last unsubscribe stops it');
  t.deepEqual(apps.store.keys(), ['ns/a'], 'the store keeps its last content');
});
