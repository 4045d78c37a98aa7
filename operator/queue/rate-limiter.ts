// Per-key retry delays for the work queue: client-go's exponential-failure and token-bucket limiters, and their max.
import type { SchedulerLike } from 'rxjs';

/** Decides how long a key waits before its next retry. */
export interface RateLimiter {
  /** The delay (ms) before `key` may be retried; each call counts as one more failure of `key`. */
  when(key: string): number;
  /** Clears `key`'s failure history (after a success). */
  forget(key: string): void;
  /** How many times `key` has failed since it was last forgotten. */
  retries(key: string): number;
}

/** Options of {@link ExponentialFailureRateLimiter}. */
export interface ExponentialFailureOptions {
  /** The first delay. @default 5 (ms, client-go's DefaultControllerRateLimiter) */
  readonly baseDelayMs?: number;
  /** The cap. @default 1_000_000 (1000 s, client-go's DefaultControllerRateLimiter) */
  readonly maxDelayMs?: number;
}

/**
 * `base × 2ⁿ` for the n-th consecutive failure of a key, capped; `forget` resets it. client-go's
 * `ItemExponentialFailureRateLimiter(5ms, 1000s)`.
 */
export class ExponentialFailureRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: ExponentialFailureOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 1_000_000;
  }

  when(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    // 2^failures overflows to Infinity long after the cap; Math.min keeps it finite.
    return Math.min(this.baseDelayMs * 2 ** failures, this.maxDelayMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/** Options of {@link TokenBucketRateLimiter}. */
export interface TokenBucketOptions {
  /** Tokens added per second. @default 10 (client-go's DefaultControllerRateLimiter) */
  readonly qps?: number;
  /** Bucket size: how many retries may go at once. @default 100 (client-go) */
  readonly burst?: number;
  /** Where the time comes from. */
  readonly scheduler: SchedulerLike;
}

/**
 * An overall limit on retries of all keys together: each `when` reserves one token and answers how long until it
 * is there (golang.org/x/time/rate's `Reserve().Delay()`, as client-go's `BucketRateLimiter` uses it).
 */
export class TokenBucketRateLimiter implements RateLimiter {
  private readonly qps: number;
  private readonly burst: number;
  private readonly scheduler: SchedulerLike;
  private tokens: number;
  private last: number;

  constructor(options: TokenBucketOptions) {
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    this.scheduler = options.scheduler;
    this.tokens = this.burst;
    this.last = this.scheduler.now();
  }

  when(_key?: string): number {
    const now = this.scheduler.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(): void {
    // The bucket is shared by all keys: a success returns no token.
  }

  retries(): number {
    return 0;
  }
}

/** The longest delay of several limiters: each sees every failure. client-go's `MaxOfRateLimiter`. */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(0, ...this.limiters.map((limiter) => limiter.when(key)));
  }

  forget(key: string): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  retries(key: string): number {
    return Math.max(0, ...this.limiters.map((limiter) => limiter.retries(key)));
  }
}

/**
 * client-go's `DefaultControllerRateLimiter()` (and controller-runtime's default): per key 5 ms × 2ⁿ capped at
 * 1000 s, and for all keys together 10 retries per second with a burst of 100.
 */
export function defaultControllerRateLimiter(
  scheduler: SchedulerLike,
  options: ExponentialFailureOptions & Omit<TokenBucketOptions, 'scheduler'> = {},
): RateLimiter {
  return new MaxOfRateLimiter(
    new ExponentialFailureRateLimiter(options),
    new TokenBucketRateLimiter({ scheduler, qps: options.qps, burst: options.burst }),
  );
}
