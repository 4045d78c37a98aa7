// Tests of the API client against each target: verbs, errors as ApiError, watch streams, and request counting.
import test from 'ava';
import { KubeClient } from './client.js';
import type { KubeObject } from './objects.js';
import { ApiError, isAlreadyExists, isAnswerTooLarge, isConflict, isNotFound } from './errors.js';
import { CONFIGMAPS } from './resources.js';
import { connectionFromKubeConfig } from './connection.js';
import { selectedTargets, type TestCluster } from '../../test/support/targets.js';
import { recordedAdminCluster } from './testing/admin-cluster.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

for (const target of selectedTargets()) {
  let cluster: TestCluster;
  let client: KubeClient;
  const samples = recordedAdminCluster(test, target, (admin) => ({ cluster, client } = admin));

  const configMap = (name: string, data: Record<string, string>): ConfigMap => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data,
  });

  test(`[${target}] create, get, patch, replace and delete round-trip, with errors as ApiError`, async (t) => {
    const created = await client.create(CONFIGMAPS, 'default', configMap('round-trip', { a: '1' }));
    t.is(created.metadata.name, 'round-trip');
    t.truthy(created.metadata.resourceVersion);
    const duplicate = await t.throwsAsync(client.create(CONFIGMAPS, 'default', configMap('round-trip', {})));
    t.true(isAlreadyExists(duplicate), String(duplicate));
    const patched = await client.patch<ConfigMap>(CONFIGMAPS, 'default', 'round-trip', 'merge', { data: { b: '2' } });
    t.deepEqual(patched.data, { a: '1', b: '2' });
    const stale = await t.throwsAsync(client.replace(CONFIGMAPS, 'default', 'round-trip', { ...created, data: { c: '3' } }));
    t.true(isConflict(stale), String(stale));
    const got = await client.get<ConfigMap>(CONFIGMAPS, 'default', 'round-trip');
    t.deepEqual(got.data, { a: '1', b: '2' });
    await client.delete(CONFIGMAPS, 'default', 'round-trip');
    const missing = await t.throwsAsync(client.get(CONFIGMAPS, 'default', 'round-trip'));
    t.true(isNotFound(missing));
    t.true(missing instanceof ApiError);
    t.is((missing as ApiError).reason, 'NotFound');
  });

  test(`[${target}] a watch from a list's resourceVersion delivers later changes, and a field selector narrows it`, async (t) => {
    const list = await client.list<ConfigMap>(CONFIGMAPS, { namespace: 'default' });
    const controller = new AbortController();
    const events = client.watch<ConfigMap>(
      CONFIGMAPS,
      {
        namespace: 'default',
        resourceVersion: list.metadata.resourceVersion,
        fieldSelector: 'metadata.name=watched',
        allowWatchBookmarks: true,
      },
      controller.signal,
    );
    await client.create(CONFIGMAPS, 'default', configMap('unwatched', { x: '1' }));
    await client.create(CONFIGMAPS, 'default', configMap('watched', { x: '1' }));
    await client.patch(CONFIGMAPS, 'default', 'watched', 'merge', { data: { x: '2' } });
    const seen: string[] = [];
    for await (const event of events) {
      if (event.type === 'BOOKMARK') continue;
      seen.push(`${event.type} ${'metadata' in event.object ? event.object.metadata.name : ''}`);
      if (seen.length === 2) break;
    }
    controller.abort();
    t.deepEqual(seen, ['ADDED watched', 'MODIFIED watched']);
  });

  test(`[${target}] a write still waiting for its credentials when the client is fenced is refused and never reaches the server`, async (t) => {
    // An exec credential plugin or a token file read: the credentials come when the test says, after the fence.
    const connection = await connectionFromKubeConfig(cluster.adminKubeConfig());
    let asked!: () => void;
    const askedForCredentials = new Promise<void>((resolve) => {
      asked = resolve;
    });
    let hand!: () => void;
    const credentialsReady = new Promise<void>((resolve) => {
      hand = resolve;
    });
    const slow = new KubeClient({
      ...connection,
      authHeaders: async () => {
        asked();
        await credentialsReady;
        return connection.authHeaders();
      },
    });
    try {
      const write = slow.create(CONFIGMAPS, 'default', configMap('fenced-in-auth', { a: '1' }));
      await askedForCredentials;
      slow.fence('leadership lost');
      hand();
      const refused = await t.throwsAsync(write);
      t.regex(refused?.message ?? '', /fenced: leadership lost/);
      const missing = await t.throwsAsync(client.get(CONFIGMAPS, 'default', 'fenced-in-auth'));
      t.true(isNotFound(missing), 'the write never reached the server');
    } finally {
      slow.close();
    }
  });

  test(`[${target}] a list answer larger than maxBytes is refused as AnswerTooLarge once that many bytes are read`, async (t) => {
    const namespace = 'default';
    const large = 'x'.repeat(40_000);
    for (const name of ['cap-a', 'cap-b', 'cap-c']) {
      await client.create(CONFIGMAPS, namespace, { ...configMap(name, { large }), metadata: { name, labels: { cap: 'yes' } } });
    }
    const options = { namespace, labelSelector: 'cap=yes', maxBytes: 100_000 };
    const refused = await t.throwsAsync(client.list<ConfigMap>(CONFIGMAPS, { ...options, limit: 3 }));
    t.true(isAnswerTooLarge(refused), String(refused));
    t.regex(String(refused), /larger than 100000 bytes/);
    t.notRegex(String(refused), /xxxx/, 'no payload quoted');
    const pages = await client.list<ConfigMap>(CONFIGMAPS, { ...options, limit: 2 });
    t.is(pages.items.length, 2, 'two objects fit in the budget');
  });

  test(`[${target}] every request is reported with its verb and resource`, async (t) => {
    const before = samples.length;
    await client.list(CONFIGMAPS, { namespace: 'kube-system' });
    await t.throwsAsync(client.get(CONFIGMAPS, 'kube-system', 'nope'));
    const mine = samples.slice(before).filter((sample) => sample.namespace === 'kube-system');
    t.deepEqual(
      mine.map((sample) => `${sample.verb} ${sample.resource} ${sample.code}`),
      ['list configmaps 200', 'get configmaps 404'],
    );
  });
}
