// Fault injection: failing requests (500, or 429 with Retry-After), latency, dropped watches, forced 410s on the
// next watch or list continuation, and history expiry, for reliability tests and the benchmark.
import type { Store } from './store.js';
import type { OpenWatch, WatchHub } from './watch.js';

/** Which requests a fault applies to; every given field must match. */
export interface RequestMatch {
  /** One verb or several (get, list, watch, create, update, patch, delete, deletecollection). */
  readonly verb?: string | readonly string[];
  readonly group?: string;
  /** The resource, or "resource/subresource". */
  readonly resource?: string;
  readonly namespace?: string;
  readonly user?: string;
}

export interface FaultRequest {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly namespace: string;
  readonly user: string;
}

export interface FailureFault {
  readonly match?: RequestMatch;
  /** Fraction of matching requests that fail, 0..1 (default 1). */
  readonly rate?: number;
  /** 500 (InternalError, default), 429 (TooManyRequests with Retry-After) or 503. */
  readonly code?: 500 | 429 | 503;
  /** Retry-After seconds for 429 (default 1). */
  readonly retryAfterSeconds?: number;
  /** Stop after failing this many requests (default: no limit). */
  readonly times?: number;
}

export interface LatencyFault {
  readonly match?: RequestMatch;
  readonly ms: number;
}

export interface WatchMatch {
  readonly group?: string;
  readonly resource?: string;
  readonly namespace?: string;
  readonly user?: string;
}

export function matchesRequest(match: RequestMatch | undefined, r: FaultRequest): boolean {
  if (match === undefined) return true;
  if (match.verb !== undefined && !(typeof match.verb === 'string' ? [match.verb] : match.verb).includes(r.verb)) return false;
  if (match.group !== undefined && match.group !== r.group) return false;
  if (match.resource !== undefined && match.resource !== r.resource) return false;
  if (match.namespace !== undefined && match.namespace !== r.namespace) return false;
  if (match.user !== undefined && match.user !== r.user) return false;
  return true;
}

function matchesWatch(match: WatchMatch | undefined, w: { group: string; resource: string; namespace: string; user: string }): boolean {
  if (match === undefined) return true;
  return (
    (match.group === undefined || match.group === w.group) &&
    (match.resource === undefined || match.resource === w.resource) &&
    (match.namespace === undefined || match.namespace === w.namespace) &&
    (match.user === undefined || match.user === w.user)
  );
}

export interface FaultDescription {
  readonly id: number;
  readonly kind: 'failure' | 'latency' | 'expire-next-watch' | 'expire-next-continue';
  readonly spec: unknown;
}

export class Faults {
  private nextId = 1;
  private readonly failures = new Map<number, FailureFault & { failed: number }>();
  private readonly latencies = new Map<number, LatencyFault>();
  private readonly expireContinue = new Map<number, RequestMatch | undefined>();
  private readonly expireWatch = new Map<number, WatchMatch | undefined>();

  constructor(
    private readonly store: Store,
    private readonly hub: WatchHub,
    private readonly random: () => number,
    private readonly defaultHistoryWindow: number,
  ) {
    hub.forceExpired = (w) => {
      for (const [id, match] of this.expireWatch) {
        if (matchesWatch(match, { group: w.rt.group, resource: w.rt.resource, namespace: w.selection.namespace, user: w.user })) {
          this.expireWatch.delete(id);
          return true;
        }
      }
      return false;
    };
  }

  /** Fails matching requests; returns the fault's id (for remove). */
  failRequests(fault: FailureFault): number {
    const id = this.nextId++;
    this.failures.set(id, { ...fault, failed: 0 });
    return id;
  }

  addLatency(fault: LatencyFault): number {
    const id = this.nextId++;
    this.latencies.set(id, fault);
    return id;
  }

  /** Closes the open watches that match (all when no match is given); returns how many. */
  dropWatches(match?: WatchMatch, mode: 'end' | 'reset' = 'end', predicate?: (w: OpenWatch) => boolean): number {
    return this.hub.drop((w) => matchesWatch(match, w) && (predicate === undefined || predicate(w)), mode);
  }

  /** The next matching watch starts with a 410 Expired ERROR event instead of its events. */
  expireNextWatch(match?: WatchMatch): number {
    const id = this.nextId++;
    this.expireWatch.set(id, match);
    return id;
  }

  /** The next matching list with a continue token gets 410 Expired. */
  expireNextContinue(match?: RequestMatch): number {
    const id = this.nextId++;
    this.expireContinue.set(id, match);
    return id;
  }

  /** Forgets all event history up to now: every earlier resourceVersion gets 410 on watch and continue. */
  compact(): void {
    this.store.compact();
  }

  setHistoryWindow(size: number): void {
    this.store.setHistoryWindow(size);
  }

  remove(id: number): boolean {
    return this.failures.delete(id) || this.latencies.delete(id) || this.expireContinue.delete(id) || this.expireWatch.delete(id);
  }

  /** Removes every fault and restores the default history window (history already forgotten stays forgotten). */
  reset(): void {
    this.failures.clear();
    this.latencies.clear();
    this.expireContinue.clear();
    this.expireWatch.clear();
    this.store.setHistoryWindow(this.defaultHistoryWindow);
  }

  list(): FaultDescription[] {
    return [
      ...[...this.failures].map(([id, f]) => ({ id, kind: 'failure' as const, spec: f })),
      ...[...this.latencies].map(([id, f]) => ({ id, kind: 'latency' as const, spec: f })),
      ...[...this.expireWatch].map(([id, f]) => ({ id, kind: 'expire-next-watch' as const, spec: f ?? {} })),
      ...[...this.expireContinue].map(([id, f]) => ({ id, kind: 'expire-next-continue' as const, spec: f ?? {} })),
    ];
  }

  /** The latency to add to a request (the sum of matching latency faults). */
  latencyFor(r: FaultRequest): number {
    let ms = 0;
    for (const f of this.latencies.values()) if (matchesRequest(f.match, r)) ms += f.ms;
    return ms;
  }

  /** The failure to answer a request with, if a failure fault fires for it. */
  failureFor(r: FaultRequest): { code: 500 | 429 | 503; retryAfterSeconds: number } | undefined {
    for (const [id, f] of this.failures) {
      if (!matchesRequest(f.match, r)) continue;
      if (this.random() >= (f.rate ?? 1)) continue;
      f.failed++;
      if (f.times !== undefined && f.failed >= f.times) this.failures.delete(id);
      return { code: f.code ?? 500, retryAfterSeconds: f.retryAfterSeconds ?? 1 };
    }
    return undefined;
  }

  /** Whether a list continuation should be answered 410 (one-shot). */
  takeExpiredContinue(r: FaultRequest): boolean {
    for (const [id, match] of this.expireContinue) {
      if (matchesRequest(match, r)) {
        this.expireContinue.delete(id);
        return true;
      }
    }
    return false;
  }
}
