// Records core/v1 Events on CustomApps, aggregating repeats into one Event with a count (client-go's correlator).
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { WriteClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { EVENTS } from '../kube/resources.js';
import { rfc3339 } from '../kube/time.js';
import type { Logger } from '../log.js';
import type { CoreEvent } from '../kube/objects.js';

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

  constructor(private readonly options: EventRecorderOptions) {
    this.now = options.now ?? (() => new Date());
    this.instance = options.instance ?? hostname();
    this.windowMs = options.aggregationWindowMs ?? 600_000;
    this.cacheSize = options.cacheSize ?? 4096;
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
  }

  /** Keeps `key` as the most recent entry, evicting the least recent past the cache size. */
  private touch(key: string, entry: Seen): void {
    this.seen.delete(key);
    this.seen.set(key, entry);
    while (this.seen.size > this.cacheSize) this.seen.delete(this.seen.keys().next().value!);
  }
}
