// Turns a 410 Gone (the watch's resourceVersion is too old) into an immediate resubscription that relists.
import { defer, of, retry, tap, throwError, type MonoTypeOperatorFunction } from 'rxjs';
import { isGone } from '../kube/errors.js';

/** Options of {@link relistOnGone}. */
export interface RelistOptions<T> {
  /**
   * Called on every Gone error, before anything resubscribes: forget the resourceVersion here, so that the next
   * subscription lists from scratch.
   */
  readonly onGone: (error: unknown) => void;
  /**
   * Which values prove that the source got somewhere since the last relist (for a watcher: a change seen on the
   * watch itself). @default every value
   */
  readonly isProgress?: (value: T) => boolean;
}

/**
 * When the source fails with 410 Gone (HTTP 410, or a Status with reason `Expired`/`Gone`, see `isGone`), calls
 * `onGone` and subscribes to the source again at once, with no delay: the resourceVersion is gone for good, and
 * waiting would only widen the gap a relist has to cover. Every other error passes through (to a backoff layer).
 *
 * Guard against a server that answers 410 to every watch: a second Gone with no progress value since the last
 * relist also calls `onGone` but then passes through, so the layer below backs off instead of hammering the
 * server with list-watch pairs.
 */
export function relistOnGone<T>(options: RelistOptions<T>): MonoTypeOperatorFunction<T> {
  const isProgress = options.isProgress ?? (() => true);
  return (source) =>
    defer(() => {
      let relistedWithoutProgress = false;
      return source.pipe(
        tap((value) => {
          if (isProgress(value)) relistedWithoutProgress = false;
        }),
        retry({
          delay: (error: unknown) => {
            if (!isGone(error)) return throwError(() => error);
            options.onGone(error);
            if (relistedWithoutProgress) return throwError(() => error);
            relistedWithoutProgress = true;
            return of(0);
          },
        }),
      );
    });
}
