// Counters and fault injection, in process and over the /emulator/ admin endpoint.
import test from 'ava';
import { call, emulatorFixture, type EmulatorFixture, openWatch } from './support.js';

let fx: EmulatorFixture;

test.before(async () => {
  fx = await emulatorFixture();
});

test.after.always(async () => {
  await fx?.close();
});

test.afterEach.always(() => {
  fx.emulator.faults.reset();
});

// Serial: counters and faults are global to the emulator.
test.serial('counters count requests by verb, resource, namespace and user, and open watches', async (t) => {
  const { counters } = fx.emulator;
  counters.reset();
  await fx.admin('POST', '/api/v1/namespaces', { metadata: { name: 'counted' } });
  await fx.admin('POST', '/api/v1/namespaces/counted/configmaps', { metadata: { name: 'a' } });
  await fx.admin('GET', '/api/v1/namespaces/counted/configmaps/a');
  await fx.admin('GET', '/api/v1/namespaces/counted/configmaps');
  await fx.admin('PATCH', '/api/v1/namespaces/counted/configmaps/a', { data: { x: '1' } }, 'application/merge-patch+json');
  const watch = await openWatch(fx.emulator.url, fx.emulator.adminToken, '/api/v1/namespaces/counted/configmaps?watch=1&resourceVersion=0');
  t.teardown(() => watch.close());
  await watch.next();
  t.is(counters.count({ resource: 'configmaps' }), 5);
  t.is(counters.count({ verb: 'create' }), 2);
  t.is(counters.count({ verb: 'watch', namespace: 'counted', user: 'admin' }), 1);
  t.is(counters.openWatchCount({ resource: 'configmaps' }), 1);
  const snapshot = counters.snapshot();
  t.like(snapshot, {
    total: 6,
    byVerb: { create: 2, get: 1, list: 1, patch: 1, watch: 1 },
    byResource: { configmaps: 5, namespaces: 1 },
    watches: { open: 1, byUser: { admin: 1 } },
  });
  watch.close();
  counters.reset();
  t.is(counters.snapshot().total, 0);
});

test.serial('failRequests answers a matching fraction with 429 and Retry-After, then stops after `times`', async (t) => {
  const id = fx.emulator.faults.failRequests({
    match: { verb: 'list', resource: 'configmaps' },
    code: 429,
    retryAfterSeconds: 3,
    times: 2,
  });
  t.true(fx.emulator.faults.list().some((f) => f.id === id));
  const first = await fx.admin('GET', '/api/v1/configmaps');
  t.is(first.status, 429);
  t.is(first.headers.get('retry-after'), '3');
  t.like(first.body, { reason: 'TooManyRequests', details: { retryAfterSeconds: 3 } });
  t.is((await fx.admin('GET', '/api/v1/namespaces')).status, 200, 'other requests pass');
  t.is((await fx.admin('GET', '/api/v1/configmaps')).status, 429);
  t.is((await fx.admin('GET', '/api/v1/configmaps')).status, 200, 'the fault is spent after two failures');
  const internal = fx.emulator.faults.failRequests({ rate: 1 });
  t.is((await fx.admin('GET', '/api/v1/namespaces')).status, 500);
  fx.emulator.faults.remove(internal);
  t.is((await fx.admin('GET', '/api/v1/namespaces')).status, 200);
});

test.serial('addLatency delays matching requests', async (t) => {
  fx.emulator.faults.addLatency({ match: { verb: 'get' }, ms: 150 });
  const started = Date.now();
  await fx.admin('GET', '/api/v1/namespaces/default');
  t.true(Date.now() - started >= 140);
});

test.serial('dropWatches ends the matching watch streams', async (t) => {
  const watch = await openWatch(fx.emulator.url, fx.emulator.adminToken, '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0');
  t.teardown(() => watch.close());
  const other = await openWatch(fx.emulator.url, fx.emulator.adminToken, '/api/v1/namespaces/default/secrets?watch=1&resourceVersion=0');
  t.teardown(() => other.close());
  await new Promise((r) => setTimeout(r, 20));
  t.is(fx.emulator.faults.dropWatches({ resource: 'configmaps' }), 1);
  t.is(await watch.next(), undefined, 'the stream ended');
  t.is(fx.emulator.counters.openWatchCount(), 1);
});

test.serial('expireNextWatch and expireNextContinue force a 410 once', async (t) => {
  fx.emulator.faults.expireNextWatch({ resource: 'configmaps' });
  const expired = await openWatch(fx.emulator.url, fx.emulator.adminToken, '/api/v1/configmaps?watch=1');
  t.like(await expired.next(), { type: 'ERROR', object: { code: 410, reason: 'Expired' } });
  t.is(await expired.next(), undefined);
  const fine = await openWatch(fx.emulator.url, fx.emulator.adminToken, '/api/v1/configmaps?watch=1&resourceVersion=0');
  t.teardown(() => fine.close());
  t.is(fine.status, 200);

  for (const name of ['p1', 'p2', 'p3']) await fx.admin('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name } });
  const page = await fx.admin('GET', '/api/v1/namespaces/default/configmaps?limit=1');
  fx.emulator.faults.expireNextContinue({ resource: 'configmaps' });
  const gone = await fx.admin('GET', `/api/v1/namespaces/default/configmaps?limit=1&continue=${page.body.metadata.continue}`);
  t.is(gone.status, 410);
  t.is(gone.body.reason, 'Expired');
  t.is((await fx.admin('GET', `/api/v1/namespaces/default/configmaps?limit=1&continue=${page.body.metadata.continue}`)).status, 200);
});

test.serial('a shrunk history window makes older resourceVersions expire, and compaction expires continue tokens', async (t) => {
  const first = await fx.admin('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'h0' } });
  fx.emulator.faults.setHistoryWindow(2);
  for (let i = 1; i <= 3; i++) await fx.admin('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `h${i}` } });
  const watch = await openWatch(
    fx.emulator.url,
    fx.emulator.adminToken,
    `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${first.body.metadata.resourceVersion}`,
  );
  const event = await watch.next();
  t.like(event, { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  t.regex(event!.object.message, /^too old resource version: \d+ \(\d+\)$/);
  const page = await fx.admin('GET', '/api/v1/namespaces/default/configmaps?limit=1');
  await fx.admin('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'h4' } });
  fx.emulator.faults.compact();
  const expired = await fx.admin('GET', `/api/v1/namespaces/default/configmaps?limit=1&continue=${page.body.metadata.continue}`);
  t.is(expired.status, 410);
  t.truthy(expired.body.metadata.continue, 'a fresh continue token comes with the 410');
});

test.serial('the admin endpoint exposes counters and faults to the admin only', async (t) => {
  const reader = fx.emulator.userToken({ username: 'someone', groups: [] });
  t.is((await call(fx.emulator.url, reader, 'GET', '/emulator/counters')).status, 403);
  t.is((await fx.admin('POST', '/emulator/counters/reset')).status, 200);
  await fx.admin('GET', '/api/v1/namespaces');
  const counters = await fx.admin('GET', '/emulator/counters');
  t.like(counters.body, { total: 1, byVerb: { list: 1 } });
  const fail = await fx.admin('POST', '/emulator/faults/fail', { match: { verb: 'get', resource: 'namespaces' }, code: 503 });
  t.is(typeof fail.body.id, 'number');
  t.is((await fx.admin('GET', '/api/v1/namespaces/default')).status, 503);
  t.is((await fx.admin('DELETE', `/emulator/faults/${fail.body.id}`)).status, 200);
  t.is((await fx.admin('GET', '/api/v1/namespaces/default')).status, 200);
  const watch = await openWatch(fx.emulator.url, fx.emulator.adminToken, '/api/v1/namespaces?watch=1&resourceVersion=0');
  t.teardown(() => watch.close());
  await watch.next();
  t.deepEqual((await fx.admin('POST', '/emulator/faults/drop-watches', { resource: 'namespaces' })).body, { dropped: 1 });
  t.like((await fx.admin('POST', '/emulator/faults/history-window', { size: 5 })).body, { size: 5 });
  t.is((await fx.admin('POST', '/emulator/faults/compact')).status, 200);
  t.is((await fx.admin('POST', '/emulator/faults/reset')).status, 200);
  t.deepEqual((await fx.admin('GET', '/emulator/faults')).body, []);
  t.is((await fx.admin('POST', '/emulator/faults/latency', { ms: -1 })).status, 400);
});
