// What an operator process under benchmark answers on /stats (the TypeScript runner and the Go peer alike).
import type { RequestCounts } from './stats.js';

export interface OperatorStats {
  /** True once the caches synced and the workers run. */
  readonly ready: boolean;
  /** V8's heapUsed, or Go's HeapAlloc. */
  readonly heapUsedBytes: number;
  /** V8's heapTotal, or Go's HeapSys. */
  readonly heapTotalBytes: number;
  /** Resident set size of the whole process. */
  readonly rssBytes: number;
  /** API requests the process made, by verb and resource, as its own client counted them. */
  readonly requests: RequestCounts;
  /** Watches open now, when the process can tell (-1 when it cannot). */
  readonly openWatches: number;
  /** Reconciles run so far. */
  readonly reconciles: number;
  /** Objects held in the process's caches, by resource. */
  readonly cachedObjects: Record<string, number>;
  /** True when a garbage collection ran just before the memory figures were read. */
  readonly gcForced: boolean;
  /** The TypeScript operators' time per reconcile step so far (customapp_reconcile_step_seconds); absent for the peer. */
  readonly reconcileSteps?: Record<string, { readonly count: number; readonly seconds: number }>;
  /** Strategy-specific counters (for example the seed informers that died). */
  readonly notes?: Record<string, number>;
}

/** The line an operator process prints on stdout once /stats listens. */
export interface StatsListening {
  readonly msg: 'stats listening';
  readonly address: string;
}

/** Recognizes the {@link StatsListening} line among a process's output lines. */
export function statsAddressOf(line: string): string | undefined {
  if (!line.includes('stats listening')) return undefined;
  try {
    const parsed = JSON.parse(line) as Partial<StatsListening>;
    return parsed.msg === 'stats listening' && typeof parsed.address === 'string' ? parsed.address : undefined;
  } catch {
    return undefined;
  }
}
