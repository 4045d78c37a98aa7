// Lines up the operator's trace lines with the harness's latency dump: where each ConfigMap update's time went.
//
// Usage: tsx bench/update-trace.ts <operator log> <latency dump> [what]
//   the log of a run with BENCH_OPERATOR_LOG_LEVEL=info (the session's `<participant>-<size>.log`: ours', or the Go
//   peer's, which then writes the same trace lines), the file of BENCH_LATENCY_DUMP, and the phase (`referenced
//   updates` by default). Prints a Markdown table of each stage.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { summarize } from './stats.js';

/** One expectation of the latency dump (`phases.ts`): a write the harness made, and when its Deployment was seen. */
export interface DumpLine {
  readonly what: string;
  /** `namespace/name` of the Deployment (and of its CustomApp). */
  readonly deployment: string;
  /** Epoch ms, just before the harness sent the ConfigMap write. */
  readonly sentAt: number;
  /** Until the harness's raw watcher saw the Deployment with the new hash; absent when it never did. */
  readonly latencyMs?: number;
}

/** One update's stages, in ms (the trace lines carry whole epoch milliseconds, so each stage is ± 1 ms). */
export interface UpdateStages {
  /** From the harness's write to the operator's enqueue: the API server's write and watch, decoding, hashing, triggers. */
  readonly eventMs: number;
  /** From the enqueue to the reconcile's start: the work queue. */
  readonly queueMs: number;
  /** From the reconcile's start to the Deployment write's request: the cache reads and the reconcile's steps. */
  readonly reconcileMs: number;
  /** The Deployment write's round trip, as the operator's client timed it. */
  readonly writeMs: number;
  /** The whole: from the harness's write until its raw watcher saw the Deployment. */
  readonly latencyMs: number;
}

interface TraceLine {
  readonly time: number;
  readonly msg: string;
  readonly key?: string;
  readonly traceId?: string;
  readonly reason?: string;
  readonly resource?: string;
  readonly durationMs?: number;
}

/** A trace line, or undefined for a line that is not one of the operator's JSON log lines. */
function traceLine(line: string): TraceLine | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(line) as Partial<TraceLine>;
    return typeof parsed.time === 'number' && typeof parsed.msg === 'string' ? (parsed as TraceLine) : undefined;
  } catch {
    return undefined;
  }
}

/** The trace lines by key, in log order. */
function linesByKey(lines: readonly string[]): Map<string, TraceLine[]> {
  const byKey = new Map<string, TraceLine[]>();
  for (const line of lines) {
    const trace = traceLine(line);
    if (trace?.key === undefined) continue;
    const list = byKey.get(trace.key) ?? [];
    list.push(trace);
    byKey.set(trace.key, list);
  }
  return byKey;
}

/**
 * Each update of phase `what` whose trace is whole: the enqueue a ConfigMap caused (the first at or after the write,
 * within a second; pino's clock is whole milliseconds, hence 1 ms of slack), its reconcile's start and its Deployment
 * write. An update without them (another session's, a participant that logs no trace, or one coalesced into another
 * reconcile) is left out.
 */
export function updateStages(logLines: readonly string[], dump: readonly DumpLine[], what = 'referenced updates'): UpdateStages[] {
  const byKey = linesByKey(logLines);
  const stages: UpdateStages[] = [];
  for (const update of dump) {
    if (update.what !== what || update.latencyMs === undefined) continue;
    const lines = (byKey.get(update.deployment) ?? []).filter(
      (line) => line.time >= Math.floor(update.sentAt) - 1 && line.time <= update.sentAt + 1000,
    );
    const enqueue = lines.find((line) => line.msg === 'enqueue' && line.reason?.startsWith('configmap'));
    const traced = (msg: string, extra: (line: TraceLine) => boolean = () => true): TraceLine | undefined =>
      lines.find((line) => line.msg === msg && line.traceId === enqueue?.traceId && extra(line));
    const start = traced('reconcile.start');
    const write = traced('write', (line) => line.resource === 'deployments.apps' && line.durationMs !== undefined);
    if (!enqueue || !start || !write) continue;
    const sent = write.time - write.durationMs!;
    stages.push({
      eventMs: enqueue.time - update.sentAt,
      queueMs: start.time - enqueue.time,
      reconcileMs: Math.max(0, sent - start.time),
      writeMs: write.durationMs!,
      latencyMs: update.latencyMs,
    });
  }
  return stages;
}

const STAGE_LABELS: Record<keyof UpdateStages, string> = {
  eventMs: 'ConfigMap write → the operator enqueues (API server write and watch, decoding, hashing, triggers)',
  queueMs: 'enqueue → reconcile starts (work queue)',
  reconcileMs: 'reconcile starts → Deployment write sent (cache reads, steps)',
  writeMs: 'Deployment write round trip',
  latencyMs: 'ConfigMap write → Deployment seen by the harness',
};

/** A Markdown table of the stages: p50, p95, p99 and mean of each. */
export function stagesTable(stages: readonly UpdateStages[]): string {
  const rows = (Object.keys(STAGE_LABELS) as (keyof UpdateStages)[]).map((stage) => {
    const summary = summarize(stages.map((update) => update[stage]));
    const cells = summary ? [summary.p50, summary.p95, summary.p99, summary.mean].map((value) => value.toFixed(2)) : ['–', '–', '–', '–'];
    return `| ${STAGE_LABELS[stage]} | ${cells.join(' | ')} |`;
  });
  return [
    `${stages.length} updates lined up`,
    '',
    '| stage | p50 (ms) | p95 | p99 | mean |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

function main(argv: readonly string[]): void {
  const [log, dump, what] = argv;
  if (!log || !dump) throw new Error('usage: tsx bench/update-trace.ts <operator log> <latency dump> [what]');
  const dumpLines = readFileSync(dump, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as DumpLine);
  process.stdout.write(`${stagesTable(updateStages(readFileSync(log, 'utf8').split('\n'), dumpLines, what))}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) main(process.argv.slice(2));
