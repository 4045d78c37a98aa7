// Tests of listenOn: a busy port is an error naming the endpoint and the address, or a free port when allowed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { capturedLogger } from '../watch/testing/captured-logger.js';
import { AddressInUseError, formatBindAddress, listenOn } from './listen.js';
import { serveProbes } from './servers.js';

/** Holds a loopback port, as another process would. */
async function occupied(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

const probes = (address: Parameters<typeof serveProbes>[0]) => serveProbes(address, { healthz: { ping: () => undefined }, readyz: {} });

test('a busy port is an AddressInUseError naming the endpoint and the address', async (t) => {
  const { port, server } = await occupied();
  t.teardown(() => server.close());
  const error = await t.throwsAsync(listenOn('probes', { host: '127.0.0.1', port }, probes), { instanceOf: AddressInUseError });
  t.is(error?.message, `probes: 127.0.0.1:${port} is already in use by another process`);
  t.is(error?.endpoint, 'probes');
  t.is((error!.cause as NodeJS.ErrnoException).code, 'EADDRINUSE');
});

test('with orFreePort a busy port is traded for a free one on the same host, and a warning says where', async (t) => {
  const { port, server } = await occupied();
  t.teardown(() => server.close());
  const captured = capturedLogger('info');
  const served = await listenOn('probes', { host: '127.0.0.1', port, orFreePort: true }, probes, captured.logger);
  t.teardown(() => served.close());
  const url = new URL(served.url);
  t.is(url.hostname, '127.0.0.1');
  t.not(Number(url.port), port);
  t.is((await fetch(`${served.url}/healthz`)).status, 200);
  t.like(captured.lines()[0], { level: 40, msg: 'listen.fallback', endpoint: 'probes', requested: `127.0.0.1:${port}`, url: served.url });
});

test('a free port is served as asked, with no warning', async (t) => {
  const captured = capturedLogger('info');
  const served = await listenOn('probes', { host: '127.0.0.1', port: 0, orFreePort: true }, probes, captured.logger);
  t.teardown(() => served.close());
  t.is((await fetch(`${served.url}/healthz`)).status, 200);
  t.deepEqual(captured.lines(), []);
});

test('formatBindAddress spells addresses as the flags do', (t) => {
  t.is(formatBindAddress({ port: 8080 }), ':8080');
  t.is(formatBindAddress({ host: '127.0.0.1', port: 8081 }), '127.0.0.1:8081');
  t.is(formatBindAddress({ host: '::1', port: 8080 }), '[::1]:8080');
});
