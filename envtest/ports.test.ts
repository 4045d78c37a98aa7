// freePort: a port below the ephemeral range that is free, one held by a listener skipped, the kernel's choice as fallback.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canBind, ephemeralStart, freePort, startOnFreePorts } from './ports.js';

function rangeFile(content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'ports-test-')), 'ip_local_port_range');
  writeFileSync(path, content);
  return path;
}

function listening(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

test('the ephemeral range is read from the kernel file, 32768 when it is missing or unreadable', (t) => {
  t.is(ephemeralStart(rangeFile('40000\t60999\n')), 40_000);
  t.is(ephemeralStart(rangeFile('garbage')), 32_768);
  t.is(ephemeralStart('/nonexistent/ip_local_port_range'), 32_768);
});

test('a free port lies between 20000 and the start of the ephemeral range, and can be bound', async (t) => {
  const end = ephemeralStart();
  for (let i = 0; i < 5; i += 1) {
    const port = await freePort();
    t.true(port >= 20_000 && port < end, `port ${port} outside [20000, ${end})`);
    t.true(await canBind(port));
  }
});

test('a port someone listens on is skipped: the next candidate is answered', async (t) => {
  const file = rangeFile('32768 60999');
  const held = await freePort('127.0.0.1', Math.random, file);
  const server = await listening(held);
  t.teardown(() => server.close());
  t.false(await canBind(held));
  let next = await freePort('127.0.0.1', Math.random, file);
  while (next === held) next = await freePort('127.0.0.1', Math.random, file);
  const draw = (port: number): number => (port - 20_000 + 0.5) / (32_768 - 20_000);
  const draws = [draw(held), draw(next)];
  t.is(await freePort('127.0.0.1', () => draws.shift() ?? Math.random(), file), next);
  t.is(draws.length, 0, 'the held port was drawn first, then the free one');
});

test('with no band below the ephemeral range the kernel chooses', async (t) => {
  const port = await freePort('127.0.0.1', () => t.fail('no candidate should be drawn') as never, rangeFile('20010 60999'));
  t.true(port > 0);
  t.true(await canBind(port));
});

/**
 * startOnFreePorts over a start whose `call`-th run (from 1) fails with the message `failure(call)`, or answers
 * 'started' when that is undefined; what it came to, and how many runs it made.
 */
async function startsWith(failure: (call: number) => string | undefined): Promise<{ outcome: string; calls: number }> {
  const taken = (error: unknown): boolean => (error as Error).message === 'taken';
  let calls = 0;
  const outcome = await startOnFreePorts(async () => {
    calls += 1;
    const message = failure(calls);
    if (message !== undefined) throw new Error(message);
    return 'started';
  }, taken).catch((error: Error) => `threw: ${error.message}`);
  return { outcome, calls };
}

test('a start that failed on a taken port runs again, at most three times; any other failure is final at once', async (t) => {
  t.deepEqual(await startsWith((call) => (call < 3 ? 'taken' : undefined)), { outcome: 'started', calls: 3 });
  t.deepEqual(await startsWith(() => 'taken'), { outcome: 'threw: taken', calls: 3 });
  t.deepEqual(await startsWith(() => 'no binary'), { outcome: 'threw: no binary', calls: 1 });
});
