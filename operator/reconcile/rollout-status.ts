// The rollout part of the status: `lastRollout` read from the Deployment, `pendingRollout` from the gate, and what Ready says of them.
import type { LastRollout, PendingRollout } from '../../api/customapp-status.js';
import type { Gate } from '../governance/governance.js';
import { type ContentChange, describeCause, describeChanges } from '../governance/rollout-cause.js';
import { type CurrentRollout, sameRollout } from '../governance/rollout-progress.js';
import type { ConditionDecision } from './conditions.js';
import { REASONS } from './reasons.js';

/** A rollout caused by ConfigMap or Secret content that waits: the gate's answer and the changes that wait. */
export interface WaitingRollout {
  readonly gate: Extract<Gate, { verdict: 'wait' }>;
  readonly changes: readonly ContentChange[];
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

/**
 * `status.lastRollout` from the Deployment's latest rollout (`currentRollout`: its cause from the
 * `app.example.com/rollout` annotation, its result from its status by kubectl's rules). The completion time is the
 * first reconcile that saw this rollout end with this result. A Deployment with no cause recorded (made by an earlier
 * version) leaves the previous value.
 */
export function lastRolloutStatus(
  previous: LastRollout | undefined,
  current: CurrentRollout | undefined,
  now: string,
): LastRollout | undefined {
  if (!current) return previous;
  const { cause } = current;
  const same = previous !== undefined && sameRollout(previous, cause);
  // A paused rollout has not ended: it goes on when the Deployment is resumed.
  const result = current.phase === 'Paused' ? 'InProgress' : current.phase;
  const completionTime =
    result === 'InProgress' ? undefined : same && previous.result === result && previous.completionTime ? previous.completionTime : now;
  const first = cause.trigger === 'Spec' ? undefined : cause.changes.find((change) => change.kind === cause.trigger);
  return withoutUndefined({
    trigger: cause.trigger,
    name: first?.name,
    keys: first?.keys,
    fromHash: first?.from,
    toHash: first?.to,
    generation: cause.generation,
    startTime: cause.start,
    completionTime,
    result,
    message: current.phase === 'Failed' ? `${describeCause(cause)}: ${current.message}` : describeCause(cause),
  });
}

/**
 * `status.pendingRollout` while a rollout waits: the reason, since when (the budget's own time for the queue, so that a
 * restart rebuilds its order; otherwise the first reconcile that saw this reason), and the change that waits (the
 * flapping object's, when flapping).
 */
export function pendingRolloutStatus(
  previous: PendingRollout | undefined,
  waiting: WaitingRollout | undefined,
  now: Date,
): PendingRollout | undefined {
  if (!waiting) return undefined;
  const { gate, changes } = waiting;
  const change =
    (gate.reason === 'Flapping' ? changes.find((each) => each.kind === gate.kind && each.name === gate.name) : undefined) ?? changes[0]!;
  const since =
    gate.reason === 'Queued'
      ? new Date(gate.since).toISOString()
      : previous?.reason === gate.reason && previous.trigger === change.kind && previous.name === change.name
        ? previous.since
        : now.toISOString();
  return withoutUndefined({
    reason: gate.reason,
    since,
    trigger: change.kind,
    name: change.name,
    keys: change.keys,
    fromHash: change.from,
    toHash: change.to,
  });
}

const seconds = (ms: number): string => `${Math.round(ms / 100) / 10}s`;

/** What Ready says of a rollout that waits. */
export function waitingCondition(waiting: WaitingRollout): ConditionDecision {
  const type = 'Ready';
  const { gate } = waiting;
  const changes = describeChanges(waiting.changes);
  switch (gate.reason) {
    case 'Queued':
      return {
        type,
        status: 'False',
        reason: REASONS.rolloutQueued,
        // The position is an upper bound: nobody passes a queued app, and it is recomputed whenever the app is
        // reconciled (each content change), not each time the queue moves (that would cost a status write per queued
        // app per slot). The live queue is in customapp_rollouts_queued and the `rollout.waiting` log lines.
        message: `the rollout of ${changes} waits for a slot of the rollout budget (--max-concurrent-rollouts=${gate.limit}, all in use): position ${gate.position} in the queue when last reconciled`,
      };
    case 'Flapping':
      return {
        type,
        status: 'False',
        reason: REASONS.flapping,
        message: `${gate.kind} "${gate.name}" is flapping: ${gate.changes} content changes within ${seconds(gate.windowMs)} (more than ${gate.threshold}); the rollout of ${changes} is held until it has not changed for ${seconds(gate.windowMs)}, then rolls out the latest content once`,
      };
    case 'Paused':
      return {
        type,
        status: 'False',
        reason: REASONS.rolloutPaused,
        message: `the rollout of ${changes} is paused (spec.rollout.paused); the latest content rolls out once unpaused`,
      };
    case 'Debouncing':
      return {
        type,
        status: 'False',
        reason: REASONS.rolloutDebouncing,
        message: `the rollout of ${changes} waits until the content has not changed for ${seconds(gate.debounceMs)} (spec.rollout.debounceSeconds)`,
      };
  }
}

/** What Ready says of the Deployment's latest rollout: failed, paused or in progress (undefined once it succeeded). */
export function progressCondition(current: CurrentRollout | undefined): ConditionDecision | undefined {
  if (!current || current.phase === 'Succeeded') return undefined;
  const what = describeCause(current.cause);
  if (current.phase === 'Failed') {
    return { type: 'Ready', status: 'False', reason: REASONS.rolloutFailed, message: `the rollout of ${what} failed: ${current.message}` };
  }
  if (current.phase === 'Paused') {
    return {
      type: 'Ready',
      status: 'False',
      reason: REASONS.deploymentPaused,
      message: `the rollout of ${what} is paused on the Deployment: ${current.message} (while paused it holds no slot of the rollout budget)`,
    };
  }
  return {
    type: 'Ready',
    status: 'False',
    reason: REASONS.rolloutInProgress,
    message: `the rollout of ${what} is in progress: ${current.message}`,
  };
}
