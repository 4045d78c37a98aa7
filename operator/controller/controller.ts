// Runs a Reconciler: keys from triggers go through the work queue to N workers, each outcome handled per the Result.
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { splitKey } from '../cache/store.js';
import type { Logger } from '../log.js';
import { newTraceId } from '../log.js';
import type { OperatorMetrics, ReconcileResult } from './metrics.js';
import type { RateLimiter } from '../queue/rate-limiter.js';
import { WorkQueue } from '../queue/work-queue.js';
import type { Reconciler, Result } from './reconciler.js';
import { isAlreadyExists, isConflict } from '../kube/errors.js';

/** Options of {@link Controller}. */
export interface ControllerOptions {
  /** The controller's name in metrics (`controller`, `name` labels) and logs. */
  readonly name: string;
  readonly reconciler: Reconciler;
  readonly logger: Logger;
  readonly metrics: OperatorMetrics;
  /** How many keys are reconciled at once (never the same key twice). @default 1 (controller-runtime's) */
  readonly concurrency?: number;
  /** @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** @default client-go's default controller rate limiter */
  readonly rateLimiter?: RateLimiter;
  /** The namespace and name of a key, for the Request. @default `splitKey` (`namespace/name`) */
  readonly splitKey?: (key: string) => { namespace: string; name: string };
  /** Asked before each reconcile whether it may start, and told when it ended. @default every key may */
  readonly gate?: ReconcileGate;
}

/**
 * Who may act on a key at a time (a shard: the keys it owns and nobody else claims). A key refused is dropped from
 * the queue (no retry): whoever refused it queues it again when it may go.
 */
export interface ReconcileGate {
  /** True if a reconcile of `key` may start now; it then counts as in flight until {@link exit}. */
  enter(key: string): boolean;
  exit(key: string): void;
}

/** A trigger's description, logged with the enqueue it causes. */
export interface Trigger {
  /** What fired: `customapp`, `deployment`, `service`, `configmap`, `secret`, `requeue`… */
  readonly source: string;
  /** The object the trigger was about, when it is not the key itself. */
  readonly object?: string;
  /** Why, in a few words: `applied`, `deleted`, `changed`… */
  readonly reason: string;
}

/**
 * The loop around a {@link Reconciler}: `enqueue` is the only way in, workers call `reconcile` with the key (never
 * the event), and the {@link Result} decides whether and when the key comes back. Every step logs one line with the
 * trace id: `enqueue` (key, reason, outcome), `reconcile.start`, `reconcile.end` (durationMs, result).
 */
export class Controller {
  readonly queue: WorkQueue;
  private readonly concurrency: number;
  private readonly scheduler: SchedulerLike;
  private workers: Promise<void>[] = [];

  constructor(private readonly options: ControllerOptions) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.concurrency = options.concurrency ?? 1;
    this.queue = new WorkQueue({
      scheduler: this.scheduler,
      rateLimiter: options.rateLimiter,
      hooks: options.metrics.queueHooks(options.name),
    });
  }

  /** Queues `key` because of `trigger`; answers the trace id the key will be reconciled under. */
  enqueue(key: string, trigger: Trigger, traceId: string = newTraceId()): string {
    const reason = `${trigger.source}${trigger.object ? ` ${trigger.object}` : ''} ${trigger.reason}`;
    const outcome = this.queue.add(key, reason, traceId);
    const joined = outcome === 'coalesced' ? (this.queue.pendingTrace(key) ?? traceId) : traceId;
    this.options.logger.info(
      { key, reason, traceId: joined, outcome, ...(joined !== traceId ? { triggerTraceId: traceId } : {}) },
      'enqueue',
    );
    return joined;
  }

  /** Starts the workers. */
  start(): void {
    if (this.workers.length > 0) return;
    this.options.metrics.maxConcurrentReconciles.set({ controller: this.options.name }, this.concurrency);
    this.options.logger.info({ workers: this.concurrency }, 'controller.start');
    this.workers = Array.from({ length: this.concurrency }, () => this.work());
  }

  /** Stops intake (queued keys are dropped), lets the reconciles in flight finish, and resolves when they have. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await Promise.all(this.workers);
    this.options.logger.info('controller.stopped');
  }

  private async work(): Promise<void> {
    for (;;) {
      const item = await this.queue.get();
      if (!item) return;
      const { name, metrics, gate } = this.options;
      if (gate && !gate.enter(item.key)) {
        this.options.logger.debug({ key: item.key, traceId: item.traceId }, 'reconcile.refused');
        this.queue.forget(item.key);
        this.queue.done(item);
        continue;
      }
      const reason = item.coalesced.length > 0 ? `${item.reason} (+${item.coalesced.length}: ${item.coalesced.join('; ')})` : item.reason;
      const log = this.options.logger.child({ key: item.key, traceId: item.traceId });
      const started = this.scheduler.now();
      metrics.activeWorkers.inc({ controller: name });
      log.info({ reason, retries: this.queue.retries(item.key) }, 'reconcile.start');
      let result: ReconcileResult;
      try {
        const { namespace, name: objectName } = (this.options.splitKey ?? splitKey)(item.key);
        const outcome: Result =
          (await this.options.reconciler.reconcile({ key: item.key, namespace, name: objectName, reason, traceId: item.traceId, log })) ??
          {};
        result = this.settle(item.key, outcome, item.traceId);
        log.info(
          {
            durationMs: round(this.scheduler.now() - started),
            result,
            ...(outcome.requeueAfterMs ? { requeueAfterMs: outcome.requeueAfterMs } : {}),
          },
          'reconcile.end',
        );
      } catch (error) {
        if (isConflict(error) || isAlreadyExists(error)) {
          // Expected races (a stale cache): retry soon, without calling it an error.
          result = this.settle(item.key, { requeue: true }, item.traceId);
          log.info({ durationMs: round(this.scheduler.now() - started), result, conflict: (error as Error).message }, 'reconcile.end');
        } else {
          result = 'error';
          this.queue.addRateLimited(item.key, 'retry after error', item.traceId);
          log.error({ durationMs: round(this.scheduler.now() - started), result, err: error }, 'reconcile.end');
        }
      } finally {
        metrics.activeWorkers.dec({ controller: name });
        this.queue.done(item);
        gate?.exit(item.key);
      }
      metrics.observeReconcile(name, result, this.scheduler.now() - started);
    }
  }

  private settle(key: string, outcome: Result, traceId: string): ReconcileResult {
    if (outcome.requeueAfterMs !== undefined && outcome.requeueAfterMs > 0) {
      this.queue.forget(key);
      this.queue.addAfter(key, outcome.requeueAfterMs, 'requeue after', traceId);
      return 'requeue_after';
    }
    if (outcome.requeueNow) {
      this.queue.forget(key);
      this.queue.add(key, 'requeue now', traceId);
      return 'requeue';
    }
    if (outcome.requeue) {
      this.queue.addRateLimited(key, 'requeue', traceId);
      return 'requeue';
    }
    this.queue.forget(key);
    return 'success';
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
