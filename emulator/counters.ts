// Request counters by verb, resource (and subresource), namespace and user, plus open watches, for tests and the benchmark.
import type { OpenWatch } from './watch.js';

export interface RequestRecord {
  readonly verb: string;
  readonly group: string;
  /** "configmaps", or "customapps/status" for a subresource. */
  readonly resource: string;
  readonly namespace: string;
  readonly user: string;
}

export interface CountFilter {
  readonly verb?: string;
  readonly group?: string;
  readonly resource?: string;
  readonly namespace?: string;
  readonly user?: string;
}

export interface CountersSnapshot {
  readonly total: number;
  readonly byVerb: Record<string, number>;
  /** Keyed "resource" for the core group, "resource.group" otherwise (e.g. "deployments.apps", "customapps/status.app.example.com"). */
  readonly byResource: Record<string, number>;
  readonly byNamespace: Record<string, number>;
  readonly byUser: Record<string, number>;
  /** Every distinct (verb, group, resource, namespace, user) with its count. */
  readonly requests: readonly (RequestRecord & { readonly count: number })[];
  readonly watches: {
    readonly open: number;
    readonly byResource: Record<string, number>;
    readonly byUser: Record<string, number>;
  };
}

export function qualified(group: string, resource: string): string {
  return group === '' ? resource : `${resource}.${group}`;
}

function bump(into: Record<string, number>, key: string, n: number): void {
  into[key] = (into[key] ?? 0) + n;
}

export class Counters {
  private readonly counts = new Map<string, { record: RequestRecord; count: number }>();

  constructor(private readonly openWatches: () => readonly OpenWatch[]) {}

  record(r: RequestRecord): void {
    const key = `${r.verb}\u0000${r.group}\u0000${r.resource}\u0000${r.namespace}\u0000${r.user}`;
    const entry = this.counts.get(key);
    if (entry === undefined) this.counts.set(key, { record: r, count: 1 });
    else entry.count++;
  }

  /** How many requests matched the filter since the last reset. */
  count(filter: CountFilter = {}): number {
    let n = 0;
    for (const { record, count } of this.counts.values()) {
      if (filter.verb !== undefined && record.verb !== filter.verb) continue;
      if (filter.group !== undefined && record.group !== filter.group) continue;
      if (filter.resource !== undefined && record.resource !== filter.resource) continue;
      if (filter.namespace !== undefined && record.namespace !== filter.namespace) continue;
      if (filter.user !== undefined && record.user !== filter.user) continue;
      n += count;
    }
    return n;
  }

  /** Open watches matching the filter (resource, group, namespace, user). */
  openWatchCount(filter: Omit<CountFilter, 'verb'> = {}): number {
    return this.openWatches().filter(
      (w) =>
        (filter.resource === undefined || w.resource === filter.resource) &&
        (filter.group === undefined || w.group === filter.group) &&
        (filter.namespace === undefined || w.namespace === filter.namespace) &&
        (filter.user === undefined || w.user === filter.user),
    ).length;
  }

  snapshot(): CountersSnapshot {
    const byVerb: Record<string, number> = {};
    const byResource: Record<string, number> = {};
    const byNamespace: Record<string, number> = {};
    const byUser: Record<string, number> = {};
    const requests: (RequestRecord & { count: number })[] = [];
    let total = 0;
    for (const { record, count } of this.counts.values()) {
      total += count;
      bump(byVerb, record.verb, count);
      bump(byResource, qualified(record.group, record.resource), count);
      bump(byNamespace, record.namespace, count);
      bump(byUser, record.user, count);
      requests.push({ ...record, count });
    }
    const watchesByResource: Record<string, number> = {};
    const watchesByUser: Record<string, number> = {};
    const open = this.openWatches();
    for (const w of open) {
      bump(watchesByResource, qualified(w.group, w.resource), 1);
      bump(watchesByUser, w.user, 1);
    }
    return {
      total,
      byVerb,
      byResource,
      byNamespace,
      byUser,
      requests,
      watches: { open: open.length, byResource: watchesByResource, byUser: watchesByUser },
    };
  }

  reset(): void {
    this.counts.clear();
  }
}
