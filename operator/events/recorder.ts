// Records core/v1 Events on CustomApps, aggregating repeats into one Event with a count (client-go's correlator).
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { WriteClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { EVENTS } from '../kube/resources.js';
import { rfc3339 } from '../kube/time.js';
import type { Logger } from '../log.js';
import type { CoreEvent } from '../kube/objects.js';
import { Gauge, type Registry } from 'prom-client';
import { asyncScheduler, type SchedulerLike } from 'rxjs';

/** The object an Event is about. */
export interface InvolvedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

export type EventType = 'Normal' | 'Warning';

/** Options of {@link EventRecorder}. */
export interface EventRecorderOptions {
  readonly client: WriteClient;
  /** `source.component` and `reportingComponent`. */
  readonly component: string;
  /** `reportingInstance` (the pod or process identity). @default the host name */
  readonly instance?: string;
  readonly logger: Logger;
  /** Wall clock. @default () => new Date() */
  readonly now?: () => Date;
  /** How long an identical Event is counted into the previous one instead of a new one. @default 600_000 (client-go: 10 min) */
  readonly aggregationWindowMs?: number;
  /** How many distinct Events are remembered for aggregation. @default 4096 (client-go's maxLruCacheEntries) */
  readonly cacheSize?: number;
  /** The field manager of the writes. */
  readonly fieldManager?: string;
  /** Events {@link EventRecorder.post}ed and not written yet past which new ones are dropped. @default 1000 (client-go's maxQueuedEvents) */
  readonly queueSize?: number;
  /**
   * The spam filter of client-go's correlator: per involved object, a token bucket of `burst` Events refilled by one
   * every `refillMs`; an Event without a token is dropped. @default { burst: 25, refillMs: 300_000 }
   */
  readonly spamFilter?: { readonly burst: number; readonly refillMs: number };
  /**
   * Where to register `customapp_events_pending` (posted and not written yet, the one in flight included) and
   * `customapp_events_dropped` (since the start). @default none
   */
  readonly metrics?: Registry;
  /**
   * Events are the lowest-priority writes: while `busy()` says that work waits (the controller's queue holds keys no
   * worker has taken), a posted Event waits too, up to `maxDelayMs` after it was posted, checked every `pollMs`. A
   * ConfigMap shared by many CustomApps then rolls their Deployments without each RolloutTriggered Event competing
   * for the API server. @default none (written at once)
   */
  readonly yieldTo?: { readonly busy: () => boolean; readonly maxDelayMs: number; readonly pollMs?: number };
  /**
   * The timers of the yield's polls and of flush's deadline, and the clock a posted Event's delay is measured on (its
   * `now()`). @default asyncScheduler's timers on `performance.now` (monotonic: a wall-clock step must not hold or
   * release Events)
   */
  readonly scheduler?: SchedulerLike;
}

/** One Event waiting to be written. */
interface Posted {
  readonly object: InvolvedObject;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  readonly log: Logger;
  /** When posted, on the recorder's monotonic clock. */
  readonly postedAt: number;
}

interface Seen {
  readonly name: string;
  readonly namespace: string;
  count: number;
  readonly firstTimestamp: string;
  lastAt: number;
}

/** The longest object-name prefix in an Event's name, leaving room for the `.` and 16 hex digits. */
const EVENT_NAME_PREFIX_MAX = 236;

/**
 * Writes Events with only the `create` and `patch` verbs that RBAC grants: the first occurrence of an Event (same
 * object, type, reason and message) is created; repeats within the aggregation window patch its `count` and
 * `lastTimestamp`; a repeat whose Event has expired (404) is created anew. Failures are logged, never thrown: an
 * Event must not fail a reconcile.
 */
export class EventRecorder {
  private readonly seen = new Map<string, Seen>();
  private readonly now: () => Date;
  private readonly instance: string;
  private readonly windowMs: number;
  private readonly cacheSize: number;
  private readonly queue: Posted[] = [];
  private draining: Promise<void> | undefined;
  /** Set by {@link EventRecorder.flush}: a stopping operator writes what it can, without yielding. */
  private flushing = false;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  /** Events dropped so far: the queue was full, or the object's spam-filter bucket was empty. */
  dropped = 0;

  constructor(private readonly options: EventRecorderOptions) {
    this.now = options.now ?? (() => new Date());
    this.instance = options.instance ?? hostname();
    this.windowMs = options.aggregationWindowMs ?? 600_000;
    this.cacheSize = options.cacheSize ?? 4096;
    if (options.metrics) {
      const recorder = this;
      new Gauge({
        name: 'customapp_events_pending',
        help: 'Events posted by reconciles and not written yet (the one being written included)',
        registers: [options.metrics],
        collect() {
          this.set(recorder.pending);
        },
      });
      new Gauge({
        name: 'customapp_events_dropped',
        help: 'Events dropped since the start: the queue was full, or the object had used up its spam-filter tokens',
        registers: [options.metrics],
        collect() {
          this.set(recorder.dropped);
        },
      });
    }
  }

  /** Events posted and not written yet, the one being written included. */
  get pending(): number {
    return this.queue.length + (this.draining === undefined ? 0 : 1);
  }

  /**
   * Queues one Event and returns at once: the reconcile that reports it does not wait for the write (client-go's
   * broadcaster is asynchronous too). Events are written one at a time, in the order posted; the first write starts
   * before `post` returns when nothing is queued. An Event is dropped (logged) when the queue holds `queueSize`, or
   * when its object has used up its spam-filter tokens.
   */
  post(object: InvolvedObject, type: EventType, reason: string, message: string, log: Logger = this.options.logger): void {
    if (!this.takeToken(object)) {
      this.dropped += 1;
      log.debug({ reason, object: `${object.namespace}/${object.name}` }, 'event.dropped: spam filter');
      return;
    }
    if (this.queue.length >= (this.options.queueSize ?? 1000)) {
      this.dropped += 1;
      log.warn({ reason, object: `${object.namespace}/${object.name}`, queued: this.queue.length }, 'event.dropped: queue full');
      return;
    }
    this.queue.push({ object, type, reason, message, log, postedAt: this.monotonicNow() });
    this.draining ??= this.drain();
  }

  /**
   * Waits up to `timeoutMs` for the posted Events to be written, then drops what is still queued (logged): a stopping
   * operator says what it can without hanging on an unreachable API server. Answers how many were dropped.
   */
  async flush(timeoutMs: number): Promise<number> {
    this.flushing = true;
    let timer: { unsubscribe(): void } | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = (this.options.scheduler ?? asyncScheduler).schedule(() => resolve(true), timeoutMs);
    });
    const late = await Promise.race([this.idle().then(() => false), timedOut]);
    timer?.unsubscribe();
    if (!late) return 0;
    const left = this.queue.splice(0).length;
    this.dropped += left;
    if (left > 0) this.options.logger.warn({ dropped: left }, 'event.dropped: not written before the operator stopped');
    return left;
  }

  /** Resolves once every posted Event is written (or failed and logged). */
  async idle(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
  }

  private async drain(): Promise<void> {
    try {
      for (let next = this.queue[0]; next; next = this.queue[0]) {
        // No await unless it yields: the first write still starts within post.
        while (this.mustYield(next.postedAt)) await this.pause(this.options.yieldTo?.pollMs ?? 25);
        this.queue.shift();
        await this.record(next.object, next.type, next.reason, next.message, next.log);
      }
    } finally {
      this.draining = undefined;
    }
  }

  /** True while {@link EventRecorderOptions.yieldTo} says that work waits, until `maxDelayMs` after `postedAt`, and not while flushing. */
  private mustYield(postedAt: number): boolean {
    const yieldTo = this.options.yieldTo;
    return yieldTo !== undefined && !this.flushing && yieldTo.busy() && this.monotonicNow() - postedAt < yieldTo.maxDelayMs;
  }

  private monotonicNow(): number {
    return this.options.scheduler ? this.options.scheduler.now() : performance.now();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => (this.options.scheduler ?? asyncScheduler).schedule(() => resolve(), ms));
  }

  /** client-go's EventSourceObjectSpamFilter: a token bucket per involved object. */
  private takeToken(object: InvolvedObject): boolean {
    const { burst, refillMs } = this.options.spamFilter ?? { burst: 25, refillMs: 300_000 };
    const key = object.uid ?? `${object.namespace}/${object.name}`;
    const at = this.now().getTime();
    const bucket = this.buckets.get(key) ?? { tokens: burst, at };
    const refills = Math.floor((at - bucket.at) / refillMs);
    if (refills > 0) {
      bucket.tokens = Math.min(burst, bucket.tokens + refills);
      bucket.at += refills * refillMs;
    }
    // A full bucket starts its refill clock with the token taken now.
    if (bucket.tokens >= burst) bucket.at = at;
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    while (this.buckets.size > this.cacheSize) this.buckets.delete(this.buckets.keys().next().value!);
    if (bucket.tokens <= 0) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Records one Event about `object`; resolves when it is written (or has failed and been logged). */
  async record(object: InvolvedObject, type: EventType, reason: string, message: string, log: Logger = this.options.logger): Promise<void> {
    const key = [object.uid ?? `${object.namespace}/${object.name}`, type, reason, message].join('\u0000');
    const at = this.now();
    const timestamp = rfc3339(at);
    const previous = this.seen.get(key);
    try {
      if (previous && at.getTime() - previous.lastAt < this.windowMs) {
        try {
          await this.options.client.patch(
            EVENTS,
            previous.namespace,
            previous.name,
            'merge',
            { count: previous.count + 1, lastTimestamp: timestamp },
            { fieldManager: this.options.fieldManager },
          );
          previous.count += 1;
          previous.lastAt = at.getTime();
          this.touch(key, previous);
          log.debug({ reason, count: previous.count, object: `${object.namespace}/${object.name}` }, 'event.aggregated');
          return;
        } catch (error) {
          if (!isNotFound(error)) throw error;
          this.seen.delete(key);
        }
      }
      const name = `${object.name.slice(0, EVENT_NAME_PREFIX_MAX)}.${randomBytes(8).toString('hex')}`;
      const event: CoreEvent = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace: object.namespace },
        involvedObject: object,
        reason,
        message,
        type,
        count: 1,
        firstTimestamp: timestamp,
        lastTimestamp: timestamp,
        source: { component: this.options.component },
        reportingComponent: this.options.component,
        reportingInstance: this.instance.slice(0, 128),
      };
      await this.options.client.create(EVENTS, object.namespace, event, { fieldManager: this.options.fieldManager });
      this.touch(key, { name, namespace: object.namespace, count: 1, firstTimestamp: timestamp, lastAt: at.getTime() });
      log.info({ type, reason, object: `${object.namespace}/${object.name}`, message }, 'event.recorded');
    } catch (error) {
      log.warn({ reason, object: `${object.namespace}/${object.name}`, err: error }, 'event.failed');
    }
  }

  /** Forgets the aggregation state of every Event about an object (when it is deleted). */
  forget(uid: string): void {
    for (const key of this.seen.keys()) if (key.startsWith(`${uid}\u0000`)) this.seen.delete(key);
    this.buckets.delete(uid);
  }

  /** Keeps `key` as the most recent entry, evicting the least recent past the cache size. */
  private touch(key: string, entry: Seen): void {
    this.seen.delete(key);
    this.seen.set(key, entry);
    while (this.seen.size > this.cacheSize) this.seen.delete(this.seen.keys().next().value!);
  }
}
