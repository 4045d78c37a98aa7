// Percentiles of latency samples, and arithmetic on API request counts by verb and resource.

/** A latency distribution, in milliseconds. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/**
 * The nearest-rank percentile: the smallest sample such that at least `p`% of the samples are ≤ it (so p99 of
 * 100 samples is the 99th smallest, and of 10 samples the largest). `sorted` must be ascending and non-empty.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error('percentile of no samples');
  if (!(p > 0 && p <= 100)) throw new Error(`percentile ${p} is not in (0, 100]`);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** p50, p95, p99, max and mean of the samples; undefined when there are none. */
export function summarize(samples: readonly number[]): LatencySummary | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
    mean: sum / sorted.length,
  };
}

/** API requests: verb → resource (`configmaps`, `deployments.apps`, `customapps.app.example.com/status`) → count. */
export type RequestCounts = Record<string, Record<string, number>>;

/** The verbs, in the order the report prints them. */
export const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] as const;

/** Adds one request to `counts` (in place). */
export function countRequest(counts: RequestCounts, verb: string, resource: string, by = 1): void {
  const resources = (counts[verb] ??= {});
  resources[resource] = (resources[resource] ?? 0) + by;
}

/** `after − before`, per verb and resource, leaving out zeros. */
export function diffCounts(after: RequestCounts, before: RequestCounts): RequestCounts {
  const diff: RequestCounts = {};
  for (const [verb, resources] of Object.entries(after)) {
    for (const [resource, count] of Object.entries(resources)) {
      const delta = count - (before[verb]?.[resource] ?? 0);
      if (delta !== 0) countRequest(diff, verb, resource, delta);
    }
  }
  return diff;
}

/** `a + b`, per verb and resource. */
export function addCounts(a: RequestCounts, b: RequestCounts): RequestCounts {
  const sum: RequestCounts = {};
  for (const counts of [a, b]) {
    for (const [verb, resources] of Object.entries(counts))
      for (const [resource, count] of Object.entries(resources)) countRequest(sum, verb, resource, count);
  }
  return sum;
}

/** Requests per verb, all resources together. */
export function byVerb(counts: RequestCounts): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const [verb, resources] of Object.entries(counts)) {
    totals[verb] = Object.values(resources).reduce((sum, count) => sum + count, 0);
  }
  return totals;
}

/** Every request, all verbs and resources together. */
export function totalRequests(counts: RequestCounts): number {
  return Object.values(byVerb(counts)).reduce((sum, count) => sum + count, 0);
}
