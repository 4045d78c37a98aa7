// Resubscribes a failed stream after an exponential, jittered delay that resets once the stream stays healthy.
import { asyncScheduler, defer, retry, tap, throwError, timer, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import { ApiError } from '../kube/errors.js';

/** How long to wait before each retry. Every field is in milliseconds unless said otherwise. */
export interface BackoffPolicy {
  /** The delay before the first retry. @default 800 */
  readonly initialDelayMs: number;
  /** The cap of the delay before jitter. @default 30_000 */
  readonly maxDelayMs: number;
  /** Each retry multiplies the delay by this. @default 2 */
  readonly factor: number;
  /** The delay becomes `delay × (1 + jitter × random())`, so 1 spreads it over [delay, 2 × delay). @default 1 */
  readonly jitter: number;
  /** A stream that ran this long without failing counts as healthy: the next failure starts over at the initial delay. @default 120_000 */
  readonly resetAfterMs: number;
  /** Give up (let the error through) after this many retries in a row. @default Infinity */
  readonly maxRetries: number;
}

/**
 * client-go's reflector defaults, which kube-runtime's `DefaultBackoff` copies: client-go
 * `tools/cache/reflector.go` builds `wait.NewExponentialBackoffManager(800*time.Millisecond, 30*time.Second,
 * 2*time.Minute, 2.0, 1.0, clock)` ("backoff will stop at [30,60) sec interval … If we don't backoff for 2min,
 * assume API server is healthy and we reset the backoff"); kube-runtime `watcher.rs` `DefaultBackoff` is an
 * exponential backoff of 800 ms → 30 s, factor 2, randomization 1.0, reset after 120 s.
 */
export const DEFAULT_BACKOFF: BackoffPolicy = {
  initialDelayMs: 800,
  maxDelayMs: 30_000,
  factor: 2,
  jitter: 1,
  resetAfterMs: 120_000,
  maxRetries: Number.POSITIVE_INFINITY,
};

/** One scheduled retry, as reported to `onRetry`. */
export interface Retry {
  /** 1 for the first retry after a healthy period. */
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: unknown;
}

/** What the backoff needs from the outside world; every field is injectable for tests. */
export interface BackoffDeps {
  /** Timers and the clock. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** A number in [0, 1) for the jitter. @default Math.random */
  readonly random?: () => number;
  /** Called when a retry is scheduled (for logs and metrics). @default none */
  readonly onRetry?: (retry: Retry) => void;
}

/**
 * The delay before retry number `attempt` (1-based): `initialDelayMs × factor^(attempt-1)`, capped at
 * `maxDelayMs`, then jittered up by `jitter × random`, and never less than the server's `Retry-After`.
 */
export function retryDelayMs(policy: BackoffPolicy, attempt: number, random: number, error?: unknown): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** (attempt - 1));
  const jittered = Math.round(base * (1 + policy.jitter * random));
  const retryAfterSeconds = error instanceof ApiError ? error.retryAfterSeconds : undefined;
  return retryAfterSeconds === undefined ? jittered : Math.max(jittered, retryAfterSeconds * 1000);
}

/**
 * On error, unsubscribes from the source and subscribes again after {@link retryDelayMs}; values and completion
 * pass through untouched. The attempt count lives in the subscription (two subscribers back off independently)
 * and starts over when the source had been subscribed for `resetAfterMs` without failing. A 429's `Retry-After`
 * (an {@link ApiError}'s `retryAfterSeconds`) is a floor for the delay. After `maxRetries` retries in a row the
 * error goes through. Unsubscribing during a delay cancels the pending timer: nothing resubscribes.
 */
export function backoff<T>(policy: BackoffPolicy = DEFAULT_BACKOFF, deps: BackoffDeps = {}): MonoTypeOperatorFunction<T> {
  const scheduler = deps.scheduler ?? asyncScheduler;
  const random = deps.random ?? Math.random;
  return (source) =>
    defer(() => {
      let attempt = 0;
      let healthySince = scheduler.now();
      return source.pipe(
        retry({
          delay: (error: unknown) => {
            if (scheduler.now() - healthySince >= policy.resetAfterMs) attempt = 0;
            if (attempt >= policy.maxRetries) return throwError(() => error);
            attempt += 1;
            const delayMs = retryDelayMs(policy, attempt, random(), error);
            deps.onRetry?.({ attempt, delayMs, error });
            return timer(delayMs, scheduler).pipe(
              tap(() => {
                healthySince = scheduler.now();
              }),
            );
          },
        }),
      );
    });
}
