// Which dependency lists keep failing: an error line when one starts, a gauge and /readyz while it lasts, a line when it lists.
import { defer, finalize, type Observable, Subject, tap } from 'rxjs';
import { loggableError } from '../kube/errors.js';
import type { Logger } from '../log.js';
import type { Retry } from '../watch/backoff.js';
import type { WatcherEvent } from '../watch/events.js';
import type { KubeObject } from '../kube/objects.js';
import type { DependencyKind } from './source.js';

/** What one stream lists: one object (`name`) or every object of the kind in the namespace. */
export interface ListScope {
  readonly kind: DependencyKind;
  readonly namespace: string;
  readonly name?: string;
}

/** A stream whose list has failed and not completed since. */
export interface FailingList extends ListScope {
  /** The last error's HTTP status (0: no answer) and reason. */
  readonly code?: number;
  readonly reason?: string;
  /** The last error, as logged (no payload). */
  readonly message: string;
  /** Failed attempts in a row. */
  readonly failures: number;
  /** When the first of them failed, on the registry's clock. */
  readonly since: number;
}

/** One subscription of a stream: listing until its `initDone`, and its failure while it fails. */
interface ListState {
  readonly scope: ListScope;
  listing: boolean;
  failure: FailingList | undefined;
}

/**
 * Follows every dependency stream's list. The watcher retries a failed list forever with its backoff, which alone
 * would only leave a `retry` warning per attempt while the refs of that namespace stay unknown and their apps wait:
 * here the first failure of a list is an error line (`list.failing`, with the scope and the error), the list counts
 * in `customapp_dependency_lists_failing` and fails /readyz until it completes (`list.recovered`). A failed watch
 * that resumes without listing again is the watcher's own business, and no list failure.
 */
export class ListHealth {
  private readonly lists = new Set<ListState>();
  private readonly started = new Subject<FailingList>();

  /** Each list's first failure in a row (what `list.failing` logs), as it happens. */
  readonly failures$: Observable<FailingList> = this.started.asObservable();

  constructor(
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  /**
   * The stream `open` makes, followed: `open` gets the retry callback to give its watcher
   * (`WatcherDeps.onRetry`). Each subscription is followed on its own and forgotten when it ends.
   */
  follow<T extends KubeObject>(
    scope: ListScope,
    open: (onRetry: (retry: Retry) => void) => Observable<WatcherEvent<T>>,
  ): Observable<WatcherEvent<T>> {
    return defer(() => {
      const state: ListState = { scope, listing: true, failure: undefined };
      this.lists.add(state);
      return open((retry) => this.retried(state, retry)).pipe(
        tap((event) => this.saw(state, event)),
        finalize(() => this.lists.delete(state)),
      );
    });
  }

  /** The lists failing now. */
  failing(): FailingList[] {
    return [...this.lists].flatMap((state) => (state.failure ? [state.failure] : []));
  }

  private retried(state: ListState, retry: Retry): void {
    if (!state.listing) return;
    const error = loggableError(retry.error);
    const failures = (state.failure?.failures ?? 0) + 1;
    state.failure = { ...state.scope, ...error, failures, since: state.failure?.since ?? this.now() };
    if (failures !== 1) return;
    this.log.error({ ...state.scope, ...error, retryInMs: retry.delayMs }, 'list.failing');
    this.started.next(state.failure);
  }

  private saw(state: ListState, event: WatcherEvent<KubeObject>): void {
    if (event.type === 'init') state.listing = true;
    if (event.type !== 'initDone') return;
    state.listing = false;
    if (state.failure === undefined) return;
    this.log.info({ ...state.scope, failures: state.failure.failures, durationMs: this.now() - state.failure.since }, 'list.recovered');
    state.failure = undefined;
  }
}

/** /readyz's text for failing lists, or undefined when none fails. */
export function describeFailingLists(lists: readonly FailingList[]): string | undefined {
  if (lists.length === 0) return undefined;
  const first = lists[0]!;
  const what = `${first.kind} list in namespace ${first.namespace}${first.name ? ` (${first.name})` : ''}`;
  const more = lists.length > 1 ? ` and ${lists.length - 1} more` : '';
  return `${what}${more} failing (${first.failures} attempts): ${first.message}`;
}
