// Stale keep-alive sockets: an idempotent request the server reset on a reused socket is sent again; others fail.
import test, { type ExecutionContext } from 'ava';
import { createServer, type Socket } from 'node:net';
import { ApiError } from './errors.js';
import { CONFIGMAPS } from './resources.js';
import { type Call, Transport } from './transport.js';
import { readBytes } from './wire.js';

/**
 * A plain-HTTP server that answers every request with 200 and keeps the connection open, except a request that
 * `reset(index)` names (its index on its own connection, from 0): that connection is reset instead, as a server
 * closing an idle connection at the moment the client reuses it looks to the client.
 */
async function server(t: ExecutionContext, reset: (indexOnConnection: number) => boolean) {
  const seen = { connections: 0, requests: [] as string[] };
  const sockets = new Set<Socket>();
  const listener = createServer((socket) => {
    sockets.add(socket);
    seen.connections += 1;
    let index = 0;
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      for (const line of chunk
        .toString()
        .split('\r\n')
        .filter((text) => / HTTP\/1\.1$/.test(text))) {
        seen.requests.push(line.split(' ')[0]!);
        if (reset(index++)) {
          socket.resetAndDestroy();
          return;
        }
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}');
      }
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as { port: number };
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    listener.close();
  });
  return { seen, url: `http://127.0.0.1:${port}` };
}

function transportTo(t: ExecutionContext, url: string): Transport {
  const transport = new Transport({ server: url, authHeaders: async () => ({}) }, 'transport-test');
  t.teardown(() => transport.close());
  return transport;
}

function call(method: Call['method']): Call {
  const verb = { GET: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as const;
  return {
    method,
    path: '/api/v1/namespaces/default/configmaps/a',
    verb: verb[method],
    resource: CONFIGMAPS,
    namespace: 'default',
    ...(method === 'GET' || method === 'DELETE' ? {} : { body: { data: {} } }),
  };
}

async function answered(transport: Transport, request: Call): Promise<string> {
  const { response } = await transport.send(request, 5_000);
  return (await readBytes(response)).toString('utf8');
}

for (const method of ['GET', 'PUT', 'DELETE'] as const) {
  test(`a ${method} the server resets on a reused keep-alive socket is sent again on a new one`, async (t) => {
    const { seen, url } = await server(t, (index) => index === 1);
    const transport = transportTo(t, url);
    t.is(await answered(transport, call('GET')), '{}');
    t.is(await answered(transport, call(method)), '{}');
    t.deepEqual(seen.requests, ['GET', method, method]);
    t.is(seen.connections, 2);
  });
}

for (const method of ['POST', 'PATCH'] as const) {
  test(`a ${method} the server resets on a reused socket is not sent again: its error is the caller's`, async (t) => {
    const { seen, url } = await server(t, (index) => index === 1);
    const transport = transportTo(t, url);
    await answered(transport, call('GET'));
    const error = await t.throwsAsync(answered(transport, call(method)));
    t.true(error instanceof ApiError);
    t.regex(error.message, new RegExp(`^${method} /api/v1/namespaces/default/configmaps/a: (read ECONNRESET|socket hang up)`));
    t.deepEqual(seen.requests, ['GET', method]);
  });
}

test('a reset on a new socket is not a stale one: the request fails, sent once', async (t) => {
  const { seen, url } = await server(t, () => true);
  const transport = transportTo(t, url);
  const error = await t.throwsAsync(answered(transport, call('DELETE')));
  t.true(error instanceof ApiError);
  t.deepEqual(seen.requests, ['DELETE']);
});

test('every idle socket the server closed together is used up in turn, then a new one answers', async (t) => {
  const { seen, url } = await server(t, (index) => index > 0);
  const transport = transportTo(t, url);
  // Two answers in flight at once leave two idle sockets in the agent, both reset when reused.
  await Promise.all([answered(transport, call('GET')), answered(transport, call('GET'))]);
  t.is(seen.connections, 2);
  t.is(await answered(transport, call('DELETE')), '{}');
  t.deepEqual(seen.requests, ['GET', 'GET', 'DELETE', 'DELETE', 'DELETE']);
  t.is(seen.connections, 3);
});

test('a write the fence refuses after the first attempt failed is not sent again: the refusal is the error', async (t) => {
  let deadlinePassed = false;
  const { seen, url } = await server(t, (index) => {
    if (index === 1) deadlinePassed = true;
    return index === 1;
  });
  const transport = transportTo(t, url);
  transport.fenceWhen(() => (deadlinePassed ? 'the renew deadline passed' : undefined));
  await answered(transport, call('GET'));
  const error = await t.throwsAsync(answered(transport, call('PUT')));
  t.is(error.message, 'PUT /api/v1/namespaces/default/configmaps/a: fenced: the renew deadline passed');
  t.deepEqual(seen.requests, ['GET', 'PUT']);
});
