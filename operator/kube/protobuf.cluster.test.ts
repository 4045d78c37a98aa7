// The client's protobuf reads against JSON ones of the same objects: a real kube-apiserver answers ConfigMaps and
// Secrets in protobuf, the emulator in JSON, and either way the client hands out the same objects.
import test from 'ava';
import { KubeClient } from './client.js';
import { ApiError } from './errors.js';
import type { KubeObject, RawWatchEvent } from './objects.js';
import { CONFIGMAPS, type Resource, SECRETS } from './resources.js';
import { createNamespace } from './testing/admin-cluster.js';
import { stripManagedFields } from '../cache/transform.js';
import { selectedTargets, startCluster, type TestCluster } from '../../test/support/targets.js';

const NAMESPACE = 'protobuf';
const SECRET_VALUE = Buffer.from('a secret value, not to be printed');

/**
 * Objects with every field the decoder reads: unicode, empty values, every byte value, owners (an existing one, which
 * garbage collection leaves be), finalizers.
 */
function objects(ownerUid: string): { resource: Resource; body: KubeObject }[] {
  const metadata = (name: string) => ({
    name,
    labels: { app: 'web', 'example.com/tier': 'front' },
    annotations: { note: 'é ✓ 日本', empty: '' },
    ownerReferences: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'owner',
        uid: ownerUid,
        controller: true,
        blockOwnerDeletion: false,
      },
    ],
  });
  const everyByte = Buffer.from(Array.from({ length: 256 }, (_, index) => index));
  return [
    {
      resource: CONFIGMAPS,
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: metadata('plain'),
        data: { a: 'one', empty: '', text: 'ü\n\t"' },
      } as KubeObject,
    },
    {
      resource: CONFIGMAPS,
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { generateName: 'binary-' },
        binaryData: { bin: everyByte.toString('base64') },
        immutable: true,
      } as KubeObject,
    },
    {
      resource: CONFIGMAPS,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } } as KubeObject,
    },
    {
      resource: SECRETS,
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: metadata('opaque'),
        type: 'Opaque',
        data: { k: SECRET_VALUE.toString('base64'), bin: everyByte.toString('base64') },
      } as KubeObject,
    },
    {
      resource: SECRETS,
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'typed' }, type: 'example.com/custom', immutable: false } as KubeObject,
    },
  ];
}

/** What either client hands out, without the managedFields the decoder does not read. */
const comparable = <T extends KubeObject>(object: T): T => stripManagedFields(object);

for (const target of selectedTargets()) {
  let cluster: TestCluster;
  let protobuf: KubeClient;
  let json: KubeClient;
  test.before(async () => {
    cluster = await startCluster(target);
    protobuf = await KubeClient.fromKubeConfig(cluster.adminKubeConfig());
    json = await KubeClient.fromKubeConfig(cluster.adminKubeConfig(), { protobuf: false });
    await createNamespace(json, NAMESPACE);
    const owner = await json.create(CONFIGMAPS, NAMESPACE, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owner' },
    } as KubeObject);
    for (const { resource, body } of objects(owner.metadata.uid!)) await json.create(resource, NAMESPACE, body);
    // A deleted object held by its finalizer: deletionTimestamp and deletionGracePeriodSeconds set.
    await json.delete(CONFIGMAPS, NAMESPACE, 'held');
  });
  test.after.always(async () => {
    await json?.patch(CONFIGMAPS, NAMESPACE, 'held', 'merge', { metadata: { finalizers: null } }).catch(() => undefined);
    protobuf?.close();
    json?.close();
    await cluster?.stop();
  });

  test.serial(
    `[${target}] lists and gets of ConfigMaps and Secrets read the same objects as JSON, in protobuf from kube-apiserver`,
    async (t) => {
      for (const resource of [CONFIGMAPS, SECRETS]) {
        const formats: boolean[] = [];
        const viaProtobuf = await protobuf.list(resource, {
          namespace: NAMESPACE,
          onBytes: (_bytes, isProtobuf) => formats.push(isProtobuf),
        });
        // At exactly the revision the first read saw: any write in the cluster meanwhile (the API server's own Leases)
        // moves a list's resourceVersion.
        const viaJson = await json.list(resource, {
          namespace: NAMESPACE,
          resourceVersion: viaProtobuf.metadata.resourceVersion,
          resourceVersionMatch: 'Exact',
        });
        t.deepEqual(formats, [target === 'envtest'], `${resource.kind}: protobuf from kube-apiserver only`);
        t.deepEqual({ ...viaProtobuf, items: viaProtobuf.items.map(comparable) }, { ...viaJson, items: viaJson.items.map(comparable) });
        t.true(viaJson.items.length >= 2, `${resource.kind}: ${viaJson.items.map((item) => item.metadata.name).join(', ')}`);
        for (const item of viaJson.items) {
          const name = item.metadata.name!;
          t.deepEqual(
            comparable(await protobuf.get(resource, NAMESPACE, name)),
            comparable(await json.get(resource, NAMESPACE, name)),
            name,
          );
        }
      }
      const held = await protobuf.get(CONFIGMAPS, NAMESPACE, 'held');
      t.truthy(held.metadata.deletionTimestamp, 'the held object is being deleted');
    },
  );

  test.serial(`[${target}] an error answer of a protobuf read is a Status the client reads: code, reason and message`, async (t) => {
    const error = await t.throwsAsync(protobuf.get(SECRETS, NAMESPACE, 'missing'), { instanceOf: ApiError });
    t.is(error?.statusCode, 404);
    t.is(error?.status?.reason, 'NotFound');
    t.regex(error?.message ?? '', /secrets "missing" not found/);
  });

  test.serial(`[${target}] a watch of ConfigMaps delivers the same events as a JSON watch, in order`, async (t) => {
    const start = (await json.list(CONFIGMAPS, { namespace: NAMESPACE })).metadata.resourceVersion;
    const abort = new AbortController();
    t.teardown(() => abort.abort());
    const collect = async (client: KubeClient): Promise<RawWatchEvent<KubeObject>[]> => {
      const events: RawWatchEvent<KubeObject>[] = [];
      for await (const event of client.watch<KubeObject>(CONFIGMAPS, { namespace: NAMESPACE, resourceVersion: start }, abort.signal)) {
        if (event.type === 'BOOKMARK') continue;
        events.push(event.type === 'ERROR' ? event : { type: event.type, object: comparable(event.object) });
        if (event.type === 'DELETED' && event.object.metadata.name === 'last') break;
      }
      return events;
    };
    const both = Promise.all([collect(protobuf), collect(json)]);
    await json.create(CONFIGMAPS, NAMESPACE, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'last' },
      data: { v: '1' },
    } as KubeObject);
    await json.patch(CONFIGMAPS, NAMESPACE, 'last', 'merge', { data: { v: '2' }, binaryData: { b: 'AAE=' } });
    await json.delete(CONFIGMAPS, NAMESPACE, 'last');
    const [viaProtobuf, viaJson] = await both;
    t.deepEqual(
      viaJson.map((event) => event.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    t.deepEqual(viaProtobuf, viaJson);
  });
}
