// A cold Observable of a resource's list-then-watch events that owns its recovery (kube-runtime's `watcher`).
import { asyncScheduler, defer, finalize, Observable } from 'rxjs';
import { loggableError } from '../kube/errors.js';
import type { KubeObject } from '../kube/objects.js';
import { type Resource, resourceLabel } from '../kube/resources.js';
import { silentLogger } from '../log.js';
import { type Attempt, listed, type WatchPosition, type WatchSteps, watchedUntilClosed } from './attempt.js';
import { backoff, DEFAULT_BACKOFF } from './backoff.js';
import { DEFAULT_WATCH_TIMEOUT_SECONDS, IDLE_GRACE_MS, type WatchClient, type WatcherConfig, type WatcherDeps } from './config.js';
import { isWatchChange, type WatcherEvent } from './events.js';
import { relistOnGone } from './relist.js';

/**
 * Watches a resource and emits {@link WatcherEvent}s until unsubscribed; it never completes and, with the default
 * policy, never errors. It is cold: each subscription runs its own list and watch, and holds its own state.
 *
 * The state machine of one subscription:
 * 1. **List** page by page (`limit` = `pageSize`, then `continue`), emitting `init`, one `initApply` per object,
 *    and `initDone` with the list's resourceVersion. An expired continue token (410) restarts the list from its
 *    first page, still paginated, after a fresh `init` (never one unpaginated request, as client-go's pager makes:
 *    see {@link listed}); a second expiry in the same attempt is a 410 like any other (step 4).
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
 * Logs (pino, each line with `stream`): `subscribed`, `listed` (count, resourceVersion), `event` (type, key,
 * resourceVersion; one per watch event), `bookmark` at debug, `error`, `retry` (delayMs), `relist`, `unsubscribed`.
 * Payloads are never logged.
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
    const log = (deps.logger ?? silentLogger()).child({ stream });
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
        onRetry: (retry) => {
          log.warn({ ...loggableError(retry.error), attempt: retry.attempt, delayMs: retry.delayMs }, 'retry');
          deps.onRetry?.(retry);
        },
      }),
      finalize(() => log.info('unsubscribed')),
    );
  });
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
