// The emulator enforces the apiserver's 1 MiB limit on ConfigMap and Secret data, and the /16 service range.
import test from 'ava';
import { startEmulator, type Emulator } from '../index.js';

let emulator: Emulator;
test.before(async () => {
  emulator = await startEmulator({ port: 0 });
});
test.after.always(async () => {
  await emulator?.close();
});

async function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(emulator.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const MiB = 1024 * 1024;

test('a ConfigMap of exactly 1 MiB is accepted, one byte more (data and binaryData summed) is 422 on the whole object', async (t) => {
  t.is((await post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'exact' }, data: { a: 'x'.repeat(MiB) } })).status, 201);
  const half = 'y'.repeat(MiB / 2);
  const over = await post('/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'over' },
    data: { a: half },
    binaryData: { b: Buffer.from(`${half}z`).toString('base64') },
  });
  t.is(over.status, 422);
  t.is(over.body.message, 'ConfigMap "over" is invalid: []: Too long: may not be more than 1048576 bytes');
  t.deepEqual(over.body.details.causes, [
    { reason: 'FieldValueTooLong', message: 'Too long: may not be more than 1048576 bytes', field: '[]' },
  ]);
});

test('a Secret whose decoded data passes 1 MiB is 422 on data', async (t) => {
  const over = await post('/api/v1/namespaces/default/secrets', {
    metadata: { name: 'over' },
    data: { a: Buffer.alloc(MiB + 1, 1).toString('base64') },
  });
  t.is(over.status, 422);
  t.is(over.body.message, 'Secret "over" is invalid: data: Too long: may not be more than 1048576 bytes');
});

test('more than 254 Services get distinct ClusterIPs from 10.0.0.0/16', async (t) => {
  const ips = new Set<string>();
  for (let i = 0; i < 300; i++) {
    const created = await post('/api/v1/namespaces/default/services', { metadata: { name: `s${i}` }, spec: { ports: [{ port: 80 }] } });
    t.is(created.status, 201);
    ips.add(created.body.spec.clusterIP);
  }
  t.is(ips.size, 300);
  for (const ip of ips) t.regex(ip, /^10\.0\.\d{1,3}\.\d{1,3}$/);
});
