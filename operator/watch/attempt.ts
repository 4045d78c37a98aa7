// One attempt of a watcher: list page by page, then watch and re-watch from the last resourceVersion until an error.
import type { SchedulerLike, Subscription } from 'rxjs';
import { ApiError } from '../kube/errors.js';
import type { KubeObject, ObjectList, RawWatchEvent } from '../kube/objects.js';
import { type Resource, resourceLabel } from '../kube/resources.js';
import type { ListOptions } from '../kube/options.js';
import type { Logger } from '../log.js';
import { DEFAULT_MAX_PAGE_BYTES, DEFAULT_PAGE_SIZE, type WatchClient, type WatcherConfig } from './config.js';
import type { WatcherEvent } from './events.js';
import { isAnswerTooLarge, isGone } from '../kube/errors.js';

/** `namespace/name`, for logs. */
function keyOf(object: KubeObject): string {
  return object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : String(object.metadata.name);
}

/** Where a subscription is: the resourceVersion to resume from, or undefined to list first. */
export interface WatchPosition {
  resourceVersion: string | undefined;
}

/** Everything one attempt needs, fixed for the subscription. */
export interface WatchSteps {
  readonly client: WatchClient;
  readonly resource: Resource;
  readonly config: WatcherConfig;
  readonly scheduler: SchedulerLike;
  readonly log: Logger;
  readonly position: WatchPosition;
  readonly timeoutSeconds: number;
  readonly idleTimeoutMs: number;
}

/** The mutable part of one attempt, shared with its teardown. */
export interface Attempt {
  stopped: boolean;
  /** Aborts the request in flight. */
  current?: AbortController;
  idleTimer?: Subscription;
}

/** client-go's reflector: a watch that ends within a second having delivered nothing is an error, not a close. */
export const MIN_HEALTHY_WATCH_MS = 1000;

/**
 * One watch request from the current position, until the server ends it, the idle timer aborts it, or it
 * fails (thrown). A normal end after less than {@link MIN_HEALTHY_WATCH_MS} with no event at all is thrown as an
 * error too, so a server that closes every watch at once meets the backoff instead of a tight loop.
 */
export async function watchedUntilClosed<T extends KubeObject>(
  steps: WatchSteps,
  attempt: Attempt,
  emit: (event: WatcherEvent<T>) => void,
): Promise<void> {
  const { scheduler } = steps;
  const controller = new AbortController();
  attempt.current = controller;
  const startedAt = scheduler.now();
  let lastActivity = startedAt;
  let received = 0;
  let idle = false;
  const checkIdle = (): void => {
    const silentMs = scheduler.now() - lastActivity;
    if (silentMs < steps.idleTimeoutMs) {
      attempt.idleTimer = scheduler.schedule(checkIdle, steps.idleTimeoutMs - silentMs);
      return;
    }
    idle = true;
    controller.abort();
  };
  attempt.idleTimer = scheduler.schedule(checkIdle, steps.idleTimeoutMs);
  try {
    const events = steps.client.watch<T>(
      steps.resource,
      {
        namespace: steps.config.namespace,
        labelSelector: steps.config.labelSelector,
        fieldSelector: steps.config.fieldSelector,
        resourceVersion: steps.position.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: steps.timeoutSeconds,
      },
      controller.signal,
    );
    // Iterated by hand, not with for-await: a suspended async function keeps every local it ever set, so the
    // locals that held the last event are cleared before each wait. Otherwise the last event of a stream, a
    // Secret's data included, would stay in memory until the next one arrives.
    const iterator = events[Symbol.asyncIterator]();
    try {
      let next: IteratorResult<RawWatchEvent<T>> | undefined;
      let event: WatcherEvent<T> | undefined;
      while (!(next = await iterator.next()).done) {
        lastActivity = scheduler.now();
        received += 1;
        event = watched(steps, next.value);
        next = undefined;
        if (event && !attempt.stopped) emit(event);
        event = undefined;
      }
    } finally {
      await iterator.return?.();
    }
  } finally {
    attempt.idleTimer?.unsubscribe();
  }
  if (attempt.stopped) return;
  const lastedMs = scheduler.now() - startedAt;
  if (!idle && received === 0 && lastedMs < MIN_HEALTHY_WATCH_MS) {
    throw new ApiError(`watch ${resourceLabel(steps.resource)}: closed after ${lastedMs} ms without an event`, 0);
  }
  steps.log.debug({ resourceVersion: steps.position.resourceVersion, received, lastedMs }, idle ? 'idle' : 'watch closed');
}

/**
 * Lists every page, emitting `init`, `initApply`… and `initDone`, and answers the list's resourceVersion.
 *
 * An expired continue token (410: the list's snapshot was compacted away between pages) restarts the list from
 * its first page, still `pageSize` at a time, after a fresh `init`. client-go's pager falls back to one
 * unpaginated list instead; that request's answer is the whole collection at once (a namespace of large Secrets:
 * gigabytes in one string), so it is never made here. A list whose token expires again in the same attempt
 * fails with that 410, and the relist guard and the backoff above take it from there, so a collection that
 * cannot be listed between two compactions is retried ever more slowly, never in a loop.
 *
 * Each page is let go before the next is asked for: at most one page's objects are held at once. An answer longer
 * than `maxPageBytes` is cut off by the client and asked again from the same continue token at half the page
 * size, down to one object, which is read whatever its size (the API server bounds it); the smaller size holds
 * for the rest of the attempt. Below `maxPageSize`, a full page doubles the next page's size when, at the bytes per
 * object just seen, the next page would take at most `growPageBytes` (a quarter of `maxPageBytes` by default;
 * `growProtobufPageBytes` for a page that came as protobuf); one
 * that meets larger objects is cut off at the budget as any page is (after which the list grows no more).
 */
export async function listed<T extends KubeObject>(
  steps: WatchSteps,
  signal: AbortSignal,
  emit: (event: WatcherEvent<T>) => void,
): Promise<string> {
  const { config } = steps;
  const maxPageBytes = config.maxPageBytes ?? DEFAULT_MAX_PAGE_BYTES;
  let limit = config.pageSize ?? DEFAULT_PAGE_SIZE;
  let maxBytes = limit > 1 ? maxPageBytes : undefined;
  let growTo = Math.max(config.maxPageSize ?? limit, limit);
  const growPageBytes = config.growPageBytes ?? maxPageBytes / 4;
  const growProtobufPageBytes = config.growProtobufPageBytes ?? growPageBytes;
  /** The last page's length, when the client told it (a page of unknown length grows nothing), and its bound. */
  let pageBytes: number | undefined;
  let pageBound = growPageBytes;
  const onBytes = (bytes: number, protobuf: boolean): void => {
    pageBytes = bytes;
    pageBound = protobuf ? growProtobufPageBytes : growPageBytes;
  };
  for (let restarts = 0; ; restarts += 1) {
    emit({ type: 'init' });
    let count = 0;
    let token: string | undefined;
    let resourceVersion: string | undefined;
    try {
      for (;;) {
        pageBytes = undefined;
        let page: ObjectList<T> | undefined = await pageOrNone<T>(steps, signal, { limit, continue: token, maxBytes, onBytes });
        if (page === undefined) {
          growTo = 0;
          limit = Math.ceil(limit / 2);
          maxBytes = limit > 1 ? maxBytes : undefined;
          steps.log.warn({ maxPageBytes, pageSize: limit, count }, 'page too large');
          continue;
        }
        resourceVersion = page.metadata.resourceVersion;
        token = page.metadata.continue || undefined;
        let items: T[] | undefined = page.items;
        page = undefined;
        for (let index = 0; index < items.length; index += 1) {
          if (signal.aborted) return '';
          emit({ type: 'initApply', object: items[index]! });
        }
        count += items.length;
        if (limit < growTo && items.length >= limit && pageBytes !== undefined && pageBytes * 2 <= pageBound) {
          limit = Math.min(limit * 2, growTo);
          maxBytes = maxPageBytes;
        }
        // A suspended async function keeps its locals: the page's objects must not wait here for the next page.
        items = undefined;
        if (!token || signal.aborted) break;
      }
    } catch (error) {
      if (!(token && isGone(error) && restarts === 0)) throw error;
      steps.log.info({ reason: 'continue token expired', count, pageSize: limit }, 'relist');
      continue;
    }
    if (!resourceVersion) throw new ApiError(`list ${resourceLabel(steps.resource)}: the answer has no resourceVersion`, 0);
    steps.log.info({ count, resourceVersion }, 'listed');
    emit({ type: 'initDone', resourceVersion });
    return resourceVersion;
  }
}

/** One page of the list, or undefined when its answer was longer than `maxBytes` (ask again for fewer objects). */
async function pageOrNone<T extends KubeObject>(
  steps: WatchSteps,
  signal: AbortSignal,
  page: Pick<ListOptions, 'limit' | 'continue' | 'maxBytes' | 'onBytes'>,
): Promise<ObjectList<T> | undefined> {
  const { config } = steps;
  try {
    return await steps.client.list<T>(
      steps.resource,
      { namespace: config.namespace, labelSelector: config.labelSelector, fieldSelector: config.fieldSelector, ...page },
      signal,
    );
  } catch (error) {
    if (page.maxBytes !== undefined && isAnswerTooLarge(error)) return undefined;
    throw error;
  }
}

/** Advances the position for one raw event and answers the event to emit, if any; throws for ERROR events. */
function watched<T extends KubeObject>(steps: WatchSteps, raw: RawWatchEvent<T>): WatcherEvent<T> | undefined {
  const { log, position } = steps;
  switch (raw.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED': {
      const object = raw.object as T;
      position.resourceVersion = object.metadata.resourceVersion ?? position.resourceVersion;
      // At info by default: the first line of the trace a change leaves (event → trigger → enqueue → reconcile → write).
      const level = steps.config.eventLogLevel ?? 'info';
      if (log.isLevelEnabled(level)) log[level]({ type: raw.type, key: keyOf(object), resourceVersion: position.resourceVersion }, 'event');
      return raw.type === 'DELETED' ? { type: 'delete', object } : { type: 'apply', object };
    }
    case 'BOOKMARK':
      position.resourceVersion = raw.object.metadata.resourceVersion ?? position.resourceVersion;
      log.debug({ resourceVersion: position.resourceVersion }, 'bookmark');
      return undefined;
    case 'ERROR': {
      const status = raw.object;
      const code = status.code ?? 500;
      throw new ApiError(
        `watch ${resourceLabel(steps.resource)}: ${code} ${status.reason ?? ''}: ${status.message ?? 'error event'}`,
        code,
        status,
      );
    }
    default:
      throw new ApiError(`watch ${resourceLabel(steps.resource)}: unknown event type "${(raw as { type: string }).type}"`, 0);
  }
}
