// The shard table (RSS per shard, cold start, failovers by shard count) and the scale-out goals, met or missed and why.
import { formatNumber, runLine, sizeLabel, table, type TargetCheck, targetsTable } from '../report.js';
import type { RunHeader } from '../results.js';
import type { FailoverResult, ShardSessionResult } from './session.js';

/** The raw figures of a `--shards` run, as written to its JSON. */
export interface ShardBenchResults extends RunHeader {
  readonly runner: string;
  readonly sessions: readonly ShardSessionResult[];
}

/** How much later than the Lease duration a killed shard's objects may roll again (the goal's allowance). */
const KILLED_ALLOWANCE_MS = 2_000;
/** How soon after a graceful stop its objects must roll again. */
const GRACEFUL_GOAL_MS = 2_000;
/** Each of 4 shards' RSS against the single process'. */
const RSS_GOAL_RATIO = 0.35;

const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
const seconds = (ms: number | undefined): string => (ms === undefined ? '–' : (ms / 1000).toFixed(1));
const maxOf = (values: readonly number[]): number => Math.max(...values);
const meanOf = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;

function failoverCell(failover: FailoverResult | undefined, shards: number): string {
  if (!failover) return shards < 2 ? '– (one shard: no one takes over)' : '–';
  const last = failover.sinceStopMs;
  const missed = failover.missed ? `, **${failover.missed} missed**` : '';
  if (!last) return `none of ${failover.stoppedShardApps} rolled${missed}`;
  const others = failover.othersSinceWriteMs ? `; the others' max ${seconds(failover.othersSinceWriteMs.max)} after their write` : '';
  return `${seconds(last.max)} (its ${failover.stoppedShardApps} of ${failover.updates} apps${others}${missed})`;
}

/** The single-shard session of the same size: the baseline of the RSS ratios. */
function baselineOf(sessions: readonly ShardSessionResult[], size: number): ShardSessionResult | undefined {
  return sessions.find((session) => session.size === size && session.shards === 1 && session.rssBytes?.length);
}

/** The table: one row per shard count and size. */
export function shardTable(sessions: readonly ShardSessionResult[]): string {
  return table(
    [
      'shards',
      'N',
      'converged from cold (s)',
      'RSS per shard, max / mean (MiB)',
      'max RSS ÷ 1 shard',
      'SIGKILL: last app rolled again after (s)',
      'SIGTERM: last app rolled again after (s)',
    ],
    sessions.map((session) => {
      const rss = session.rssBytes ?? [];
      const baseline = baselineOf(sessions, session.size)?.rssBytes?.[0];
      return [
        String(session.shards),
        sizeLabel(session.size),
        seconds(session.coldStartMs),
        rss.length ? `${mib(maxOf(rss))} / ${mib(meanOf(rss))}` : '–',
        rss.length && baseline ? `${formatNumber(maxOf(rss) / baseline)}×` : '–',
        failoverCell(session.killed, session.shards),
        failoverCell(session.graceful, session.shards),
      ];
    }),
  );
}

/** The issue's scale-out goals, checked against each size's sessions. */
export function shardChecks(sessions: readonly ShardSessionResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const size of [...new Set(sessions.map((session) => session.size))].sort((a, b) => a - b)) {
    const at = sizeLabel(size);
    const baseline = baselineOf(sessions, size)?.rssBytes?.[0];
    const four = sessions.find((session) => session.size === size && session.shards === 4);
    const rss = four?.rssBytes ?? [];
    checks.push(
      rss.length && baseline
        ? {
            target: `with 4 shards each RSS ≤ ${RSS_GOAL_RATIO}× the single process (${at})`,
            measured: `${mib(maxOf(rss))} vs ${mib(baseline)} MiB = ${formatNumber(maxOf(rss) / baseline)}×`,
            met: maxOf(rss) / baseline <= RSS_GOAL_RATIO,
          }
        : { target: `with 4 shards each RSS ≤ ${RSS_GOAL_RATIO}× the single process (${at})`, measured: 'not measured', met: undefined },
    );
    for (const session of sessions.filter((each) => each.size === size && each.shards >= 2)) {
      const bound = session.leaseDurationMs + KILLED_ALLOWANCE_MS;
      const killed = session.killed?.sinceStopMs?.max;
      checks.push({
        target: `${session.shards} shards: a killed shard's objects roll again within the Lease duration + 2 s (${at})`,
        measured:
          killed === undefined
            ? 'not measured'
            : `${seconds(killed)} s (bound ${seconds(bound)} s)${session.killed?.missed ? `, ${session.killed.missed} missed` : ''}`,
        met: killed === undefined ? undefined : killed <= bound && session.killed!.missed === 0,
      });
      const graceful = session.graceful?.sinceStopMs?.max;
      checks.push({
        target: `${session.shards} shards: a gracefully stopped shard's objects roll again within 2 s (${at})`,
        measured:
          graceful === undefined
            ? 'not measured'
            : `${seconds(graceful)} s${session.graceful?.missed ? `, ${session.graceful.missed} missed` : ''}`,
        met: graceful === undefined ? undefined : graceful <= GRACEFUL_GOAL_MS && session.graceful!.missed === 0,
      });
    }
  }
  return checks;
}

/** The whole report of a `--shards` run. */
export function renderShardReport(results: ShardBenchResults): string {
  const sessions = [...results.sessions].sort((a, b) => a.size - b.size || a.shards - b.shards);
  const failed = sessions.filter((session) => session.error);
  const lines = [
    `# Shard benchmark (${results.profile}, ${results.target})`,
    '',
    `${runLine(results, sessions)} · operator/main.ts as a ${results.runner}`,
    '',
    '## Shards side by side',
    'Each row: N CustomApps on a fresh API server, then that many `operator/main.ts --sharding` processes started at once.',
    "RSS: each shard's /proc VmRSS once the cold start settled. A failover: one shard stopped (SIGKILL, or SIGTERM after a " +
      "replacement joined), then writes to 200 CustomApps' own ConfigMaps (32 at a time); the time is from the stop to the " +
      "last Deployment of the stopped shard's apps rolled (its apps by the ring, about 1/N), as a raw watcher sees it; beside " +
      "it, how long the other shards' apps took from their write to their roll, while the view changed under them.",
    '',
    shardTable(sessions),
    '',
    '## Scale-out goals',
    '',
    targetsTable(shardChecks(sessions)),
    '',
  ];
  if (failed.length > 0) {
    lines.push('## Sessions that stopped early', '');
    for (const session of failed) lines.push(`- ${session.shards} shards at ${sizeLabel(session.size)}: ${session.error}`);
    lines.push('');
  }
  return lines.join('\n');
}
