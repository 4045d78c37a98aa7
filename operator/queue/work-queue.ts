// The controller's work queue, with client-go semantics: dedupe by key, one in flight per key, delayed and rate-limited adds.
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

/** One unit of work: a key to reconcile, why, and the trace that links it to its trigger. */
export interface WorkItem {
  /** `namespace/name`. */
  readonly key: string;
  /** Why it was first queued, as the controller words it (`customapp applied`, `configmap ns/app-config content 3f2a…`, `retry after error`…). */
  readonly reason: string;
  /** The trace id of the first trigger; later triggers coalesced into this item are listed in `coalesced`. */
  readonly traceId: string;
  /** Reasons of the triggers that arrived while this item was waiting (at most {@link MAX_COALESCED_REASONS}). */
  readonly coalesced: readonly string[];
  /** When it was queued (scheduler time, ms). */
  readonly queuedAt: number;
}

/** What `add` did with a key. */
export type AddOutcome =
  /** Queued as a new item. */
  | 'queued'
  /** The key was already waiting: this trigger joined that item. */
  | 'coalesced'
  /** The key is being reconciled: it will run exactly once more after that. */
  | 'deferred'
  /** The queue is shut down. */
  | 'dropped';

/** Observes the queue, for metrics (client-go's `MetricsProvider`). */
export interface QueueHooks {
  /** A trigger reached the queue (every `add`, even coalesced ones: client-go's `adds`). */
  onAdd?(key: string): void;
  /** The number of keys waiting changed. */
  onDepth?(depth: number): void;
  /** A key left the queue for a worker after waiting `waitedMs`. */
  onGet?(key: string, waitedMs: number): void;
  /** A worker finished a key after `workedMs`. */
  onDone?(key: string, workedMs: number): void;
  /** A rate-limited retry was scheduled. */
  onRetry?(key: string): void;
}

/** Options of {@link WorkQueue}. */
export interface WorkQueueOptions {
  /** Time and timers (virtual in tests). @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** Delays of `addRateLimited`. @default defaultControllerRateLimiter (5 ms × 2ⁿ ≤ 1000 s, and 10 qps / burst 100) */
  readonly rateLimiter?: RateLimiter;
  /** Metrics hooks. @default none */
  readonly hooks?: QueueHooks;
}

/** How many coalesced reasons an item remembers (for logs); later ones are only counted by `onAdd`. */
export const MAX_COALESCED_REASONS = 8;

interface Pending {
  reason: string;
  traceId: string;
  coalesced: string[];
  queuedAt: number;
}

interface Delayed {
  readonly due: number;
  readonly reason: string;
  readonly traceId: string;
  readonly timer: Subscription;
}

/**
 * A queue of keys in which:
 * - a key is waiting at most once (`add` of a waiting key coalesces into it);
 * - a key is handed to at most one worker at a time: an `add` while it is being processed marks it dirty, and
 *   `done` queues it again exactly once;
 * - `addAfter` queues a key after a delay (an earlier deadline replaces a later one, as client-go's delaying queue);
 * - `addRateLimited` delays by the rate limiter, `forget` resets the key's failures.
 *
 * Workers loop on `get()` (which resolves `undefined` once the queue is shut down) and call `done(item)` after each.
 */
export class WorkQueue {
  private readonly scheduler: SchedulerLike;
  private readonly rateLimiter: RateLimiter;
  private readonly hooks: QueueHooks;
  /** Keys ready for a worker, in order. Each is also in `dirty`. */
  private readonly ready: string[] = [];
  /** Keys that need a reconcile: waiting in `ready`, or to be queued again when their worker is done. */
  private readonly dirty = new Map<string, Pending>();
  /** Keys being reconciled, with when they started. */
  private readonly processing = new Map<string, number>();
  private readonly delayed = new Map<string, Delayed>();
  private readonly getters: Array<(item: WorkItem | undefined) => void> = [];
  private shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.scheduler);
    this.hooks = options.hooks ?? {};
  }

  /** Keys waiting for a worker. */
  get length(): number {
    return this.ready.length;
  }

  /** Keys being reconciled right now. */
  get inFlight(): number {
    return this.processing.size;
  }

  /** Keys scheduled by `addAfter` / `addRateLimited` that are not due yet. */
  get delayedCount(): number {
    return this.delayed.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Marks `key` as needing a reconcile. */
  add(key: string, reason: string, traceId: string): AddOutcome {
    if (this.shuttingDown) return 'dropped';
    this.hooks.onAdd?.(key);
    const pending = this.dirty.get(key);
    if (pending) {
      if (pending.coalesced.length < MAX_COALESCED_REASONS) pending.coalesced.push(reason);
      // Dirty and in flight means it is not in `ready`: `done` will queue it.
      return this.processing.has(key) ? 'deferred' : 'coalesced';
    }
    this.dirty.set(key, { reason, traceId, coalesced: [], queuedAt: this.scheduler.now() });
    if (this.processing.has(key)) return 'deferred';
    this.ready.push(key);
    this.hooks.onDepth?.(this.ready.length);
    this.wakeGetter();
    return 'queued';
  }

  /** The trace id of the item `key` would join if added now, if it is waiting. */
  pendingTrace(key: string): string | undefined {
    return this.dirty.get(key)?.traceId;
  }

  /** Adds `key` after `delayMs` (at once when ≤ 0). An earlier deadline for the same key wins. */
  addAfter(key: string, delayMs: number, reason: string, traceId: string): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key, reason, traceId);
      return;
    }
    const due = this.scheduler.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing && existing.due <= due) return;
    existing?.timer.unsubscribe();
    const timer = this.scheduler.schedule(() => {
      this.delayed.delete(key);
      this.add(key, reason, traceId);
    }, delayMs);
    this.delayed.set(key, { due, reason, traceId, timer });
  }

  /** Adds `key` after the rate limiter's delay for it (one more failure). */
  addRateLimited(key: string, reason: string, traceId: string): void {
    if (this.shuttingDown) return;
    this.hooks.onRetry?.(key);
    this.addAfter(key, this.rateLimiter.when(key), reason, traceId);
  }

  /** Clears `key`'s failure history (call after a success). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  /** How many times `key` has been retried since it was last forgotten. */
  retries(key: string): number {
    return this.rateLimiter.retries(key);
  }

  /** The next key for a worker; waits while none is ready; `undefined` once the queue is shut down. */
  get(): Promise<WorkItem | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const item = this.take();
    if (item) return Promise.resolve(item);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Tells the queue that the worker holding `item` is finished; a key added meanwhile is queued again now. */
  done(item: WorkItem): void {
    const started = this.processing.get(item.key);
    if (started === undefined) return;
    this.processing.delete(item.key);
    this.hooks.onDone?.(item.key, this.scheduler.now() - started);
    if (this.shuttingDown || !this.dirty.has(item.key)) return;
    this.ready.push(item.key);
    this.hooks.onDepth?.(this.ready.length);
    this.wakeGetter();
  }

  /**
   * Stops intake: `add` drops from now on, pending timers are cancelled, waiting workers get `undefined`. Keys
   * being processed may still call `done`.
   */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const delayed of this.delayed.values()) delayed.timer.unsubscribe();
    this.delayed.clear();
    this.ready.length = 0;
    this.dirty.clear();
    this.hooks.onDepth?.(0);
    for (const resolve of this.getters.splice(0)) resolve(undefined);
  }

  private take(): WorkItem | undefined {
    const key = this.ready.shift();
    if (key === undefined) return undefined;
    const pending = this.dirty.get(key)!;
    this.dirty.delete(key);
    const now = this.scheduler.now();
    this.processing.set(key, now);
    this.hooks.onDepth?.(this.ready.length);
    this.hooks.onGet?.(key, now - pending.queuedAt);
    return { key, reason: pending.reason, traceId: pending.traceId, coalesced: pending.coalesced, queuedAt: pending.queuedAt };
  }

  private wakeGetter(): void {
    while (this.getters.length > 0 && this.ready.length > 0) {
      const resolve = this.getters.shift()!;
      resolve(this.take());
    }
  }
}
