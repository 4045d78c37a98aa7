// A cold Observable of a resource's list-then-watch events that owns its recovery (kube-runtime's `watcher`).
import { asyncScheduler, defer, finalize, Observable, type SchedulerLike, type Subscription } from 'rxjs';
import pino, { type Logger } from 'pino';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject, RawWatchEvent } from '../kube/objects.js';
import { ApiError, isGone } from '../kube/errors.js';
import { resourceLabel, type Resource } from '../kube/resources.js';
import { backoff, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { isWatchChange, type WatcherEvent } from './events.js';
import { relistOnGone } from './relist.js';

/** The two calls a watcher makes; a {@link KubeClient} has them, and tests pass a fake. */
export type WatchClient = Pick<KubeClient, 'list' | 'watch'>;

/** What to watch and how. */
export interface WatcherConfig {
  /** Watch one namespace. @default all namespaces */
  readonly namespace?: string;
  /** Server-side label filter, e.g. `app.kubernetes.io/managed-by=customapp-operator`. @default none */
  readonly labelSelector?: string;
  /** Server-side field filter, e.g. `metadata.name=app-config`. @default none */
  readonly fieldSelector?: string;
  /** Objects per list page (`limit`; the rest follows through `continue`). @default 500 */
  readonly pageSize?: number;
  /**
   * The server ends each watch request after this many seconds, and the watcher resumes at once from the last
   * resourceVersion. @default a random whole number in [300, 600), as client-go's reflector picks it (its
   * `minWatchTimeout` of 5 minutes times 1 + a random fraction), so that many watches do not reconnect in step
   */
  readonly timeoutSeconds?: number;
  /**
   * A watch request that delivers nothing (no event, no bookmark) for this long is presumed dead (a half-open
   * connection) and is aborted and resumed. @default `timeoutSeconds` + 15 s
   */
  readonly idleTimeoutMs?: number;
  /** Delays between retries after errors. @default {@link DEFAULT_BACKOFF} (client-go's) */
  readonly backoff?: BackoffPolicy;
  /** The stream's name in logs, e.g. `configmap default/app-config`. @default `<resource> <namespace or *>` */
  readonly name?: string;
}

/** What the watcher needs from the outside world, injectable for tests. */
export interface WatcherDeps {
  /** Timers (backoff, idle timeout) and the clock. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** Structured lifecycle logs, one line per step. @default a silent logger */
  readonly logger?: Logger;
  /** A number in [0, 1) for jitter. @default Math.random */
  readonly random?: () => number;
}

/** The default objects per list page. */
export const DEFAULT_PAGE_SIZE = 500;
/** The lower bound of the default server watch timeout (client-go's `minWatchTimeout`); the upper bound is twice it. */
export const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
/** How much longer than the server timeout a silent watch may stay open before it is presumed dead. */
export const IDLE_GRACE_MS = 15_000;

const SILENT = pino({ level: 'silent' });

/** `namespace/name`, for logs. */
function keyOf(object: KubeObject): string {
  return object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : String(object.metadata.name);
}

/**
 * An error's code, reason and message for a log line. Excerpts of a malformed answer (the client quotes them in
 * parentheses) are cut, because they may hold object payloads, and a Secret's value must never reach a log.
 */
export function loggableError(error: unknown): { code?: number; reason?: string; message: string } {
  const message = error instanceof Error ? error.message.replace(/\s\(.*\)\s*$/s, ' (…)') : String(error);
  return error instanceof ApiError ? { code: error.statusCode, reason: error.reason || undefined, message } : { message };
}

/**
 * Watches a resource and emits {@link WatcherEvent}s until unsubscribed; it never completes and, with the default
 * policy, never errors. It is cold: each subscription runs its own list and watch, and holds its own state.
 *
 * The state machine of one subscription:
 * 1. **List** page by page (`limit` = `pageSize`, then `continue`), emitting `init`, one `initApply` per object,
 *    and `initDone` with the list's resourceVersion. An expired continue token (410) restarts the list in one
 *    unpaginated request (client-go's pager does the same), after a fresh `init`.
 * 2. **Watch** from that resourceVersion with `allowWatchBookmarks=true` and `timeoutSeconds`. ADDED/MODIFIED
 *    emit `apply`, DELETED emits `delete`, and every event, bookmarks included, advances the resourceVersion
 *    (bookmarks emit nothing; they are logged at debug).
 * 3. When the server ends the watch normally, or the watch stays silent past `idleTimeoutMs`, watch again at
 *    once from the last resourceVersion: no backoff, no relist. (A watch closed within a second without a single
 *    event is an error, as in client-go, so a server that ends every watch at once meets the backoff.)
 * 4. **410 Gone** (the HTTP status, an in-stream ERROR event, or reason `Expired`) forgets the resourceVersion
 *    and relists at once ({@link relistOnGone}).
 * 5. **Any other error** (500, 429, a broken connection, a malformed line) retries after a backoff
 *    ({@link backoff}; a 429's Retry-After is the minimum delay) and **resumes from the last resourceVersion**:
 *    the state survives the retry, so a resumed watch neither repeats nor skips events.
 *
 * Unsubscribing aborts the HTTP request in flight and cancels every timer: nothing survives it.
 *
 * Logs (pino, each line with `stream`): `subscribed`, `listed` (count, resourceVersion), `event` (type, key) and
 * `bookmark` at debug, `error`, `retry` (delayMs), `relist`, `unsubscribed`. Payloads are never logged.
 */
export function watcher<T extends KubeObject>(
  client: WatchClient,
  resource: Resource,
  config: WatcherConfig = {},
  deps: WatcherDeps = {},
): Observable<WatcherEvent<T>> {
  const scheduler = deps.scheduler ?? asyncScheduler;
  const random = deps.random ?? Math.random;
  return defer(() => {
    const stream = config.name ?? `${resource.kind.toLowerCase()} ${config.namespace ?? '*'}`;
    const log = (deps.logger ?? SILENT).child({ stream });
    const timeoutSeconds = config.timeoutSeconds ?? Math.floor(DEFAULT_WATCH_TIMEOUT_SECONDS * (1 + random()));
    const position: WatchPosition = { resourceVersion: undefined };
    const steps: WatchSteps = {
      client,
      resource,
      config,
      scheduler,
      log,
      position,
      timeoutSeconds,
      idleTimeoutMs: config.idleTimeoutMs ?? timeoutSeconds * 1000 + IDLE_GRACE_MS,
    };
    log.info(
      {
        resource: resourceLabel(resource),
        namespace: config.namespace,
        labelSelector: config.labelSelector,
        fieldSelector: config.fieldSelector,
      },
      'subscribed',
    );
    return listThenWatch<T>(steps).pipe(
      relistOnGone<WatcherEvent<T>>({
        isProgress: isWatchChange,
        onGone: (error) => {
          position.resourceVersion = undefined;
          log.info(loggableError(error), 'relist');
        },
      }),
      backoff<WatcherEvent<T>>(config.backoff ?? DEFAULT_BACKOFF, {
        scheduler,
        random,
        onRetry: ({ attempt, delayMs, error }) => log.warn({ ...loggableError(error), attempt, delayMs }, 'retry'),
      }),
      finalize(() => log.info('unsubscribed')),
    );
  });
}

/** Where a subscription is: the resourceVersion to resume from, or undefined to list first. */
interface WatchPosition {
  resourceVersion: string | undefined;
}

/** Everything one attempt needs, fixed for the subscription. */
interface WatchSteps {
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
interface Attempt {
  stopped: boolean;
  /** Aborts the request in flight. */
  current?: AbortController;
  idleTimer?: Subscription;
}

/**
 * One attempt: list when there is no position, then watch and re-watch until an error ends it (the error goes
 * to the relist and backoff layers, which subscribe again). The teardown aborts the request in flight and the
 * idle timer.
 */
function listThenWatch<T extends KubeObject>(steps: WatchSteps): Observable<WatcherEvent<T>> {
  return new Observable<WatcherEvent<T>>((subscriber) => {
    const attempt: Attempt = { stopped: false };
    const emit = (event: WatcherEvent<T>): void => subscriber.next(event);
    const run = async (): Promise<void> => {
      if (steps.position.resourceVersion === undefined) {
        attempt.current = new AbortController();
        steps.position.resourceVersion = await listed(steps, attempt.current.signal, emit);
      }
      while (!attempt.stopped) await watchedUntilClosed(steps, attempt, emit);
    };
    run().then(
      () => subscriber.complete(),
      (error: unknown) => {
        if (attempt.stopped) return;
        steps.log.warn(loggableError(error), 'error');
        subscriber.error(error);
      },
    );
    return () => {
      attempt.stopped = true;
      attempt.current?.abort();
      attempt.idleTimer?.unsubscribe();
    };
  });
}

/** client-go's reflector: a watch that ends within a second having delivered nothing is an error, not a close. */
export const MIN_HEALTHY_WATCH_MS = 1000;

/**
 * One watch request from the current position, until the server ends it, the idle timer aborts it, or it
 * fails (thrown). A normal end after less than {@link MIN_HEALTHY_WATCH_MS} with no event at all is thrown as an
 * error too, so a server that closes every watch at once meets the backoff instead of a tight loop.
 */
async function watchedUntilClosed<T extends KubeObject>(
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
 * Lists every page, emitting `init`, `initApply`… and `initDone`, and answers the list's resourceVersion. An
 * expired continue token restarts the list once without pagination.
 */
async function listed<T extends KubeObject>(
  steps: WatchSteps,
  signal: AbortSignal,
  emit: (event: WatcherEvent<T>) => void,
): Promise<string> {
  const { config } = steps;
  let limit: number | undefined = config.pageSize ?? DEFAULT_PAGE_SIZE;
  for (;;) {
    emit({ type: 'init' });
    let count = 0;
    let token: string | undefined;
    let resourceVersion: string | undefined;
    try {
      do {
        const page = await steps.client.list<T>(
          steps.resource,
          {
            namespace: config.namespace,
            labelSelector: config.labelSelector,
            fieldSelector: config.fieldSelector,
            limit,
            continue: token,
          },
          signal,
        );
        resourceVersion = page.metadata.resourceVersion;
        token = page.metadata.continue || undefined;
        for (const object of page.items) {
          if (signal.aborted) return '';
          emit({ type: 'initApply', object });
        }
        count += page.items.length;
      } while (token && !signal.aborted);
    } catch (error) {
      if (!(token && isGone(error) && limit !== undefined)) throw error;
      steps.log.info({ reason: 'continue token expired', count, paginated: false }, 'relist');
      limit = undefined;
      continue;
    }
    if (!resourceVersion) throw new ApiError(`list ${resourceLabel(steps.resource)}: the answer has no resourceVersion`, 0);
    steps.log.info({ count, resourceVersion }, 'listed');
    emit({ type: 'initDone', resourceVersion });
    return resourceVersion;
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
      if (log.isLevelEnabled('debug'))
        log.debug({ type: raw.type, key: keyOf(object), resourceVersion: position.resourceVersion }, 'event');
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
