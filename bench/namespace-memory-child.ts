// One operator process for bench/namespace-memory.ts: runs until a namespace's refs are synced, then prints its peak memory.
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { UNGOVERNED } from '../operator/governance/governance.js';
import { createOperator } from '../operator/operator.js';
import type { DependencyRef } from '../operator/dependencies/source.js';

/** What the parent passes as the one argument (JSON). */
export interface ChildInput {
  readonly kubeconfigPath: string;
  readonly refs: readonly DependencyRef[];
  /** `before`: the watcher's general page size (500) and no byte budget for namespace lists; `after`: the defaults. */
  readonly mode: 'before' | 'after';
  readonly timeoutMs: number;
}

/** What the child prints as its last stdout line (JSON). */
export interface ChildResult {
  readonly mode: 'before' | 'after';
  readonly synced: number;
  readonly refs: number;
  readonly durationMs: number;
  /** VmHWM: the kernel's peak resident set size of the process. */
  readonly peakRssMiB: number;
  /** Sampled every 10 ms. */
  readonly peakHeapUsedMiB: number;
  /** Sampled every 10 ms: Buffers and other memory outside the V8 heap. */
  readonly peakExternalMiB: number;
  readonly failingLists: readonly string[];
}

const MiB = 1024 * 1024;

/** The kernel's peak RSS of this process, from /proc (Linux). */
function peakRssMiB(): number {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmHWM:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

async function main(input: ChildInput): Promise<ChildResult> {
  const peak = { heapUsed: 0, external: 0 };
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    peak.heapUsed = Math.max(peak.heapUsed, usage.heapUsed);
    peak.external = Math.max(peak.external, usage.external);
  }, 10);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(input.kubeconfigPath);
  const started = performance.now();
  const operator = await createOperator({
    kubeConfig,
    logger: pino({ level: 'warn' }, pino.destination(2)),
    rollouts: UNGOVERNED,
    registry: { watch: input.mode === 'before' ? { pageSize: 500, maxPageBytes: Number.POSITIVE_INFINITY } : {} },
  });
  await operator.started;
  const deadline = started + input.timeoutMs;
  const synced = (): number => input.refs.filter((ref) => operator.registry?.current(ref) !== undefined).length;
  while (synced() < input.refs.length && performance.now() < deadline) await new Promise((done) => setTimeout(done, 100));
  const result: ChildResult = {
    mode: input.mode,
    synced: synced(),
    refs: input.refs.length,
    durationMs: Math.round(performance.now() - started),
    peakRssMiB: peakRssMiB(),
    peakHeapUsedMiB: Math.round(peak.heapUsed / MiB),
    peakExternalMiB: Math.round(peak.external / MiB),
    failingLists: (operator.registry?.failingLists() ?? []).map((list) => `${list.kind} ${list.namespace}: ${list.message}`),
  };
  clearInterval(sampler);
  await operator.stop();
  return result;
}

main(JSON.parse(process.argv[2] ?? '{}') as ChildInput).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
