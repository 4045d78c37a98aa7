// Waits and deadlines on an injected scheduler, as the leader elector needs them (real timers, or virtual time in tests).
import type { SchedulerLike } from 'rxjs';

/** Waits `ms` on the scheduler: true, or false as soon as `signal` aborts. */
export function pause(ms: number, signal: AbortSignal, scheduler: SchedulerLike): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(false);
      return;
    }
    const onAbort = (): void => {
      action.unsubscribe();
      resolve(false);
    };
    const action = scheduler.schedule(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs `attempt` with a signal that also aborts after `ms` on the scheduler; the timer goes with the attempt. */
export async function withDeadline<T>(
  ms: number,
  signal: AbortSignal,
  scheduler: SchedulerLike,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const timeout = new AbortController();
  const action = scheduler.schedule(() => timeout.abort(new Error(`deadline of ${ms} ms`)), Math.max(0, ms));
  try {
    return await attempt(AbortSignal.any([signal, timeout.signal]));
  } finally {
    action.unsubscribe();
  }
}
