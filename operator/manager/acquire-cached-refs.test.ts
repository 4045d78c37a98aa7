// acquireCachedRefs: before the workers start, only the namespaces that will collapse get their refs acquired at once.
import test from 'ava';
import type { CustomApp } from '../customapp/custom-app.js';
import type { DependencyRef } from '../dependencies/source.js';
import { acquireCachedRefs } from './lifecycle.js';

const app = (namespace: string, name: string, configMapName: string, deleting = false): CustomApp =>
  ({
    apiVersion: 'app.example.com/v1',
    kind: 'CustomApp',
    metadata: { namespace, name, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { image: 'example/app:1', configMapName },
  }) as CustomApp;

test('the apps of a namespace past the collapse threshold hold their refs at once; smaller namespaces and deletions wait for their reconciles', (t) => {
  const used = new Map<string, readonly DependencyRef[]>();
  const parts = {
    dependencies: {
      use: (owner: string, refs: readonly DependencyRef[]) => used.set(owner, refs),
      batch: (useAll: () => void) => useAll(),
    },
    caches: { deployments: { get: () => undefined } },
  } as unknown as Parameters<typeof acquireCachedRefs>[0];
  const big = Array.from({ length: 12 }, (_, index) => app('big', `app-${index}`, `config-${index % 11}`));
  const small = [app('small', 'a', 'x'), app('small', 'b', 'y')];
  const acquired = acquireCachedRefs(parts, [...big, ...small, app('big', 'gone', 'config-0', true)], 10);
  t.deepEqual([...used.keys()].sort(), big.map((each) => `big/${each.metadata.name}`).sort());
  t.deepEqual(used.get('big/app-11'), [{ kind: 'ConfigMap', namespace: 'big', name: 'config-0' }]);
  t.deepEqual(
    acquired.map((ref) => ref.name).sort(),
    Array.from({ length: 11 }, (_, index) => `config-${index}`).sort(),
    'each ref once: what the workers wait for',
  );
});

test('a source without batch acquires nothing before the workers start: its reconciles acquire the refs', (t) => {
  const used: string[] = [];
  const parts = {
    dependencies: { use: (owner: string) => used.push(owner) },
    caches: { deployments: { get: () => undefined } },
  } as unknown as Parameters<typeof acquireCachedRefs>[0];
  const acquired = acquireCachedRefs(
    parts,
    Array.from({ length: 12 }, (_, index) => app('big', `app-${index}`, `config-${index}`)),
    10,
  );
  t.deepEqual(used, []);
  t.deepEqual(acquired, [], 'nothing to wait for');
});
