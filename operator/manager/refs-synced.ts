// Before the workers start: waits until the refs acquired for the cached CustomApps have synced, so that each app's first reconcile reads them.
import {
  defer,
  filter,
  firstValueFrom,
  fromEvent,
  ignoreElements,
  map,
  merge,
  NEVER,
  type Observable,
  race,
  type SchedulerLike,
  tap,
  timer,
} from 'rxjs';
import type { DependencyRef, DependencySource } from '../dependencies/source.js';
import { useKey } from '../dependencies/source.js';

/**
 * How long the workers wait for the acquired refs at most. controller-runtime waits for every cache before its
 * workers start (`CacheSyncTimeout`, 2 minutes, then it fails); ours then starts them anyway: a ref still listing is
 * read `pending` by its app's reconcile, which its sync queues again, as for a ref acquired later.
 */
export const REFS_SYNC_TIMEOUT_MS = 30_000;

/** Why the wait of {@link refsSynced} ended. */
export type RefsSyncOutcome = 'synced' | 'list failing' | 'timeout' | 'stopping' | 'closed';

/** What {@link refsSynced} waits on, and for how long. */
export interface RefsSyncOptions {
  /** The timer of the bound. */
  readonly scheduler: SchedulerLike;
  /** @default {@link REFS_SYNC_TIMEOUT_MS} */
  readonly timeoutMs?: number;
  /** The operator stopping ends the wait. */
  readonly signal: AbortSignal;
  /**
   * A dependency list failing ends the wait (its refs stay unknown until it recovers, which may take an operator's
   * fix; the apps that read them wait with a condition either way). @default nothing ends it early
   */
  readonly listFailures?: Observable<unknown>;
}

/**
 * Resolves once every ref of `refs` has a state in `source` (its first `changes` emission, or a state it already
 * had), or earlier (the outcome says why): a list failing, the bound, the operator stopping, the source closing.
 * A restart whose apps are batched (`acquireCachedRefs`) then reconciles each of them once, as controller-runtime's
 * workers start on synced caches, instead of once `pending` and again when their namespace's list ends.
 */
export function refsSynced(source: DependencySource, refs: readonly DependencyRef[], options: RefsSyncOptions): Promise<RefsSyncOutcome> {
  const waiting = new Set(refs.map(useKey));
  if (waiting.size === 0) return Promise.resolve('synced');
  if (options.signal.aborted) return Promise.resolve('stopping');
  // The changes are followed before the states are read, so that a ref syncing in between is not missed.
  const synced$ = merge(
    source.changes.pipe(tap((state) => waiting.delete(useKey(state.ref)))),
    defer(async () => {
      for (const ref of refs) if (await source.state(ref)) waiting.delete(useKey(ref));
    }),
  ).pipe(
    filter(() => waiting.size === 0),
    map((): RefsSyncOutcome => 'synced'),
  );
  const ended = <T extends RefsSyncOutcome>(outcome: T) => map((): T => outcome);
  return firstValueFrom(
    race(
      synced$,
      (options.listFailures ?? NEVER).pipe(ended('list failing')),
      timer(options.timeoutMs ?? REFS_SYNC_TIMEOUT_MS, options.scheduler).pipe(ended('timeout')),
      fromEvent(options.signal, 'abort').pipe(ended('stopping')),
      // `changes` completing (the source closed) never syncs the rest.
      source.changes.pipe(ignoreElements()),
    ),
    { defaultValue: 'closed' as const },
  );
}
