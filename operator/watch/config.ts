// What a watcher watches and how: the client it needs, its settings with their defaults, its injectable world.
import type { SchedulerLike } from 'rxjs';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../log.js';
import type { BackoffPolicy, Retry } from './backoff.js';

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
   * The bytes one list page may take as it arrives. A longer answer is cut off and asked again, from the same
   * continue token, at half the page size (one object at a time at worst, which nothing refuses: the API server
   * bounds one object). @default {@link DEFAULT_MAX_PAGE_BYTES}
   */
  readonly maxPageBytes?: number;
  /**
   * The page size a list may grow to: after a full page, the next asks for twice as many objects (up to this) when,
   * at the bytes per object just seen, it would take at most `growPageBytes`; so that a collection of small objects
   * listed from a small `pageSize` takes a few requests, not one per `pageSize` objects. Growth stops for the attempt
   * once a page came back too large. @default `pageSize` (no growth)
   */
  readonly maxPageSize?: number;
  /**
   * The bytes a grown page aims to stay within (see `maxPageSize`). @default a quarter of `maxPageBytes`
   */
  readonly growPageBytes?: number;
  /**
   * `growPageBytes` for a page that came as protobuf: such an answer is held as a Buffer (outside V8's heap) and
   * decoded object by object, so no string of the whole answer is made, which is what bounds a JSON page.
   * @default `growPageBytes`
   */
  readonly growProtobufPageBytes?: number;
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
  /**
   * The level of the `event` line each change logs. A stream whose events are mostly of no interest (a namespace
   * watch that sees every ConfigMap of the namespace) logs them at debug, and its consumer logs the ones it uses.
   * @default 'info'
   */
  readonly eventLogLevel?: 'info' | 'debug';
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
  /**
   * Told of each retry the backoff schedules, after its `retry` line: for a caller that reports the streams that
   * keep failing (metrics, readiness). @default none
   */
  readonly onRetry?: (retry: Retry) => void;
}

/** The default objects per list page. */
export const DEFAULT_PAGE_SIZE = 500;
/**
 * The default byte budget of one list page: far above a page of 500 typical objects, far below a page of 500 of the
 * largest (about 700 MB, beyond V8's longest string), so that only unusual collections page down.
 */
export const DEFAULT_MAX_PAGE_BYTES = 64 * 1024 * 1024;
/** The lower bound of the default server watch timeout (client-go's `minWatchTimeout`); the upper bound is twice it. */
export const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
/** How much longer than the server timeout a silent watch may stay open before it is presumed dead. */
export const IDLE_GRACE_MS = 15_000;
