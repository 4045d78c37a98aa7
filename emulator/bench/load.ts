// Load benchmark of the emulator: 10k objects, 1k+ concurrent watches, idle write-to-watcher latency (p50/p99),
// fan-out latency to every watcher, write throughput under watches, and the server's memory.
//
// Usage: node_modules/.bin/tsx emulator/bench/load.ts [--objects 10000] [--watches 1000] [--samples 300] [--in-process]
// By default the emulator runs in its own process (as `npm run emulator` does), so latencies include two process
// wake-ups per write; with --in-process it shares this process's event loop and the latencies are its own work.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { startEmulator } from '../index.js';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '10000' },
    watches: { type: 'string', default: '1000' },
    samples: { type: 'string', default: '300' },
    'in-process': { type: 'boolean', default: false },
  },
});
const objects = Number(values.objects);
const watches = Number(values.watches);
const samples = Number(values.samples);
const namespaces = 100;
const root = new URL('../../', import.meta.url).pathname;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface Server {
  readonly base: string;
  readonly token: string;
  readonly pid: number;
  stop(): Promise<void>;
}

async function spawnServer(): Promise<Server> {
  const kubeconfigPath = `/tmp/emulator-bench-${process.pid}.kubeconfig`;
  const child = spawn(
    `${root}node_modules/.bin/tsx`,
    ['emulator/main.ts', '--port', '0', '--log-level', 'warn', '--history-window', '20000', '--kubeconfig-out', kubeconfigPath],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const base = await new Promise<string>((resolve) => child.stdout.once('data', (c: Buffer) => resolve(c.toString().trim())));
  const token = /token: (\S+)/.exec(readFileSync(kubeconfigPath, 'utf8'))![1];
  rmSync(kubeconfigPath);
  // tsx starts node as a child of its launcher: the emulator is that child.
  const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return {
    base,
    token,
    pid: children.length > 0 ? children[children.length - 1] : child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

async function inProcessServer(): Promise<Server> {
  const emulator = await startEmulator({ port: 0, historyWindow: 20000 });
  return { base: emulator.url, token: emulator.adminToken, pid: process.pid, stop: () => emulator.close() };
}

const target = values['in-process'] ? await inProcessServer() : await spawnServer();
const { base, token, pid } = target;
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const { hostname, port } = new URL(base);

function call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: any }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname,
        port,
        path,
        method,
        agent,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(payload ? { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

console.log(
  JSON.stringify({ phase: 'start', mode: values['in-process'] ? 'in-process' : 'separate process', url: base, rssMb: rssMb(pid) }),
);
let started = Date.now();
await pool(
  Array.from({ length: namespaces }, (_, i) => i),
  16,
  async (i) => {
    await call('POST', '/api/v1/namespaces', { metadata: { name: `ns-${i}` } });
  },
);
await pool(
  Array.from({ length: objects }, (_, i) => i),
  32,
  async (i) => {
    const r = await call('POST', `/api/v1/namespaces/ns-${i % namespaces}/configmaps`, {
      metadata: { name: `cm-${i}`, labels: { app: `a${i % 10}` } },
      data: { key: 'x'.repeat(64), index: String(i) },
    });
    if (r.status !== 201) throw new Error(`seed ${i}: ${r.status}`);
  },
);
const seedSeconds = (Date.now() - started) / 1000;
console.log(
  JSON.stringify({
    phase: 'seeded',
    objects,
    seconds: seedSeconds,
    createsPerSecond: Math.round(objects / seedSeconds),
    rssMb: rssMb(pid),
  }),
);

// Watches: one stream each, spread over the namespaces (a few cluster-wide with label selectors).
const watchAgent = new Agent({ keepAlive: false, maxSockets: Infinity });
const waiters = new Map<string, { count: number; first: number; last: number; resolve: () => void; need: number }>();
let opened = 0;
const requests: ReturnType<typeof request>[] = [];
function openWatch(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, agent: watchAgent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`watch ${path}: ${res.statusCode}`));
      opened++;
      let buffer = '';
      res.on('data', (c: Buffer) => {
        const at = performance.now();
        buffer += c.toString();
        let i: number;
        while ((i = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, i);
          buffer = buffer.slice(i + 1);
          const marker = /"bench":"([^"]+)"/.exec(line);
          if (marker === null) continue;
          const w = waiters.get(marker[1]);
          if (w === undefined) continue;
          w.count++;
          if (w.count === 1) w.first = at;
          w.last = at;
          if (w.count >= w.need) w.resolve();
        }
      });
      resolve();
    });
    requests.push(req);
    req.on('error', () => undefined);
    req.end();
  });
}
started = Date.now();
const rv = (await call('GET', '/api/v1/namespaces/ns-0/configmaps?limit=1')).body.metadata.resourceVersion;
await pool(
  Array.from({ length: watches }, (_, i) => i),
  50,
  async () => {
    await openWatch(`/api/v1/namespaces/ns-0/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`);
  },
);
const watchSeconds = (Date.now() - started) / 1000;
await new Promise((r) => setTimeout(r, 500));
console.log(JSON.stringify({ phase: 'watching', watches: opened, seconds: watchSeconds, rssMb: rssMb(pid) }));

// Idle latency: one watcher on ns-1 (the 1000 others watch ns-0 and stay quiet), one write at a time, a pause between.
async function latencies(namespace: string, object: string, need: number): Promise<{ first: number[]; last: number[] }> {
  const first: number[] = [];
  const last: number[] = [];
  for (let s = 0; s < samples; s++) {
    const marker = `${namespace}-${s}`;
    const done = new Promise<void>((resolve) => waiters.set(marker, { count: 0, first: 0, last: 0, resolve, need }));
    const sent = performance.now();
    await call(
      'PATCH',
      `/api/v1/namespaces/${namespace}/configmaps/${object}`,
      { data: { bench: marker } },
      'application/merge-patch+json',
    );
    await done;
    const w = waiters.get(marker)!;
    first.push(w.first - sent);
    last.push(w.last - sent);
    waiters.delete(marker);
    await new Promise((r) => setTimeout(r, 5));
  }
  return { first: first.sort((a, b) => a - b), last: last.sort((a, b) => a - b) };
}
const fmt = (n: number) => Math.round(n * 1000) / 1000;
const rv1 = (await call('GET', '/api/v1/namespaces/ns-1/configmaps?limit=1')).body.metadata.resourceVersion;
await openWatch(`/api/v1/namespaces/ns-1/configmaps?watch=1&resourceVersion=${rv1}`);
const idle = await latencies('ns-1', 'cm-1', 1);
console.log(
  JSON.stringify({
    phase: 'idle-latency',
    samples,
    note: 'one watcher receives; 1000 other watches open; measured from sending the PATCH to receiving its event',
    writeToWatcherMs: { p50: fmt(percentile(idle.first, 50)), p99: fmt(percentile(idle.first, 99)) },
  }),
);
const fanout = await latencies('ns-0', 'cm-0', watches);
console.log(
  JSON.stringify({
    phase: 'fan-out-latency',
    samples,
    watchers: watches,
    note: 'every write reaches all watchers of ns-0; the client reads all 1000 streams in one process',
    writeToFirstWatcherMs: { p50: fmt(percentile(fanout.first, 50)), p99: fmt(percentile(fanout.first, 99)) },
    writeToAllWatchersMs: { p50: fmt(percentile(fanout.last, 50)), p99: fmt(percentile(fanout.last, 99)) },
  }),
);

// Throughput: writes to other namespaces (not watched) and to the watched one, while all watches stay open.
started = Date.now();
const writes = 5000;
await pool(
  Array.from({ length: writes }, (_, i) => i),
  32,
  async (i) => {
    await call(
      'PATCH',
      `/api/v1/namespaces/ns-${1 + (i % (namespaces - 1))}/configmaps/cm-${1 + (i % (namespaces - 1)) + namespaces * (i % 50)}`,
      { data: { n: String(i) } },
      'application/merge-patch+json',
    );
  },
);
const writeSeconds = (Date.now() - started) / 1000;
started = Date.now();
const lists = 50;
for (let i = 0; i < lists; i++) await call('GET', `/api/v1/configmaps?limit=500`);
const listMs = (Date.now() - started) / lists;
console.log(
  JSON.stringify({ phase: 'throughput', patchesPerSecond: Math.round(writes / writeSeconds), list500Ms: fmt(listMs), rssMb: rssMb(pid) }),
);

for (const req of requests) req.destroy();
agent.destroy();
watchAgent.destroy();
await target.stop();
