// Free TCP ports for the processes that tests and the benchmark start, chosen where no outgoing connection lands.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Where Linux says its ephemeral range lies: every outgoing connection binds a local port from it. */
const EPHEMERAL_RANGE_FILE = '/proc/sys/net/ipv4/ip_local_port_range';
/** The lowest port chosen: above the registered services most machines run. */
const LOWEST = 20_000;
/** Candidates tried before giving up on the range and letting the kernel choose. */
const ATTEMPTS = 64;

/**
 * The first port of the kernel's ephemeral range (32768 when it cannot be read). A port below it is never taken by
 * an outgoing connection's implicit bind, which is what took the ports that `listen(0)` had handed out and the test
 * had released before its process bound them: every kubectl call and client connection on the machine draws from
 * that range.
 */
export function ephemeralStart(rangeFile = EPHEMERAL_RANGE_FILE): number {
  try {
    const first = Number.parseInt(readFileSync(rangeFile, 'utf8').trim().split(/\s+/)[0] ?? '', 10);
    return Number.isInteger(first) && first > 0 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

/** Whether `host:port` can be bound now; the socket is closed again before this answers. */
export function canBind(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((answer) => {
    const server = createServer();
    server.once('error', () => answer(false));
    server.listen(port, host, () => server.close(() => answer(true)));
  });
}

/**
 * A TCP port free on `host`, for a process that is told its port on its command line (etcd, kube-apiserver, an
 * operator's /metrics). Chosen at random between {@link LOWEST} and the ephemeral range, so that only another test's
 * choice can collide with it (the callers still retry on "address already in use"); when that band is empty or
 * every candidate is taken, the kernel's choice of `listen(0)`.
 */
export async function freePort(host = '127.0.0.1', random: () => number = Math.random, rangeFile = EPHEMERAL_RANGE_FILE): Promise<number> {
  const end = ephemeralStart(rangeFile);
  if (end - LOWEST >= ATTEMPTS) {
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const port = LOWEST + Math.floor(random() * (end - LOWEST));
      if (await canBind(port, host)) return port;
    }
  }
  return kernelPort(host);
}

/** The port the kernel picks for `listen(0)`, released again. */
function kernelPort(host: string): Promise<number> {
  return new Promise((answer, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? answer(address.port) : fail(new Error('no port'))));
    });
  });
}

/**
 * How many times {@link startOnFreePorts} starts: a port {@link freePort} answered may still be drawn by another test
 * before the process binds it.
 */
const PORT_RACE_ATTEMPTS = 3;

/**
 * Runs `start` (which chooses its ports with {@link freePort}) again, on new ports, while it fails because one of
 * them was taken meanwhile (`taken` tells that failure from the others), at most {@link PORT_RACE_ATTEMPTS} times.
 */
export async function startOnFreePorts<T>(start: () => Promise<T>, taken: (error: unknown) => boolean): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= PORT_RACE_ATTEMPTS || !taken(error)) throw error;
    }
  }
}
