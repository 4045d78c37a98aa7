// Keeps a resource's list and watch requests waiting (the gate closed) while the API server cannot serve them to us (not served, forbidden),
// says why once, and lets them through again as soon as a re-check says they can succeed: no restart needed.
import {
  asyncScheduler,
  defer,
  exhaustMap,
  Observable,
  repeat,
  Subject,
  type SchedulerLike,
  type Subscription,
  takeWhile,
  timer,
} from 'rxjs';
import pino, { type Logger } from 'pino';
import type { KubeClient } from './client.js';
import type { KubeObject, ObjectList, RawWatchEvent } from './objects.js';
import type { ListOptions, WatchOptions } from './options.js';
import { forbiddenProblem, mayI, servedProblem, type AccessProblem } from './discovery.js';
import { ApiError, isForbidden, isNotFound } from './errors.js';
import { resourceLabel, type Resource } from './resources.js';

/** What a gate calls: the requests it lets through, and the checks it makes. A {@link KubeClient} has them. */
export type GateClient = Pick<KubeClient, 'list' | 'watch' | 'discovery' | 'create'>;

/** The calls a gate passes on (the shape of a watcher's client). */
export type GatedClient = Pick<KubeClient, 'list' | 'watch'>;

/** Options of {@link AccessGate}. */
export interface AccessGateOptions {
  readonly client: GateClient;
  /** The resource whose list and watch requests go through the gate. */
  readonly resource: Resource;
  /** The namespace those requests are scoped to. @default all namespaces */
  readonly namespace?: string;
  /** What a user can do about each kind of problem, logged as `fix` and appended to {@link AccessGate.reason}. @default none */
  readonly remedies?: Partial<Readonly<Record<AccessProblem['reason'], string>>>;
  /** One `api.unavailable` line (error) per new problem, one `api.available` (info) when it is over. @default silent */
  readonly logger?: Logger;
  /** Timers of the re-checks. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** How long between two checks while a problem lasts. @default {@link DEFAULT_RECHECK_MS} */
  readonly recheckMs?: number;
}

/** The default interval of re-checks while a problem lasts: one small discovery GET (or access review) per period. */
export const DEFAULT_RECHECK_MS = 2_000;

/**
 * What a check concluded: a problem; `open` (served, and allowed as far as the checks tell); or `unknown` (a check
 * could not answer: the gate opens on trial, and the request's own answer decides).
 */
type Verdict = AccessProblem | 'open' | 'unknown';

const SILENT = pino({ level: 'silent' });

/**
 * A gate in front of one resource's list and watch requests, for an informer's watcher:
 * - **At start** it asks discovery whether the resource is served at its version ({@link servedProblem}); requests
 *   wait for that answer.
 * - **A 404** from a list or watch (a CRD deleted while running) closes the gate and asks discovery again at once.
 * - **A 403** closes it with the permission the request lacked (the request's own answer is the detector: no review
 *   is sent while all is well, and the 403 is counted like any other answer).
 * - **While closed**, requests wait (they are not sent, so the watcher logs no retry and its backoff does not grow),
 *   `reason` says why (for `/readyz`), and every `recheckMs` a check runs: discovery, then, after a 403, a
 *   SelfSubjectAccessReview of `list` and `watch` ({@link mayI}). When the check passes, or cannot tell (discovery
 *   unreachable, the review itself refused), the gate opens and the waiting requests go: the request is the final judge.
 *
 * `start()` begins the first check; `stop()` cancels every check and timer (waiting requests keep waiting until their
 * own abort signals fire, as the watcher's teardown does).
 */
export class AccessGate {
  /** The client to give the watcher: list and watch, through the gate. */
  readonly client: GatedClient;
  /** The problem (or undefined, open) after each check or report: for whoever waits on what the gate concludes. */
  readonly problems: Observable<AccessProblem | undefined>;
  private readonly settled = new Subject<AccessProblem | undefined>();
  private verdict: Verdict | 'checking' = 'checking';
  /** The problem last logged, so that a problem that lasts is logged once. */
  private logged: AccessProblem | undefined;
  private readonly waiters = new Set<() => void>();
  private readonly checks = new Subject<number>();
  private subscription: Subscription | undefined;
  private readonly log: Logger;
  private readonly label: string;

  constructor(private readonly options: AccessGateOptions) {
    this.log = (options.logger ?? SILENT).child({ resource: resourceLabel(options.resource) });
    this.label = resourceLabel(options.resource);
    const inner = options.client;
    this.problems = this.settled.asObservable();
    this.client = {
      list: async <T extends KubeObject>(resource: Resource, listOptions?: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>> => {
        await this.opened(signal);
        try {
          return await inner.list<T>(resource, listOptions, signal);
        } catch (error) {
          this.report(error, 'list');
          throw error;
        }
      },
      watch: <T extends KubeObject>(resource: Resource, watchOptions?: WatchOptions, signal?: AbortSignal) =>
        this.watched<T>(resource, watchOptions, signal),
    };
  }

  /** The problem, with its remedy, while the gate is closed by one; undefined otherwise. */
  get reason(): string | undefined {
    const problem = this.problem;
    if (!problem) return undefined;
    const remedy = this.options.remedies?.[problem.reason];
    return remedy ? `${problem.message}; fix: ${remedy}` : problem.message;
  }

  /** The current problem, if any. */
  get problem(): AccessProblem | undefined {
    return typeof this.verdict === 'string' ? undefined : this.verdict;
  }

  /** True while requests go through (after a check passed or could not tell), until the next problem. */
  get open(): boolean {
    return this.verdict === 'open' || this.verdict === 'unknown';
  }

  /** Starts the first check. */
  start(): void {
    if (this.subscription) return;
    const scheduler = this.options.scheduler ?? asyncScheduler;
    const recheckMs = this.options.recheckMs ?? DEFAULT_RECHECK_MS;
    this.subscription = this.checks
      .pipe(
        // One cycle at a time: a report that arrives during a cycle changes nothing the cycle will not see.
        exhaustMap((delayMs) =>
          timer(delayMs, scheduler).pipe(
            exhaustMap(() =>
              defer(() => this.check()).pipe(
                repeat({ delay: () => timer(recheckMs, scheduler) }),
                takeWhile((verdict) => typeof verdict !== 'string', true),
              ),
            ),
          ),
        ),
      )
      .subscribe((verdict) => this.settle(verdict));
    this.checks.next(0);
  }

  /** Cancels the checks and their timers. */
  stop(): void {
    this.subscription?.unsubscribe();
    this.checks.complete();
    this.settled.complete();
  }

  /** One check, abortable: discovery, then (after a 403) an access review of each verb. Never errors. */
  private check(): Observable<Verdict> {
    return new Observable<Verdict>((subscriber) => {
      const abort = new AbortController();
      this.verdictNow(abort.signal).then(
        (verdict) => {
          subscriber.next(verdict);
          subscriber.complete();
        },
        () => {
          subscriber.next('unknown');
          subscriber.complete();
        },
      );
      return () => abort.abort();
    });
  }

  private async verdictNow(signal: AbortSignal): Promise<Verdict> {
    const { client, resource, namespace } = this.options;
    const notServed = await servedProblem(client, resource, ['list', 'watch'], signal);
    if (notServed) return notServed;
    if (this.problem?.reason !== 'Forbidden') return 'open';
    let verdict: Verdict = 'open';
    for (const verb of ['list', 'watch']) {
      const allowed = await mayI(client, verb, resource, namespace, signal);
      if (allowed === undefined) verdict = 'unknown';
      if (allowed === false) {
        // Keep the API server's own words from the 403 when the same permission is still missing.
        const previous = this.problem;
        return previous?.permission?.startsWith(`${verb} `) ? previous : forbiddenProblem(verb, resource, namespace);
      }
    }
    return verdict;
  }

  private settle(verdict: Verdict): void {
    if (typeof verdict === 'string') {
      this.verdict = verdict;
      // On trial (`unknown`) the problem stays logged: if the request meets it again, it is not logged twice.
      if (verdict === 'open' && this.logged) {
        this.log.info({ was: this.logged.reason }, 'api.available');
        this.logged = undefined;
      }
      for (const wake of [...this.waiters]) wake();
      this.settled.next(undefined);
      return;
    }
    this.verdict = verdict;
    this.settled.next(verdict);
    if (this.logged?.message === verdict.message) return;
    this.logged = verdict;
    this.log.error(
      { reason: verdict.reason, permission: verdict.permission, problem: verdict.message, fix: this.options.remedies?.[verdict.reason] },
      'api.unavailable',
    );
  }

  /** A request failed: a 404 or 403 closes the gate (and starts a check cycle); anything else is the watcher's business. */
  private report(error: unknown, verb: 'list' | 'watch'): void {
    if (isForbidden(error)) {
      const message = error instanceof ApiError ? error.status?.message : undefined;
      const wasOpen = this.open;
      this.settle(forbiddenProblem(verb, this.options.resource, this.options.namespace, message));
      // The request's own answer is fresher than any check: the first re-check waits a period.
      if (wasOpen) this.checks.next(this.options.recheckMs ?? DEFAULT_RECHECK_MS);
    } else if (isNotFound(error) && this.open) {
      this.verdict = 'checking';
      this.checks.next(0);
    }
  }

  /** Resolves when the gate is open; rejects when `signal` aborts first. */
  private opened(signal: AbortSignal | undefined): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters.delete(wake);
        reject(new ApiError(`${this.label}: aborted while waiting for the API to serve it`, 0));
      };
      const wake = (): void => {
        this.waiters.delete(wake);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(wake);
    });
  }

  private async *watched<T extends KubeObject>(
    resource: Resource,
    options: WatchOptions | undefined,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<RawWatchEvent<T>, void, undefined> {
    try {
      await this.opened(signal);
    } catch (error) {
      // Aborted while waiting at the closed gate (the watcher stopped, or its idle timer fired): end like an aborted watch does.
      if (signal?.aborted) return;
      throw error;
    }
    try {
      yield* this.options.client.watch<T>(resource, options, signal);
    } catch (error) {
      this.report(error, 'watch');
      throw error;
    }
  }
}
