// The transport on the wire: stale keep-alive sockets (an idempotent request the server reset on a reused socket is
// sent again; others fail), the server URL's path, streamed answers and their backpressure, timeouts, aborts and the fence.
import test, { type ExecutionContext } from 'ava';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ApiError, isAnswerTooLarge } from './errors.js';
import { CONFIGMAPS } from './resources.js';
import { resettingServer } from './testing/resetting-server.js';
import { Body, type Call, Transport } from './transport.js';

/** A {@link resettingServer} resetting the requests `reset` names, and what it saw: each request's method, in order. */
async function server(t: ExecutionContext, reset: (indexOnConnection: number) => boolean) {
  const requests: string[] = [];
  const listening = await resettingServer((line, index) => {
    requests.push(line.split(' ')[0]!);
    return reset(index);
  });
  t.teardown(() => listening.close());
  return {
    seen: {
      requests,
      get connections() {
        return listening.connections;
      },
    },
    url: listening.url,
  };
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
  return (await response.read()).toString('utf8');
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
    t.regex(error.message, new RegExp(`^${method} /api/v1/namespaces/default/configmaps/a: (read ECONNRESET|other side closed)`));
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

/** A plain-HTTP server answering with `handle`; its URL carries `prefix` as a proxy's path would. */
async function httpServer(t: ExecutionContext, handle: (request: IncomingMessage, response: ServerResponse) => void, prefix = '') {
  const listener = createHttpServer(handle);
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as { port: number };
  t.teardown(() => {
    listener.closeAllConnections();
    listener.close();
  });
  return `http://127.0.0.1:${port}${prefix}`;
}

test("the server URL's path is put before every request's path", async (t) => {
  const paths: string[] = [];
  const url = await httpServer(
    t,
    (request, response) => {
      paths.push(request.url ?? '');
      response.end('{}');
    },
    '/k8s/clusters/c-1/',
  );
  await answered(transportTo(t, url), call('GET'));
  t.deepEqual(paths, ['/k8s/clusters/c-1/api/v1/namespaces/default/configmaps/a']);
});

test('a streamed answer of 32 MiB arrives whole and in order through the pauses of its connection', async (t) => {
  const chunk = 64 * 1024;
  const chunks = 512;
  const url = await httpServer(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    let index = 0;
    const more = (): void => {
      while (index < chunks) {
        const ok = response.write(Buffer.alloc(chunk, index % 251));
        index += 1;
        if (!ok) {
          response.once('drain', more);
          return;
        }
      }
      response.end();
    };
    more();
  });
  const { response, abort } = await transportTo(t, url).send({ ...call('GET'), verb: 'watch' }, 0);
  let bytes = 0;
  for await (const piece of response.chunks()) {
    for (let offset = 0; offset < piece.length; offset += 1, bytes += 1) {
      if (piece[offset] !== Math.floor(bytes / chunk) % 251) t.fail(`byte ${bytes} out of order`);
    }
  }
  abort();
  t.is(bytes, chunk * chunks);
});

/** A DispatchController that records pauses and resumes, and an abort's reason. */
function controller() {
  const seen = { pauses: 0, resumes: 0, aborted: undefined as Error | undefined };
  let paused = false;
  const fake = {
    get paused() {
      return paused;
    },
    get aborted() {
      return seen.aborted !== undefined;
    },
    get reason() {
      return seen.aborted ?? null;
    },
    pause: () => {
      paused = true;
      seen.pauses += 1;
    },
    resume: () => {
      paused = false;
      seen.resumes += 1;
    },
    abort: (reason: Error) => {
      seen.aborted = reason;
    },
  };
  return { fake: fake as unknown as Dispatcher.DispatchController, seen };
}

test('a streamed body pauses its connection past 1 MiB unread and resumes it once its reader is back under', async (t) => {
  const { fake, seen } = controller();
  const body = new Body(fake, 200, {}, call('GET'));
  const half = Buffer.alloc(512 * 1024);
  body.push(half);
  body.push(half);
  t.is(seen.pauses, 0, 'at 1 MiB unread it still reads');
  body.push(half);
  t.is(seen.pauses, 1, 'past 1 MiB it pauses');
  const reader = body.chunks();
  await reader.next();
  t.is(seen.resumes, 1, 'back at 1 MiB it resumes');
  body.end();
  t.false((await reader.next()).done);
  t.false((await reader.next()).done);
  t.true((await reader.next()).done);
});

test('a body read whole never pauses, and past its limit drops the connection with AnswerTooLarge', async (t) => {
  const { fake, seen } = controller();
  const body = new Body(fake, 200, {}, call('GET'));
  const whole = body.read(3 * 1024 * 1024, 'GET a');
  for (let index = 0; index < 6; index += 1) body.push(Buffer.alloc(512 * 1024));
  t.is(seen.pauses, 0);
  t.is(seen.aborted, undefined, 'at its limit it still reads');
  body.push(Buffer.alloc(1));
  const error = await t.throwsAsync(whole);
  t.true(isAnswerTooLarge(error));
  t.is(seen.aborted, error, 'the connection is dropped with the same error');
});

test('a body the server cuts short fails the stream as closed mid-stream', async (t) => {
  const url = await httpServer(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"type":"ADDED"');
    setTimeout(() => response.socket?.destroy(), 20);
  });
  const { response, abort } = await transportTo(t, url).send({ ...call('GET'), verb: 'watch' }, 0);
  const error = await t.throwsAsync(async () => {
    for await (const _ of response.chunks());
  });
  abort();
  t.true(error instanceof ApiError);
  t.regex(error.message, /^watch \/api\/v1\/namespaces\/default\/configmaps\/a: connection closed mid-stream/);
});

test('a server silent past the timeout fails the request, naming the timeout', async (t) => {
  const url = await httpServer(t, () => undefined);
  const error = await t.throwsAsync(transportTo(t, url).send(call('GET'), 200));
  t.is(error.message, 'GET /api/v1/namespaces/default/configmaps/a: no answer within 200 ms');
});

test('the fence aborts a request waiting for its answer, and the next write is refused unsent', async (t) => {
  let received = 0;
  let arrived!: () => void;
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const url = await httpServer(t, () => {
    received += 1;
    arrived();
  });
  const transport = transportTo(t, url);
  const waiting = transport.send(call('PUT'), 0);
  await arrival;
  transport.fence('leadership lost');
  const error = await t.throwsAsync(waiting);
  t.is(error.message, 'PUT /api/v1/namespaces/default/configmaps/a: fenced: leadership lost');
  const refused = await t.throwsAsync(transport.send(call('POST'), 0));
  t.is(refused.message, 'POST /api/v1/namespaces/default/configmaps/a: fenced: leadership lost');
  t.is(received, 1);
});

test("a caller's signal aborts its request; a GET still goes out after the fence", async (t) => {
  const url = await httpServer(t, (request, response) => {
    if (request.method === 'GET' && request.url?.endsWith('/slow')) return;
    response.end('{}');
  });
  const transport = transportTo(t, url);
  const controller = new AbortController();
  const slow = transport.send({ ...call('GET'), path: '/slow', signal: controller.signal }, 0);
  setTimeout(() => controller.abort(), 20);
  const error = await t.throwsAsync(slow);
  t.is(error.message, 'GET /slow: aborted');
  transport.fence('leadership lost');
  t.is(await answered(transport, call('GET')), '{}');
});
