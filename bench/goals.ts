// The goals of ours against the controller-runtime peer (bench/README.md's goals table), computed from runs' raw
// figures: `npx tsx bench/goals.ts <run.json>…` prints each goal's value per run and size.
import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { cpuOver, ratio } from './report.js';
import type { BenchResults, SessionResult } from './results.js';

/** A goal: its row in bench/README.md's table, and its value from ours and the peer (and Node's floor) of one session size. */
export interface Goal {
  /** How its row in the README's goals table begins. */
  readonly row: string;
  /** Digits its values are given with. */
  readonly digits: number;
  /** The goal is met where its value is at most this. */
  readonly limit: number;
  /** The sizes it is judged at, when not every size (the others' figures are given for comparison). */
  readonly sizes?: readonly number[];
  readonly value: (ours: SessionResult, peer: SessionResult, naive: SessionResult | undefined) => number | undefined;
}

const MIB = 1024 * 1024;

/** Ours ÷ the peer of one figure of a session. */
function versus(figure: (session: SessionResult) => number | undefined): Goal['value'] {
  return (ours, peer) => ratio(figure(ours), figure(peer));
}

/**
 * The cold start's CPU per CustomApp it converged: the same work for both (a Deployment made and a status written per
 * CustomApp), whatever the number of reconciles it took (ours reconciles most CustomApps once, the peer each twice).
 */
const cpuPerNewApp = (session: SessionResult): number | undefined => {
  const cold = session.coldStart;
  return cold && cold.converged > 0 ? ratio(cold.cpuSeconds?.operator, cold.converged) : undefined;
};
const updatesCpu = (session: SessionResult): number | undefined =>
  session.referenced ? cpuOver([session.referenced, session.unrelated, session.spec, session.shared], 'operator') : undefined;
const latency =
  (quantile: 'p50' | 'p95' | 'p99') =>
  (session: SessionResult): number | undefined =>
    session.referenced?.latencyMs?.[quantile];

/** The goals, in the README table's order ("per update" sums the four update phases, the same writes for both). */
export const GOALS: readonly Goal[] = [
  { row: 'operator CPU per new CustomApp in the cold start', digits: 2, limit: 1.3, value: versus(cpuPerNewApp) },
  { row: 'operator CPU per update', digits: 2, limit: 1.3, value: versus(updatesCpu) },
  { row: 'restart CPU', digits: 2, limit: 1.5, value: versus((session) => session.restart?.cpuSeconds?.operator) },
  { row: 'latency p50', digits: 2, limit: 1, value: versus(latency('p50')) },
  { row: 'latency p95', digits: 2, limit: 1, value: versus(latency('p95')) },
  { row: 'latency p99', digits: 2, limit: 1, value: versus(latency('p99')) },
  {
    row: 'p99 ≤ 1.5× the API floor',
    digits: 2,
    limit: 1.5,
    value: (ours) => ratio(ours.referenced?.latencyMs?.p99, ours.referenced?.floorMs?.p99),
  },
  { row: 'restart settled', digits: 2, limit: 1.5, value: versus((session) => session.restart?.settledMs) },
  { row: 'cold start', digits: 2, limit: 1.5, value: versus((session) => session.coldStart?.convergedMs) },
  { row: 'RSS ≤ 1.0×', digits: 2, limit: 1, sizes: [10_000, 25_000], value: versus((session) => session.afterSync?.memory.rssBytes) },
  {
    row: "RSS at 1k within 10 MiB of Node's floor",
    digits: 1,
    limit: 10,
    value: (ours, _peer, naive) => {
      const [a, b] = [ours.afterSync?.memory.rssBytes, naive?.afterSync?.memory.rssBytes];
      return a === undefined || b === undefined ? undefined : (a - b) / MIB;
    },
  },
  { row: 'fan-out p99', digits: 2, limit: 1, value: versus((session) => session.shared?.latencyMs?.p99) },
];

/** Each goal's value at each size of a run where both ours and the peer ran (undefined where a phase is missing). */
export function goalValues(results: Pick<BenchResults, 'sessions'>): { size: number; values: (number | undefined)[] }[] {
  const sizes = [...new Set(results.sessions.map((session) => session.size))].sort((a, b) => a - b);
  return sizes.flatMap((size) => {
    const at = (participant: string) => results.sessions.find((session) => session.size === size && session.participant === participant);
    const [ours, peer] = [at('ours'), at('peer')];
    if (!ours || !peer) return [];
    return [{ size, values: GOALS.map((goal) => goal.value(ours, peer, at('naive-get'))) }];
  });
}

function main(files: readonly string[]): void {
  if (files.length === 0) {
    process.stderr.write('usage: npx tsx bench/goals.ts <run.json>…\n');
    process.exit(2);
  }
  const columns = files.flatMap((file) => {
    const results = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
    const run = `${basename(dirname(file))}/${basename(file)}`;
    return goalValues(results).map(({ size, values }) => ({ name: `${run} ${size}`, values }));
  });
  const lines = [`| goal | ${columns.map((column) => column.name).join(' | ')} |`, `| --- |${' --- |'.repeat(columns.length)}`];
  GOALS.forEach((goal, index) => {
    const cells = columns.map((column) => column.values[index]?.toFixed(goal.digits) ?? '–');
    lines.push(`| ${goal.row} | ${cells.join(' | ')} |`);
  });
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[1] && import.meta.filename === process.argv[1]) main(process.argv.slice(2));
