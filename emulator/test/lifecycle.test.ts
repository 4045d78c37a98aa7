// Deletion and lifecycle in the emulator: namespace deletion, propagation policies, CRD deletion, the scale
// subresource, watch options (legacy paths, timeoutSeconds, resourceVersion=0) and kubectl's protobuf writes.
import test from 'ava';
import { eventually } from '../../test/support/eventually.js';
import { distDir, emulatorFixture, type EmulatorFixture, openWatch } from './support.js';

let fx: EmulatorFixture;

test.before(async () => {
  fx = await emulatorFixture();
  await fx.apply(`${distDir}customapp-crd.k8s.yaml`);
});

test.after.always(async () => {
  await fx?.close();
});

const ns = async (name: string) => fx.admin('POST', '/api/v1/namespaces', { metadata: { name } });
const app = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'app.example.com/v1',
  kind: 'CustomApp',
  metadata: { name, ...extra },
  spec: { image: 'i' },
});

test('deleting a namespace marks it Terminating, deletes its content, then removes it', async (t) => {
  await ns('doomed');
  await fx.admin('POST', '/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'a' } });
  await fx.admin('POST', '/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'held', finalizers: ['example.com/hold'] } });
  const deleted = await fx.admin('DELETE', '/api/v1/namespaces/doomed');
  t.is(deleted.status, 200);
  t.is(deleted.body.status.phase, 'Terminating');
  const refused = await fx.admin('POST', '/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'late' } });
  t.is(refused.status, 403);
  t.is(
    refused.body.message,
    'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
  );
  await eventually(
    'the content to go',
    async () => ((await fx.admin('GET', '/api/v1/namespaces/doomed/configmaps/a')).status === 404 ? true : undefined),
    3000,
  );
  t.is((await fx.admin('GET', '/api/v1/namespaces/doomed')).status, 200, 'kept while an object with a finalizer remains');
  await fx.admin('PATCH', '/api/v1/namespaces/doomed/configmaps/held', { metadata: { finalizers: null } }, 'application/merge-patch+json');
  await eventually(
    'the namespace to go',
    async () => ((await fx.admin('GET', '/api/v1/namespaces/doomed')).status === 404 ? true : undefined),
    3000,
  );
  t.pass();
});

test('propagationPolicy Orphan keeps dependents and drops their ownerReference; Foreground deletes them first', async (t) => {
  await ns('propagation');
  const base = '/apis/app.example.com/v1/namespaces/propagation/customapps';
  const owned = async (owner: any, name: string) =>
    fx.admin('POST', '/api/v1/namespaces/propagation/configmaps', {
      metadata: {
        name,
        ownerReferences: [
          {
            apiVersion: 'app.example.com/v1',
            kind: 'CustomApp',
            name: owner.metadata.name,
            uid: owner.metadata.uid,
            blockOwnerDeletion: true,
          },
        ],
      },
    });
  const orphaner = (await fx.admin('POST', base, app('orphaner'))).body;
  await owned(orphaner, 'orphan');
  const orphaning = await fx.admin('DELETE', `${base}/orphaner?propagationPolicy=Orphan`);
  t.deepEqual(orphaning.body.metadata.finalizers, ['orphan']);
  await eventually('the owner to go', async () => ((await fx.admin('GET', `${base}/orphaner`)).status === 404 ? true : undefined), 3000);
  const kept = await fx.admin('GET', '/api/v1/namespaces/propagation/configmaps/orphan');
  t.is(kept.status, 200);
  t.is(kept.body.metadata.ownerReferences, undefined);

  const parent = (await fx.admin('POST', base, app('parent'))).body;
  await owned(parent, 'child');
  const foreground = await fx.admin('DELETE', `${base}/parent`, {
    kind: 'DeleteOptions',
    apiVersion: 'v1',
    propagationPolicy: 'Foreground',
  });
  t.deepEqual(foreground.body.metadata.finalizers, ['foregroundDeletion']);
  await eventually(
    'the child to go',
    async () => ((await fx.admin('GET', '/api/v1/namespaces/propagation/configmaps/child')).status === 404 ? true : undefined),
    3000,
  );
  await eventually('the parent to go', async () => ((await fx.admin('GET', `${base}/parent`)).status === 404 ? true : undefined), 3000);
  t.pass();
});

test('deleting a CRD deletes its custom resources, then the CRD, and discovery forgets it', async (t) => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.test.example.com' },
    spec: {
      group: 'test.example.com',
      names: { kind: 'Widget', plural: 'widgets' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
  t.is((await fx.admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status, 201);
  t.is((await fx.admin('GET', '/apis/test.example.com/v1')).status, 200);
  const widget = await fx.admin('POST', '/apis/test.example.com/v1/namespaces/default/widgets', {
    apiVersion: 'test.example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w' },
    anything: { goes: 1 },
  });
  t.is(widget.status, 201);
  t.deepEqual(widget.body.anything, { goes: 1 });
  const deleting = await fx.admin('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.test.example.com');
  t.deepEqual(deleting.body.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
  await eventually(
    'the CRD to go',
    async () =>
      (await fx.admin('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.test.example.com')).status === 404
        ? true
        : undefined,
    3000,
  );
  t.is((await fx.admin('GET', '/apis/test.example.com/v1')).status, 404);
});

test('the scale subresource reads and writes spec.replicas', async (t) => {
  await ns('scaling');
  await fx.admin('POST', '/apis/apps/v1/namespaces/scaling/deployments', {
    metadata: { name: 'd' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  });
  const scale = await fx.admin('GET', '/apis/apps/v1/namespaces/scaling/deployments/d/scale');
  t.like(scale.body, { kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 1 }, status: { replicas: 0, selector: 'a=b' } });
  const scaled = await fx.admin(
    'PATCH',
    '/apis/apps/v1/namespaces/scaling/deployments/d/scale',
    { spec: { replicas: 4 } },
    'application/merge-patch+json',
  );
  t.is(scaled.body.spec.replicas, 4);
  const d = await fx.admin('GET', '/apis/apps/v1/namespaces/scaling/deployments/d');
  t.is(d.body.spec.replicas, 4);
  t.is(d.body.metadata.generation, 2);
});

test('watches: legacy /watch/ paths, resourceVersion=0 initial events, timeoutSeconds ends the stream', async (t) => {
  await ns('watching');
  await fx.admin('POST', '/api/v1/namespaces/watching/configmaps', { metadata: { name: 'one' } });
  const legacy = await openWatch(
    fx.emulator.url,
    fx.emulator.adminToken,
    '/api/v1/watch/namespaces/watching/configmaps?resourceVersion=0&timeoutSeconds=1',
  );
  t.like(await legacy.next(), { type: 'ADDED', object: { metadata: { name: 'one' } } });
  t.is(await legacy.next(3000), undefined, 'the stream ends after timeoutSeconds');
  const single = await openWatch(
    fx.emulator.url,
    fx.emulator.adminToken,
    '/api/v1/watch/namespaces/watching/configmaps/one?timeoutSeconds=1',
  );
  t.like(await single.next(), { type: 'ADDED', object: { metadata: { name: 'one' } } });
  single.close();
  const future = await fx.admin('GET', '/api/v1/namespaces/watching/configmaps?resourceVersion=999999999');
  t.is(future.status, 504);
  t.like(future.body, { reason: 'Timeout', details: { causes: [{ reason: 'ResourceVersionTooLarge' }], retryAfterSeconds: 1 } });
});

test('kubectl create (protobuf bodies) makes the same objects as JSON would', async (t) => {
  await ns('created');
  for (const args of [
    ['create', 'deployment', 'web', '--image=nginx:1.27', '--port=80', '--replicas=2', '-n', 'created'],
    ['create', 'serviceaccount', 'robot', '-n', 'created'],
    ['create', 'service', 'clusterip', 'web', '--tcp=80:8080', '-n', 'created'],
    ['create', 'role', 'reader', '--verb=get,list', '--resource=configmaps', '-n', 'created'],
    ['create', 'rolebinding', 'reader', '--role=reader', '--serviceaccount=created:robot', '-n', 'created'],
  ]) {
    const out = await fx.kubectl(args);
    t.is(out.code, 0, `${args.join(' ')}: ${out.stderr}`);
  }
  const web = await fx.admin('GET', '/apis/apps/v1/namespaces/created/deployments/web');
  t.is(web.body.spec.replicas, 2);
  t.deepEqual(web.body.spec.template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
  const svc = await fx.admin('GET', '/api/v1/namespaces/created/services/web');
  t.deepEqual(svc.body.spec.ports, [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }]);
  const can = await fx.kubectl(['auth', 'can-i', 'list', 'configmaps', '-n', 'created', '--as', 'system:serviceaccount:created:robot']);
  t.is(can.stdout.trim(), 'yes');
});
