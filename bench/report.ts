// The Markdown report of a benchmark run: the side-by-side tables and the targets for ours, from the raw figures.
import { isWorkloadParticipant, PARTICIPANT_LABELS, type Participant } from './options.js';
import type { BenchResults, PhaseResult, RunHeader, SessionResult } from './results.js';
import { byVerb, VERBS, type RequestCounts } from './stats.js';

const label = (participant: Participant): string => (participant === 'ours' ? '**ours**' : PARTICIPANT_LABELS[participant]);

/** `1k`, `10k`, `500`. */
export function sizeLabel(size: number): string {
  return size >= 1000 && size % 1000 === 0 ? `${size / 1000}k` : String(size);
}

/** A number for a table cell: `12.3k` from 10k up, whole numbers as they are, others with two decimals (two significant digits below 0.1). */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '–';
  if (Math.abs(value) >= 10_000) return `${(value / 1000).toFixed(1).replace(/\.0$/, '')}k`;
  if (Number.isInteger(value)) return String(value);
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 0.1) return value.toFixed(2).replace(/\.?0+$/, '');
  return String(Number(value.toPrecision(2)));
}

/** `list 2 · watch 3 · patch 1k`: the non-zero verbs of `counts`, each divided by `per`; `0` when there are none. */
export function formatVerbs(counts: RequestCounts | undefined, per = 1): string {
  if (!counts) return '–';
  const totals = byVerb(counts);
  const parts = [...VERBS, ...Object.keys(totals).filter((verb) => !(VERBS as readonly string[]).includes(verb))]
    .filter((verb) => (totals[verb] ?? 0) !== 0)
    .map((verb) => `${verb} ${formatNumber(totals[verb]! / per)}`);
  return parts.length > 0 ? parts.join(' · ') : '0';
}

/** Milliseconds, or whole seconds from 10 s up. */
const ms = (value: number | undefined): string => {
  if (value === undefined) return '–';
  return value >= 10_000 ? `${(value / 1000).toFixed(0)} s` : formatNumber(Math.round(value * 10) / 10);
};
const mib = (bytes: number | undefined): string => (bytes === undefined ? '–' : (bytes / 1024 / 1024).toFixed(1));
const seconds = (value: number | undefined): string => (value === undefined ? '–' : (value / 1000).toFixed(1));

function perOp(phase: PhaseResult | undefined): string {
  return phase ? formatVerbs(phase.requests, Math.max(1, phase.operations)) : '–';
}

function latency(phase: PhaseResult | undefined): string {
  const summary = phase?.latencyMs;
  return summary ? `${ms(summary.p50)} / ${ms(summary.p95)} / ${ms(summary.p99)}` : '–';
}

function cached(session: SessionResult): string {
  const objects = session.afterSync?.cachedObjects;
  // A process that does not tell its caches (Reloader) has none listed: unknown, not zero.
  if (!objects || Object.keys(objects).length === 0) return '–';
  const total = Object.values(objects).reduce((sum, count) => sum + count, 0);
  return `${formatNumber(total)} (${formatNumber(objects.configmaps ?? 0)} cm)`;
}

function missed(session: SessionResult): string {
  const phases = [session.referenced, session.spec, session.shared].filter((phase): phase is PhaseResult => phase !== undefined);
  const expected = phases.reduce((sum, phase) => sum + (phase.expected ?? 0), 0);
  return expected === 0 ? '–' : `${session.missedTotal}/${expected}`;
}

function row(cells: readonly string[]): string {
  return `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
}

/** A Markdown table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [row(header), row(header.map(() => '---')), ...rows.map(row)].join('\n');
}

/** `8.2 (40 measured at 60 s)`: extrapolated to the default server timeout, then measured with the shortened one. */
function idleCell(session: SessionResult): string {
  const idle = session.idle;
  if (!idle) return '–';
  const measured = `${formatNumber(idle.measuredPerWatchHour)} measured${idle.serverWatchTimeoutSeconds > 0 ? ` at ${idle.serverWatchTimeoutSeconds} s` : ''}`;
  return `${idle.extrapolatedPerWatchHour === undefined ? '–' : formatNumber(idle.extrapolatedPerWatchHour)} (${measured})`;
}

/** The requests table: what each participant asks of the API server, per phase. */
export function requestsTable(sessions: readonly SessionResult[]): string {
  return table(
    [
      'strategy',
      'N',
      'cold start',
      'per referenced update',
      'per unrelated update',
      'reconciles per unrelated update',
      'per spec update',
      'restart',
      'idle re-requests per watch per hour',
    ],
    sessions.map((session) => [
      label(session.participant),
      sizeLabel(session.size),
      formatVerbs(session.coldStart?.requests),
      perOp(session.referenced),
      perOp(session.unrelated),
      session.unrelated ? formatNumber(session.unrelated.reconciles / Math.max(1, session.unrelated.operations)) : '–',
      perOp(session.spec),
      formatVerbs(session.restart?.requests),
      idleCell(session),
    ]),
  );
}

/** The resources and latency table. */
export function resourcesTable(sessions: readonly SessionResult[]): string {
  return table(
    [
      'strategy',
      'N',
      'converged from cold (s)',
      'restart settled (s)',
      'watch streams',
      'cached objects',
      'heap (MiB)',
      'RSS (MiB)',
      'latency p50 / p95 / p99 (ms)',
      'API floor p99 (ms)',
      'fan-out p99 (ms)',
      'fan-out p99, statuses (ms)',
      'missed updates',
    ],
    sessions.map((session) => [
      label(session.participant),
      sizeLabel(session.size),
      session.coldStart?.convergedMs !== undefined
        ? seconds(session.coldStart.convergedMs)
        : session.coldStart
          ? `not converged (${session.coldStart.converged}/${session.size})`
          : '–',
      session.restart ? (session.restart.settledMs === undefined ? 'never' : seconds(session.restart.settledMs)) : '–',
      session.afterSync ? formatNumber(session.afterSync.openWatches) : '–',
      cached(session),
      mib(session.afterSync?.memory.heapUsedBytes),
      mib(session.afterSync?.memory.rssBytes),
      latency(session.referenced),
      ms(session.referenced?.floorMs?.p99),
      ms(session.shared?.latencyMs?.p99),
      ms(session.shared?.statusLatencyMs?.p99),
      missed(session),
    ]),
  );
}

/**
 * The workload participants (annotated Deployments, no CustomApp): what each rolled when nothing called for it (its
 * cold start over Deployments already annotated, unrelated ConfigMap writes, its own restart), beside its latency.
 */
export function workloadsTable(sessions: readonly SessionResult[]): string {
  const rolled = (phase: PhaseResult | undefined): string => (phase ? formatNumber(phase.deploymentChanges) : '–');
  return table(
    [
      'participant',
      'N',
      'rolled at cold start',
      'rolled by unrelated updates',
      'rolled on restart',
      'latency p50 / p95 / p99 (ms)',
      'fan-out p99 (ms)',
      'missed updates',
      'RSS (MiB)',
      'requests per referenced update',
    ],
    sessions
      .filter((session) => isWorkloadParticipant(session.participant))
      .map((session) => [
        label(session.participant),
        sizeLabel(session.size),
        rolled(session.coldStart),
        rolled(session.unrelated),
        rolled(session.restart),
        latency(session.referenced),
        ms(session.shared?.latencyMs?.p99),
        missed(session),
        mib(session.afterSync?.memory.rssBytes),
        perOp(session.referenced),
      ]),
  );
}

const cpuCell = (value: number | undefined): string => (value === undefined ? '–' : value.toFixed(1));

/** The sum of one role's CPU seconds over some phases; undefined when none of them has it. */
export function cpuOver(phases: readonly (PhaseResult | undefined)[], role: 'operator' | 'apiserver' | 'etcd'): number | undefined {
  const values = phases.map((phase) => phase?.cpuSeconds?.[role]).filter((value): value is number => value !== undefined);
  return values.length === 0 ? undefined : values.reduce((sum, value) => sum + value, 0);
}

/**
 * CPU seconds (user + system, from /proc/<pid>/stat) of the operator process, kube-apiserver and etcd in the cold start,
 * the four update phases together, and the restart; and the operator's CPU per cold-start reconcile.
 */
export function cpuTable(sessions: readonly SessionResult[]): string {
  return table(
    [
      'strategy',
      'N',
      'operator: cold start',
      'operator: updates',
      'operator: restart',
      'operator ms per cold-start reconcile',
      'kube-apiserver: cold start',
      'etcd: cold start',
      'kube-apiserver: updates',
    ],
    sessions.map((session) => {
      const updates = [session.referenced, session.unrelated, session.spec, session.shared];
      const cold = session.coldStart;
      const perReconcile =
        cold?.cpuSeconds?.operator !== undefined && cold.reconciles > 0
          ? `${((cold.cpuSeconds.operator * 1000) / cold.reconciles).toFixed(2)}`
          : '–';
      return [
        label(session.participant),
        sizeLabel(session.size),
        cpuCell(cold?.cpuSeconds?.operator),
        cpuCell(cpuOver(updates, 'operator')),
        cpuCell(session.restart?.cpuSeconds?.operator),
        perReconcile,
        cpuCell(cold?.cpuSeconds?.apiserver),
        cpuCell(cold?.cpuSeconds?.etcd),
        cpuCell(cpuOver(updates, 'apiserver')),
      ];
    }),
  );
}

/** `write create deployments.apps 2.1 ms × 1000`: each step's mean time and count, the costliest first. */
export function stepsCell(steps: PhaseResult['reconcileSteps']): string {
  if (!steps || Object.keys(steps).length === 0) return '–';
  return Object.entries(steps)
    .sort(([, a], [, b]) => b.seconds - a.seconds)
    .map(
      ([step, { count, seconds }]) =>
        `${step} ${formatNumber(Math.round(((seconds * 1000) / count) * 100) / 100)} ms × ${formatNumber(count)}`,
    )
    .join(' · ');
}

/** The TypeScript operators' time per reconcile step (mean wall time and count) in the cold start and the referenced updates. */
export function stepsTable(sessions: readonly SessionResult[]): string {
  const rows = sessions
    .filter((session) => session.coldStart?.reconcileSteps || session.referenced?.reconcileSteps)
    .flatMap((session) =>
      (
        [
          ['cold start', session.coldStart],
          ['referenced updates', session.referenced],
          ['shared updates', session.shared],
        ] as const
      ).map(([phase, result]) => [label(session.participant), sizeLabel(session.size), phase, stepsCell(result?.reconcileSteps)]),
    );
  return table(['strategy', 'N', 'phase', 'step: mean wall time × count (nested: deployment holds its write and Event)'], rows);
}

/** One target of ours, checked against the run. */
export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  /** undefined when the run has no figure for it. */
  readonly met: boolean | undefined;
}

const find = (sessions: readonly SessionResult[], participant: Participant, size: number): SessionResult | undefined =>
  sessions.find((session) => session.participant === participant && session.size === size && !session.error);

/** Checks ours against the targets of DESIGN.md §6, for every size in the run. */
export function checkTargets(sessions: readonly SessionResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const sizes = [...new Set(sessions.filter((session) => session.participant === 'ours').map((session) => session.size))].sort(
    (a, b) => a - b,
  );
  for (const size of sizes) {
    const ours = sessions.find((session) => session.participant === 'ours' && session.size === size);
    if (!ours) continue;
    const at = sizeLabel(size);
    const steady = [ours.referenced, ours.unrelated, ours.spec, ours.shared].filter((phase): phase is PhaseResult => phase !== undefined);
    const gets = steady.reduce((sum, phase) => sum + (byVerb(phase.requests).get ?? 0), 0);
    checks.push({
      target: `0 GETs at steady state (${at})`,
      measured: steady.length ? `${gets} GETs over the update phases` : 'no figure',
      met: steady.length ? gets === 0 : undefined,
    });
    const unrelated = ours.unrelated;
    checks.push({
      target: `0 reconciles per unrelated update (${at})`,
      measured: unrelated ? `${unrelated.reconciles} reconciles for ${unrelated.operations} updates` : 'no figure',
      met: unrelated ? unrelated.reconciles === 0 : undefined,
    });
    if (size === 1000 && ours.namespaces === 1) {
      const streams = ours.afterSync?.openWatches;
      checks.push({
        target: '≤ 10 watch streams at 1k CustomApps in one namespace',
        measured: streams === undefined || streams < 0 ? 'no figure' : `${streams} streams`,
        met: streams === undefined || streams < 0 ? undefined : streams <= 10,
      });
    }
    const limit = size <= 1000 ? 50 : size >= 10_000 ? 200 : undefined;
    const p99 = ours.referenced?.latencyMs?.p99;
    if (limit !== undefined)
      checks.push({
        target: `p99 propagation ≤ ${limit} ms (${at})`,
        measured: p99 === undefined ? 'no figure' : `${ms(p99)} ms`,
        met: p99 === undefined ? undefined : p99 <= limit,
      });
    const idle = ours.idle?.extrapolatedPerWatchHour;
    checks.push({
      target: `≤ 12 re-requests per idle watch per hour (${at})`,
      measured: idle === undefined ? 'no figure' : formatNumber(idle),
      met: idle === undefined ? undefined : idle <= 12,
    });
    checks.push(...peerRatioChecks(ours, find(sessions, 'peer', size), at));
    if (size >= 10_000) {
      const cold = ours.coldStart?.convergedMs;
      checks.push({
        target: `converged from cold ≤ 60 s (${at})`,
        measured: cold === undefined ? 'not converged' : `${seconds(cold)} s`,
        met: cold === undefined ? false : cold <= 60_000,
      });
      const reference = find(sessions, 'static-indexed', size)?.afterSync?.memory.heapUsedBytes;
      const heap = ours.afterSync?.memory.heapUsedBytes;
      checks.push({
        target: `heap ≤ 0.5× static-indexed (${at})`,
        measured:
          heap === undefined || reference === undefined
            ? 'no figure'
            : `${mib(heap)} MiB vs ${mib(reference)} MiB = ${(heap / reference).toFixed(2)}×`,
        met: heap === undefined || reference === undefined ? undefined : heap <= 0.5 * reference,
      });
      // Context for the row above, not a target: what each strategy holds for ConfigMaps, over naive-get's heap
      // (the same process, caches and reconcile, with no ConfigMap watch and no dependency state at all).
      const floor = find(sessions, 'naive-get', size)?.afterSync?.memory.heapUsedBytes;
      if (floor !== undefined && heap !== undefined && reference !== undefined && reference > floor) {
        checks.push({
          target: `(context) heap over naive-get's, ours vs static-indexed (${at})`,
          measured: `${mib(heap - floor)} MiB vs ${mib(reference - floor)} MiB = ${((heap - floor) / (reference - floor)).toFixed(2)}×`,
          met: undefined,
        });
      }
    }
  }
  return checks;
}

/** `a ÷ b` as a ratio check: `18.1 vs 12.1 ms = 1.50×`. */
function ratioCheck(
  target: string,
  a: number | undefined,
  b: number | undefined,
  limit: number,
  unit: string,
  format: (value: number) => string = ms,
): TargetCheck {
  const value = ratio(a, b);
  if (a === undefined || b === undefined || value === undefined) return { target, measured: 'no figure', met: undefined };
  return { target, measured: `${format(a)} vs ${format(b)}${unit} = ${value.toFixed(2)}×`, met: value <= limit };
}

/** `a ÷ b`, or undefined when either is missing or `b` is not positive. */
export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined || b <= 0 ? undefined : a / b;
}

/** The goals against the peer (DESIGN.md §6), ours ÷ the controller-runtime peer at its equal worker count, same run. */
export function peerRatioChecks(ours: SessionResult, peer: SessionResult | undefined, at: string): TargetCheck[] {
  const seconds1 = (value: number): string => (value / 1000).toFixed(1);
  return [
    ratioCheck(`p99 propagation ≤ 1.0× the peer (${at})`, ours.referenced?.latencyMs?.p99, peer?.referenced?.latencyMs?.p99, 1, ' ms'),
    ratioCheck(`p99 propagation ≤ 1.5× the API floor (${at})`, ours.referenced?.latencyMs?.p99, ours.referenced?.floorMs?.p99, 1.5, ' ms'),
    ratioCheck(`fan-out p99 ≤ 1.0× the peer (${at})`, ours.shared?.latencyMs?.p99, peer?.shared?.latencyMs?.p99, 1, ' ms'),
    // Not one of DESIGN.md's goals: the guard that a faster fan-out of Deployments did not just move the time into the statuses.
    ratioCheck(
      `fan-out p99 until the statuses say it ≤ 1.0× the peer (${at})`,
      ours.shared?.statusLatencyMs?.p99,
      peer?.shared?.statusLatencyMs?.p99,
      1,
      ' ms',
    ),
    ratioCheck(
      `RSS after sync ≤ 1.0× the peer (${at})`,
      ours.afterSync?.memory.rssBytes,
      peer?.afterSync?.memory.rssBytes,
      1,
      ' MiB',
      (bytes) => mib(bytes),
    ),
    ratioCheck(`cold start ≤ 1.5× the peer (${at})`, ours.coldStart?.convergedMs, peer?.coldStart?.convergedMs, 1.5, ' s', seconds1),
  ];
}

/** The targets table: each target, what was measured, and whether it was met. */
export function targetsTable(checks: readonly TargetCheck[]): string {
  return table(
    ['target (ours)', 'measured', 'met'],
    checks.map((check) => [check.target, check.measured, check.met === undefined ? 'n/a' : check.met ? 'yes' : '**no**']),
  );
}

/** A report's line under its title: the command, when it ran, the machine, and the API server its sessions met. */
export function runLine(results: RunHeader, sessions: readonly { readonly serverVersion?: string }[]): string {
  const { machine } = results;
  return (
    `\`${results.command}\` · ${results.startedAt} → ${results.finishedAt} · ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}` +
    (machine.allocator === undefined ? '' : ` (malloc: ${machine.allocator})`) +
    ` · API server ${sessions.find((session) => session.serverVersion)?.serverVersion ?? '?'}`
  );
}

/** The whole report: settings, the two tables, the targets, and the sessions that failed. */
export function renderReport(results: BenchResults, chartFile?: string): string {
  const sessions = [...results.sessions].sort((a, b) => a.size - b.size);
  const failed = sessions.filter((session) => session.error);
  const lines = [
    `# Benchmark results (${results.profile}, ${results.target})`,
    '',
    runLine(results, sessions),
    '',
    '## API requests',
    "Requests of the operator's own identity, from the API server's audit log (envtest) or the operator's own client (emulator).",
    '"Per update" divides a phase\'s requests by the writes the harness made in it; watch renewals are left out of the phases and measured in the idle column.',
    '',
    requestsTable(sessions),
    '',
    '## Resources and latency',
    'Latency: ConfigMap write → the Deployment change seen by a separate raw watcher. API floor: ConfigMap write → the ConfigMap seen by a raw watcher (same run).',
    '',
    resourcesTable(sessions),
    '',
    '## CPU seconds per phase',
    'User + system time of each process in the phase, from /proc/<pid>/stat (the operator from its spawn in the cold start and the restart).',
    '',
    cpuTable(sessions),
    '',
    '## Time per reconcile step (TypeScript operators)',
    'Wall time of each step, from `customapp_reconcile_step_seconds`: `dependencies` reads the ConfigMap and Secret states, `deployment` and `service` include their writes and Events, `status desired` computes the status, `status` writes it when it changed.',
    '',
    stepsTable(sessions),
    '',
    '## Targets for ours',
    '',
    targetsTable(checkTargets(sessions)),
    '',
  ];
  if (sessions.some((session) => isWorkloadParticipant(session.participant))) {
    lines.push(
      '## Workload participants (annotated Deployments)',
      'A rollout is a change of the pod template seen by a raw watcher; nothing should roll but the Deployments whose ConfigMap changed.',
      '',
      workloadsTable(sessions),
      '',
    );
  }
  if (chartFile) lines.push(`![requests, memory and latency](${chartFile})`, '');
  if (failed.length > 0) {
    lines.push('## Sessions that stopped early', '');
    for (const session of failed) lines.push(`- ${session.participant} at ${sizeLabel(session.size)}: ${session.error}`);
    lines.push('');
  }
  return lines.join('\n');
}
