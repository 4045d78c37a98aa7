// The write record (`recordWrites`): each write with its user, user agent, object and times; reads and refusals' absence.
import test from 'ava';
import { call, emulatorFixture } from './support.js';

test('with recordWrites every write is recorded with its user, user agent, object, times and code; reads are not', async (t) => {
  const fx = await emulatorFixture({ recordWrites: true });
  t.teardown(() => fx.close());
  await fx.admin('POST', '/api/v1/namespaces', { metadata: { name: 'recorded' } });
  const token = fx.emulator.serviceAccountToken('recorded', 'writer');
  const asWriter = (method: string, path: string, body?: unknown, contentType?: string) =>
    fetch(new URL(path, fx.emulator.url), {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        'user-agent': 'shard-a/1.0',
        ...(contentType ? { 'content-type': contentType } : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  fx.emulator.writes.reset();
  const before = performance.timeOrigin + performance.now();
  await fx.admin('POST', '/api/v1/namespaces/recorded/configmaps', { metadata: { name: 'a' } });
  await fx.admin('GET', '/api/v1/namespaces/recorded/configmaps/a');
  await fx.admin('PATCH', '/api/v1/namespaces/recorded/configmaps/a', { data: { x: '1' } }, 'application/merge-patch+json');
  const refused = await asWriter('DELETE', '/api/v1/namespaces/recorded/configmaps/a');
  t.is(refused.status, 403, 'the ServiceAccount has no grant');
  await fx.admin('DELETE', '/api/v1/namespaces/recorded/configmaps/a');
  const after = performance.timeOrigin + performance.now();

  const writes = fx.emulator.writes.writes();
  t.deepEqual(
    writes.map(({ verb, resource, namespace, name, user, code }) => ({ verb, resource, namespace, name, user, code })),
    [
      { verb: 'create', resource: 'configmaps', namespace: 'recorded', name: 'a', user: 'admin', code: 201 },
      { verb: 'patch', resource: 'configmaps', namespace: 'recorded', name: 'a', user: 'admin', code: 200 },
      {
        verb: 'delete',
        resource: 'configmaps',
        namespace: 'recorded',
        name: 'a',
        user: 'system:serviceaccount:recorded:writer',
        code: 403,
      },
      { verb: 'delete', resource: 'configmaps', namespace: 'recorded', name: 'a', user: 'admin', code: 200 },
    ],
  );
  t.is(writes[2]!.userAgent, 'shard-a/1.0');
  for (const write of writes) {
    t.true(before <= write.receivedMs && write.receivedMs <= write.completedMs! && write.completedMs! <= after, JSON.stringify(write));
  }
  for (let i = 1; i < writes.length; i++) t.true(writes[i - 1]!.completedMs! <= writes[i]!.receivedMs, 'sequential writes do not overlap');
});

test('without recordWrites nothing is recorded', async (t) => {
  const fx = await emulatorFixture();
  t.teardown(() => fx.close());
  await call(fx.emulator.url, fx.emulator.adminToken, 'POST', '/api/v1/namespaces', { metadata: { name: 'unrecorded' } });
  t.deepEqual(fx.emulator.writes.writes(), []);
});
