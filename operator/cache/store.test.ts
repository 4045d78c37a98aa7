// Tests of the Store: keys, indexes that follow every write, the atomic replace and its diff, the synced flag.
import test from 'ava';
import fc from 'fast-check';
import type { KubeObject } from '../kube/objects.js';
import { objectKey, Store } from './store.js';

interface App extends KubeObject {
  spec: { configMapName: string; secretName?: string };
}

const app = (name: string, resourceVersion: string, configMapName: string, secretName?: string): App => ({
  metadata: { namespace: 'ns', name, resourceVersion, uid: `uid-${name}` },
  spec: { configMapName, secretName },
});

function appStore(): Store<App> {
  return new Store<App>({
    byConfigMap: (object) => [`${object.metadata.namespace}/${object.spec.configMapName}`],
    bySecret: (object) => (object.spec.secretName ? [`${object.metadata.namespace}/${object.spec.secretName}`] : []),
  });
}

test('objects are keyed namespace/name, and an index answers the keys that map to a value', (t) => {
  const store = appStore();
  store.apply(app('a', '1', 'shared', 'creds'));
  store.apply(app('b', '2', 'shared'));
  store.apply(app('c', '3', 'own'));
  t.is(objectKey(app('a', '1', 'x')), 'ns/a');
  t.deepEqual(store.byIndex('byConfigMap', 'ns/shared').sort(), ['ns/a', 'ns/b']);
  t.deepEqual(store.byIndex('bySecret', 'ns/creds'), ['ns/a']);
  t.deepEqual(store.byIndex('bySecret', 'ns/none'), []);
  t.throws(() => store.byIndex('byImage', 'x'), { message: 'store has no index "byImage" (it has: byConfigMap, bySecret)' });
});

test('an update moves the object between index values, and a delete removes it from all', (t) => {
  const store = appStore();
  store.apply(app('a', '1', 'old', 'creds'));
  t.true(store.apply(app('a', '2', 'new')));
  t.deepEqual(store.byIndex('byConfigMap', 'ns/old'), []);
  t.deepEqual(store.byIndex('byConfigMap', 'ns/new'), ['ns/a']);
  t.deepEqual(store.byIndex('bySecret', 'ns/creds'), []);
  t.false(store.apply(app('a', '2', 'new')), 'the same resourceVersion is no change');
  t.is(store.delete(app('a', '9', 'new'))?.metadata.resourceVersion, '2');
  t.is(store.delete(app('a', '9', 'new')), undefined);
  t.deepEqual(store.byIndex('byConfigMap', 'ns/new'), []);
  t.is(store.size, 0);
});

test('replace swaps the whole content, answers the diff and marks the store synced once', (t) => {
  const store = appStore();
  const synced: boolean[] = [];
  const subscription = store.synced$.subscribe((value) => synced.push(value));
  store.apply(app('a', '1', 'x'));
  store.apply(app('b', '1', 'x'));
  const changes = store.replace([app('a', '1', 'x'), app('c', '4', 'y')]);
  t.deepEqual(
    changes.map((change) => `${change.type} ${change.key}`),
    ['delete ns/b', 'apply ns/c'],
  );
  t.deepEqual(store.keys().sort(), ['ns/a', 'ns/c']);
  t.deepEqual(store.byIndex('byConfigMap', 'ns/x'), ['ns/a']);
  store.replace([]);
  t.is(store.size, 0);
  t.deepEqual(synced, [false, true], 'synced$ replays the current value and emits each change once');
  t.true(store.synced);
  subscription.unsubscribe();
});

test('model: after any sequence of applies, deletes and replaces, each index answers exactly the keys whose object maps to the value', (t) => {
  const names = ['a', 'b', 'c', 'd'];
  const values = ['x', 'y', 'z'];
  const write = fc.oneof(
    fc.record({ op: fc.constant('apply' as const), name: fc.constantFrom(...names), configMap: fc.constantFrom(...values) }),
    fc.record({ op: fc.constant('delete' as const), name: fc.constantFrom(...names) }),
    fc.record({
      op: fc.constant('replace' as const),
      objects: fc.uniqueArray(fc.record({ name: fc.constantFrom(...names), configMap: fc.constantFrom(...values) }), {
        selector: (object) => object.name,
      }),
    }),
  );
  fc.assert(
    fc.property(fc.array(write, { maxLength: 40 }), (writes) => {
      const store = appStore();
      const model = new Map<string, string>();
      let version = 0;
      for (const step of writes) {
        version += 1;
        if (step.op === 'apply') {
          store.apply(app(step.name, String(version), step.configMap));
          model.set(`ns/${step.name}`, step.configMap);
        } else if (step.op === 'delete') {
          store.delete(app(step.name, String(version), 'x'));
          model.delete(`ns/${step.name}`);
        } else {
          store.replace(step.objects.map((object) => app(object.name, String(version), object.configMap)));
          model.clear();
          for (const object of step.objects) model.set(`ns/${object.name}`, object.configMap);
        }
        for (const value of values) {
          const expected = [...model].filter(([, configMap]) => configMap === value).map(([key]) => key);
          if (JSON.stringify(store.byIndex('byConfigMap', `ns/${value}`).sort()) !== JSON.stringify(expected.sort())) return false;
        }
      }
      return true;
    }),
    { verbose: true },
  );
  t.pass();
});
