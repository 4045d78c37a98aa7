// The raw figures of a benchmark run, as written to results.json and read by the report and the chart.
import { cpus, totalmem } from 'node:os';
import type { BenchOptions, BenchTarget, Participant } from './options.js';
import type { CpuSeconds } from './cpu.js';
import { JEMALLOC } from './operator-process.js';
import type { LatencySummary, RequestCounts } from './stats.js';

/** Where the request counts of a session come from. */
export type RequestSource = 'audit' | 'counters' | 'self';

/** One phase of a session. */
export interface PhaseResult {
  /** Writes the harness made in the phase (the divisor of "per update"). */
  readonly operations: number;
  readonly durationMs: number;
  /** The operator's requests, from the server's audit log (envtest, renewals excluded) or the emulator's counters of its identity. */
  readonly requests: RequestCounts;
  /** Watch renewals and relists of streams whose watch had just ended (audit log only). */
  readonly renewals?: RequestCounts;
  /** The operator's requests as its own client counted them (renewals included). */
  readonly selfRequests: RequestCounts;
  readonly reconciles: number;
  /** Deployment changes (hash, image or existence) the raw watcher saw in the phase. */
  readonly deploymentChanges: number;
  /** Write → Deployment change seen by the raw watcher. */
  readonly latencyMs?: LatencySummary;
  /**
   * Write → the CustomApp's status.configHash saying the new content, seen by a raw watcher (the shared-update phase:
   * the fan-out's statuses, beside its Deployments in `latencyMs`).
   */
  readonly statusLatencyMs?: LatencySummary;
  /** Write → the written object seen by a raw watcher: the API server's own delivery time. */
  readonly floorMs?: LatencySummary;
  /** Deployment changes the phase's writes called for. */
  readonly expected?: number;
  /** Of those, the ones never seen (within the miss window). */
  readonly missed?: number;
  /** CPU seconds (user + system) spent in the phase by the operator process, kube-apiserver and etcd (from /proc). */
  readonly cpuSeconds?: CpuSeconds;
  /** The operator's own time per reconcile step in the phase (ours and the TypeScript strategies; see ReconcileSteps). */
  readonly reconcileSteps?: ReconcileSteps;
}

/** Reconcile step → how many times it ran and the seconds it took in all (customapp_reconcile_step_seconds). */
export type ReconcileSteps = Record<string, { readonly count: number; readonly seconds: number }>;

export interface ColdStartResult extends PhaseResult {
  /** Process spawn → the last Deployment carrying its ConfigMap's hash (undefined when some never did). */
  readonly convergedMs?: number;
  /** Deployments carrying the right hash at the end of the phase. */
  readonly converged: number;
}

export interface RestartResult extends PhaseResult {
  /** Process spawn → settled (workers running, no request and no Deployment change for the settle time). */
  readonly settledMs?: number;
  /** SIGTERM → exit of the old process. */
  readonly stopMs: number;
}

export interface MemoryResult {
  /** The runtime's live heap; undefined when the process does not tell it (Reloader's /metrics, when it is not reachable). */
  readonly heapUsedBytes?: number;
  readonly heapTotalBytes?: number;
  readonly rssBytes: number;
  readonly gcForced: boolean;
}

export interface IdleResult {
  readonly windowSeconds: number;
  readonly serverWatchTimeoutSeconds: number;
  /** Distinct watch streams open during the window. */
  readonly watchStreams: number;
  /** List and watch requests that renewed a stream during the window. */
  readonly renewals: number;
  /** renewals ÷ streams ÷ window, per hour, with the server's shortened timeout. */
  readonly measuredPerWatchHour: number;
  /** The rate with the default `--min-request-timeout=1800` (see bench/README.md for the model). */
  readonly extrapolatedPerWatchHour?: number;
  /** How each stream's renewal period was found. */
  readonly periods: { readonly clientTimeout: number; readonly clientClosed: number; readonly serverDefault: number };
  /** Requests per renewal (a watch, plus a relist when the client relists). */
  readonly requestsPerRenewal: number;
  /** All the operator's requests in the window, renewals included. */
  readonly requests: RequestCounts;
}

/** One participant at one size, on a fresh API server. */
export interface SessionResult {
  readonly participant: Participant;
  readonly size: number;
  readonly namespaces: number;
  readonly target: BenchTarget;
  readonly serverVersion: string;
  readonly requestSource: RequestSource;
  readonly coldStart?: ColdStartResult;
  readonly afterSync?: {
    readonly memory: MemoryResult;
    /** Watches open on the server (audit log), or -1 when unknown. */
    readonly openWatches: number;
    readonly cachedObjects: Record<string, number>;
  };
  readonly referenced?: PhaseResult;
  readonly unrelated?: PhaseResult;
  readonly spec?: PhaseResult;
  /** Updates of the shared ConfigMaps after some sharers switched away (the seed's missing reference count shows here). */
  readonly shared?: PhaseResult;
  readonly idle?: IdleResult;
  readonly restart?: RestartResult;
  /** Expected Deployment changes never seen, over every phase. */
  readonly missedTotal: number;
  /** Strategy-specific counters from the process (e.g. dead seed informers). */
  readonly notes: Record<string, number>;
  /** Set when the session stopped early; the phases before it are kept. */
  readonly error?: string;
}

/** What every results file records of its run: the command, when it ran, on what profile and target, on which machine. */
export interface RunHeader {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly command: string;
  readonly profile: string;
  readonly target: BenchTarget;
  readonly machine: {
    readonly cpus: number;
    readonly memoryGiB: number;
    readonly node: string;
    readonly platform: string;
    /** The TypeScript operators' malloc: `jemalloc` as in the operator image, or `glibc` where it is not installed. */
    readonly allocator?: 'jemalloc' | 'glibc';
  };
}

/**
 * The header of a run of `command` that started at `startedAt`; `finishedAt` is the time of the call, so each snapshot
 * written after a session says how far the run got.
 */
export function runHeader(startedAt: string, command: string, options: Pick<BenchOptions, 'profile' | 'target'>): RunHeader {
  return {
    startedAt,
    finishedAt: new Date().toISOString(),
    command,
    profile: options.profile.name,
    target: options.target,
    machine: {
      cpus: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: process.platform,
      allocator: JEMALLOC === undefined ? 'glibc' : 'jemalloc',
    },
  };
}

export interface BenchResults extends RunHeader {
  readonly settings: Record<string, unknown>;
  readonly sessions: readonly SessionResult[];
}
