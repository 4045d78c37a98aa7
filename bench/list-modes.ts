// One namespace's ConfigMaps read from a real kube-apiserver: pages as the operator grows them and pages of 500, each as
// JSON and as protobuf, and a streaming list.
//
//   npx tsx bench/list-modes.ts [--objects 5921] [--rounds 6]
//
// Each round reads the namespace once per mode, in turns, on one keep-alive connection; the first round warms up and
// is left out. Printed per mode: the medians of the wall time, this process's CPU and kube-apiserver's CPU (from
// /proc), and each round's wall time. Every object is parsed as the operator would (JSON.parse of a page or of each
// watch event, or the client's protobuf decoder); the count must equal --objects.
import { Agent, request } from 'node:https';
import { parseArgs } from 'node:util';
import { type Envtest, startEnvtest } from '../envtest/harness.js';
import {
  NAMESPACE_GROW_PAGE_BYTES,
  NAMESPACE_GROW_PROTOBUF_PAGE_BYTES,
  NAMESPACE_MAX_PAGE_SIZE,
  NAMESPACE_PAGE_SIZE,
} from '../operator/dependencies/dependency-watch.js';
import { decodeObject, PROTOBUF_ACCEPT } from '../operator/kube/protobuf.js';
import { findServerProcesses, processCpuSeconds } from './cpu.js';
import { percentile } from './stats.js';

const NAMESPACE = 'list-modes';

interface Sample {
  readonly wallMs: number;
  readonly clientCpuMs: number;
  readonly apiserverCpuMs: number;
}

/** A GET on one keep-alive connection: the whole body, or each chunk to `onChunk` until it answers true. */
type Get = (path: string, onChunk?: (chunk: Buffer) => boolean, accept?: string) => Promise<Buffer>;

function getter(env: Envtest): Get {
  const agent = new Agent({ keepAlive: true, ca: env.caPem, maxSockets: 1 });
  const { hostname, port } = new URL(env.server);
  return (path, onChunk, accept = 'application/json') =>
    new Promise((resolve, reject) => {
      const headers = { authorization: `Bearer ${env.adminToken}`, accept };
      const req = request({ host: hostname, port, path, agent, headers }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (!onChunk) parts.push(chunk);
          else if (onChunk(chunk)) {
            req.destroy();
            resolve(Buffer.alloc(0));
          }
        });
        res.on('end', () => resolve(Buffer.concat(parts)));
        res.on('error', reject);
      });
      req.on('error', (error) => (onChunk ? undefined : reject(error)));
      req.end();
    });
}

/** The CPU milliseconds kube-apiserver has used so far. */
function apiserverCpu(env: Envtest): () => number {
  const pid = findServerProcesses(env.dir).apiserver;
  if (pid === undefined) throw new Error(`no kube-apiserver process runs from ${env.dir}`);
  return () => {
    const seconds = processCpuSeconds(pid);
    if (seconds === undefined) throw new Error(`kube-apiserver (pid ${pid}) is gone`);
    return seconds * 1000;
  };
}

type Page = { items: unknown[]; metadata: { continue?: string } };

/**
 * Pages, sequential: of the largest size, or grown as the operator's namespace lists grow them (its first page size,
 * doubled while the next page stays within its byte bound), as JSON or protobuf. Answers the objects read.
 */
async function paged(get: Get, grow: boolean, protobuf: boolean): Promise<number> {
  let limit = grow ? NAMESPACE_PAGE_SIZE : NAMESPACE_MAX_PAGE_SIZE;
  let token: string | undefined;
  let count = 0;
  do {
    const body = await get(
      `/api/v1/namespaces/${NAMESPACE}/configmaps?limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
      undefined,
      protobuf ? PROTOBUF_ACCEPT : undefined,
    );
    const page = (protobuf ? decodeObject(body) : JSON.parse(body.toString('utf8'))) as Page;
    count += page.items.length;
    token = page.metadata.continue || undefined;
    const bound = protobuf ? NAMESPACE_GROW_PROTOBUF_PAGE_BYTES : NAMESPACE_GROW_PAGE_BYTES;
    if (grow && page.items.length >= limit && body.length * 2 <= bound) limit = Math.min(limit * 2, NAMESPACE_MAX_PAGE_SIZE);
  } while (token);
  return count;
}

/** A streaming list (KEP-3157): a watch with sendInitialEvents, read until the initial-events-end bookmark. */
async function streamed(get: Get): Promise<number> {
  let count = 0;
  let rest = '';
  const query = 'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';
  await get(`/api/v1/namespaces/${NAMESPACE}/configmaps?${query}`, (chunk) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      const event = JSON.parse(line) as { type: string; object: { metadata: { annotations?: Record<string, string> } } };
      if (event.type === 'ADDED') count += 1;
      if (event.type === 'BOOKMARK' && event.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true') return true;
    }
    return false;
  });
  return count;
}

async function seed(env: Envtest, objects: number): Promise<void> {
  await env.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  // About the benchmark's ConfigMaps: 1.3 KB as JSON.
  const data = { key: 'x'.repeat(1000) };
  for (let start = 0; start < objects; start += 50) {
    const batch = Array.from({ length: Math.min(50, objects - start) }, (_, index) => `cm-${start + index}`);
    await Promise.all(
      batch.map((name) =>
        env.request('POST', `/api/v1/namespaces/${NAMESPACE}/configmaps`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name },
          data,
        }),
      ),
    );
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { objects: { type: 'string', default: '5921' }, rounds: { type: 'string', default: '6' } } });
  const objects = Number(values.objects);
  const rounds = Number(values.rounds);
  const env = await startEnvtest();
  try {
    await seed(env, objects);
    const get = getter(env);
    const apiserverMs = apiserverCpu(env);
    const modes: Record<string, () => Promise<number>> = {
      'pages grown within 128 KiB (the operator, JSON)': () => paged(get, true, false),
      'pages grown within 1 MiB (the operator, protobuf)': () => paged(get, true, true),
      'pages of 500, JSON': () => paged(get, false, false),
      'pages of 500, protobuf': () => paged(get, false, true),
      'streaming list': () => streamed(get),
    };
    const samples = new Map<string, Sample[]>();
    for (let round = 0; round < rounds; round += 1) {
      for (const [mode, read] of Object.entries(modes)) {
        const [apiserver, cpu, wall] = [apiserverMs(), process.cpuUsage(), performance.now()];
        const count = await read();
        const sample = {
          wallMs: performance.now() - wall,
          clientCpuMs: cpuMs(process.cpuUsage(cpu)),
          apiserverCpuMs: apiserverMs() - apiserver,
        };
        if (count !== objects) throw new Error(`${mode}: read ${count} objects, not ${objects}`);
        if (round > 0) samples.set(mode, [...(samples.get(mode) ?? []), sample]);
      }
    }
    console.log(`${objects} ConfigMaps, kube-apiserver ${env.version}, ${rounds - 1} rounds (medians):`);
    for (const [mode, list] of samples) console.log(describe(mode, list));
  } finally {
    await env.stop();
  }
}

function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

function describe(mode: string, list: readonly Sample[]): string {
  const median = (pick: (sample: Sample) => number): string =>
    percentile(
      list.map(pick).sort((a, b) => a - b),
      50,
    ).toFixed(0);
  const walls = list.map((sample) => sample.wallMs.toFixed(0)).join(' / ');
  return `  ${mode}: wall ${median((s) => s.wallMs)} ms (${walls}); this process ${median((s) => s.clientCpuMs)} CPU-ms; kube-apiserver ${median((s) => s.apiserverCpuMs)} CPU-ms`;
}

await main();
