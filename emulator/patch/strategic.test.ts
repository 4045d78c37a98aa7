// Strategic merge patch on built-in schemas: merge keys, primitive sets, directives and element order.
import test from 'ava';
import { builtinType } from '../openapi/builtin.js';
import { applyStrategicMergePatch } from './strategic.js';

const podSpec = builtinType('io.k8s.api.core.v1.PodSpec');
const spec = {
  containers: [
    { name: 'a', image: 'a:1', ports: [{ containerPort: 80 }, { containerPort: 81 }], env: [{ name: 'X', value: '1' }] },
    { name: 'b', image: 'b:1' },
  ],
  volumes: [{ name: 'v', emptyDir: {} }],
};

test('containers merge by name and ports by containerPort, keeping what the patch does not mention', (t) => {
  const out = applyStrategicMergePatch(spec, { containers: [{ name: 'a', image: 'a:2', ports: [{ containerPort: 82 }] }] }, podSpec) as any;
  t.is(out.containers[0].image, 'a:2');
  // Items the live list lacks come first unless $setElementOrder says otherwise (as on envtest).
  t.deepEqual(
    out.containers[0].ports.map((p: any) => p.containerPort),
    [82, 80, 81],
  );
  t.deepEqual(out.containers[0].env, [{ name: 'X', value: '1' }]);
  t.is(out.containers[1].name, 'b');
  t.is(spec.containers[0].ports!.length, 2, 'the original is not modified');
});

test('$patch delete removes an item, $patch replace replaces a list or a map, null removes a field', (t) => {
  const deleted = applyStrategicMergePatch(spec, { containers: [{ name: 'b', $patch: 'delete' }] }, podSpec) as any;
  t.deepEqual(
    deleted.containers.map((c: any) => c.name),
    ['a'],
  );
  const replaced = applyStrategicMergePatch(spec, { volumes: [{ $patch: 'replace' }, { name: 'w', emptyDir: {} }] }, podSpec) as any;
  t.deepEqual(replaced.volumes, [{ name: 'w', emptyDir: {} }]);
  const nulled = applyStrategicMergePatch(spec, { containers: [{ name: 'a', env: null }] }, podSpec) as any;
  t.is(nulled.containers[0].env, undefined);
  t.throws(() => applyStrategicMergePatch(spec, { $patch: 'bogus' }, podSpec), {
    message: 'unknown patch type: bogus in map: map[$patch:bogus]',
  });
});

test('$setElementOrder orders the merged list, $retainKeys drops unlisted keys, $deleteFromPrimitiveList removes values', (t) => {
  const ordered = applyStrategicMergePatch(
    spec,
    { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'a', image: 'a:3' }] },
    podSpec,
  ) as any;
  t.deepEqual(
    ordered.containers.map((c: any) => c.name),
    ['b', 'a'],
  );
  const strategy = builtinType('io.k8s.api.apps.v1.DeploymentSpec');
  const retained = applyStrategicMergePatch(
    { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
    { strategy: { $retainKeys: ['type'], type: 'Recreate' } },
    strategy,
  ) as any;
  t.deepEqual(retained.strategy, { type: 'Recreate' });
  const meta = builtinType('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  // New values of a merged primitive list come first, as the apiserver orders them (checked against envtest).
  t.deepEqual((applyStrategicMergePatch({ finalizers: ['a', 'b'] }, { finalizers: ['c'] }, meta) as any).finalizers, ['c', 'a', 'b']);
  t.deepEqual(
    (applyStrategicMergePatch({ finalizers: ['a', 'b'] }, { '$deleteFromPrimitiveList/finalizers': ['a'] }, meta) as any).finalizers,
    ['b'],
  );
});
