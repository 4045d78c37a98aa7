// The reconcile contract: a key in, a Result out, with the queue semantics of each outcome documented here.
import type { Logger } from '../log.js';

/**
 * One reconcile request: the key of an object, never the event that caused it. A reconcile reads the current
 * state from caches and drives the world towards it, whatever happened before (level-based, idempotent).
 */
export interface Request {
  /** `namespace/name`. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /**
   * Why the key was queued (`customapp applied`, `configmap default/app-config changed`…), with the reasons
   * coalesced into it. For logs only: a reconcile MUST NOT branch on it.
   */
  readonly reason: string;
  /** Links this reconcile's log lines and writes to the trigger that queued it. */
  readonly traceId: string;
  /** A logger bound to `key` and `traceId`. */
  readonly log: Logger;
}

/**
 * What the controller does with the key after a reconcile:
 * - resolves `{}` (or nothing): success. The key's failure history is forgotten; it runs again only when a
 *   trigger queues it.
 * - resolves `{ requeueAfterMs }`: success, and run again after that delay (or sooner, when a trigger comes).
 *   For conditions that no watch reports (for example a Deployment of the same name that we do not own).
 * - resolves `{ requeue: true }`: run again after the rate limiter's delay (5 ms × 2ⁿ per key, capped, and 10/s
 *   overall with a burst of 100), counted as a retry but not an error. For expected races: a 409 Conflict.
 * - resolves `{ requeueNow: true }`: success so far, and run again as soon as a worker is free, behind the keys
 *   already waiting (the CustomApp reconcile leaves its status for later this way while other keys wait).
 * - rejects: logged, counted in `controller_runtime_reconcile_errors_total`, and retried with the rate
 *   limiter's delay, like `{ requeue: true }`.
 * In every case a trigger that arrives while the key is being reconciled runs it exactly once more afterwards.
 */
export interface Result {
  readonly requeue?: boolean;
  readonly requeueAfterMs?: number;
  readonly requeueNow?: boolean;
}

/** Drives one object towards its desired state. Never called twice at once for the same key. */
export interface Reconciler {
  reconcile(request: Request): Promise<Result | undefined>;
}
