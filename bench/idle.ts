// Watch re-requests per idle watch per hour: measured with a shortened server watch timeout, then extrapolated.
import type { AuditedRequest } from './audit.js';
import type { IdleResult } from './results.js';
import type { RequestCounts } from './stats.js';

/** kube-apiserver's default `--min-request-timeout`. */
export const DEFAULT_MIN_REQUEST_TIMEOUT_SECONDS = 1800;
/** A watch without timeoutSeconds lives uniformly in [T, 2T) s: 1.5 T on average. */
const SERVER_DEFAULT_PERIOD_SECONDS = 1.5 * DEFAULT_MIN_REQUEST_TIMEOUT_SECONDS;

export interface IdleInput {
  /** Every audited request of the operator so far (the watches that opened before the window matter too). */
  readonly requests: readonly AuditedRequest[];
  readonly fromMs: number;
  readonly toMs: number;
  readonly serverWatchTimeoutSeconds: number;
  /** Which requests renewed a stream (see AuditLog.counts). */
  readonly renewals: RequestCounts;
  readonly all: RequestCounts;
}

const sum = (counts: RequestCounts): number =>
  Object.values(counts)
    .flatMap((resources) => Object.values(resources))
    .reduce((a, b) => a + b, 0);

/**
 * The idle phase's figures. Each watch stream open during the window gets a renewal period:
 * 1. its watch requests carried `timeoutSeconds=t` → t (the server honours the client's value, whatever
 *    `--min-request-timeout` says, so the shortened server timeout did not change it);
 * 2. else, a watch of it ended before the server's (shortened) minimum timeout → the client closed it itself (an
 *    inactivity timer): the observed lifetime, which does not depend on the server either;
 * 3. else the server's default timeout ended it: uniform in [1800, 3600) s with the default
 *    `--min-request-timeout=1800`, so 2700 s on average.
 * The extrapolated rate is the mean over streams of 3600 / period, times the requests per renewal measured in the
 * window (1 when no renewal happened in it). The measured rate is the renewals seen in the window per stream per
 * hour, with the shortened timeout.
 */
export function idleFigures(input: IdleInput): IdleResult {
  const { fromMs, toMs } = input;
  const windowSeconds = (toMs - fromMs) / 1000;
  const shortTimeoutMs = input.serverWatchTimeoutSeconds * 1000;
  const watches = input.requests.filter(
    (request) =>
      request.verb === 'watch' && request.receivedMs < toMs && (request.completedMs === undefined || request.completedMs > fromMs),
  );
  const streams = new Map<string, AuditedRequest[]>();
  for (const watch of watches) {
    let list = streams.get(watch.streamKey);
    if (!list) streams.set(watch.streamKey, (list = []));
    list.push(watch);
  }
  const periods = { clientTimeout: 0, clientClosed: 0, serverDefault: 0 };
  let ratePerHour = 0;
  let endsInWindow = 0;
  for (const list of streams.values()) {
    const timeouts = list.map((watch) => watch.timeoutSeconds).filter((t): t is number => t !== undefined && t > 0);
    const lifetimes = list
      .filter((watch) => watch.completedMs !== undefined && watch.completedMs <= toMs)
      .map((watch) => watch.completedMs! - watch.receivedMs);
    endsInWindow += list.filter(
      (watch) => watch.completedMs !== undefined && watch.completedMs > fromMs && watch.completedMs <= toMs,
    ).length;
    const clientClosed = lifetimes.filter(
      (lifetime) => lifetime < 0.95 * shortTimeoutMs && (timeouts.length === 0 || lifetime < 0.95 * Math.min(...timeouts) * 1000),
    );
    let periodSeconds: number;
    if (clientClosed.length > 0) {
      periods.clientClosed += 1;
      periodSeconds = clientClosed.reduce((a, b) => a + b, 0) / clientClosed.length / 1000;
    } else if (timeouts.length > 0) {
      periods.clientTimeout += 1;
      periodSeconds = timeouts.reduce((a, b) => a + b, 0) / timeouts.length;
    } else {
      periods.serverDefault += 1;
      periodSeconds = SERVER_DEFAULT_PERIOD_SECONDS;
    }
    ratePerHour += 3600 / Math.max(periodSeconds, 0.001);
  }
  const renewals = sum(input.renewals);
  const requestsPerRenewal = endsInWindow > 0 && renewals > 0 ? renewals / endsInWindow : 1;
  const watchStreams = streams.size;
  return {
    windowSeconds,
    serverWatchTimeoutSeconds: input.serverWatchTimeoutSeconds,
    watchStreams,
    renewals,
    measuredPerWatchHour: watchStreams > 0 ? renewals / watchStreams / (windowSeconds / 3600) : 0,
    extrapolatedPerWatchHour: watchStreams > 0 ? (ratePerHour / watchStreams) * requestsPerRenewal : 0,
    periods,
    requestsPerRenewal,
    requests: input.all,
  };
}
