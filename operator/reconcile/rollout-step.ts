// The rollout step: asks the governance whether new ConfigMap or Secret content may roll now, and reports the rollouts in status terms (Events, metrics).
import type { CustomAppStatus } from '../../api/customapp-status.js';
import type { Gate } from '../governance/governance.js';
import { type ContentChange, describeChanges } from '../governance/rollout-cause.js';
import { type CurrentRollout, currentRollout, rollingForContent } from '../governance/rollout-progress.js';
import type { Deployment } from '../kube/objects.js';
import { REASONS } from './reasons.js';
import type { ReconcileScope } from './scope.js';
import { progressCondition, type WaitingRollout } from './rollout-status.js';

/**
 * Asks the governance about `changes` (new content, with the spec unchanged) and logs the answer with the trace id:
 * `rollout.granted`, or `rollout.waiting` with the reason (Queued with its position, Flapping with the object and its
 * count, Paused, Debouncing) and when it will be looked at again.
 */
export function gateRollout(scope: ReconcileScope, live: Deployment, changes: readonly ContentChange[]): Gate {
  const rollout = scope.app.spec.rollout;
  const gate = scope.world.governance.gate({
    key: scope.request.key,
    namespace: scope.namespace,
    changes,
    paused: rollout?.paused ?? false,
    debounceMs: (rollout?.debounceSeconds ?? 0) * 1000,
    rolling: rollingForContent(currentRollout(live, scope.app.status?.lastRollout)),
  });
  const change = describeChanges(changes);
  if (gate.verdict === 'roll') {
    scope.request.log.info({ change, inProgress: gate.inProgress, limit: gate.limit }, 'rollout.granted');
  } else {
    const { verdict: _verdict, ...details } = gate;
    scope.request.log.info({ change, ...details }, 'rollout.waiting');
  }
  return gate;
}

/**
 * After the Deployment step: tells the budget where the app stands (its Deployment rolling for content, and whether it
 * still waits in the queue), which frees its slot once its rollout is done.
 */
export function settleRollout(scope: ReconcileScope, current: CurrentRollout | undefined, waiting: WaitingRollout | undefined): void {
  scope.world.governance.settle(scope.request.key, {
    rolling: rollingForContent(current),
    waiting: waiting?.gate.reason === 'Queued',
  });
}

/**
 * One Event when something about the rollouts begins, judged from the status before and after (so a rerun records
 * nothing again): RolloutQueued, RolloutHeld (a flapping object, with its name and count), RolloutPaused, and
 * RolloutFailed naming the change that caused it.
 */
export async function rolloutEvents(
  scope: ReconcileScope,
  previous: CustomAppStatus,
  next: CustomAppStatus,
  waiting: WaitingRollout | undefined,
  current: CurrentRollout | undefined,
): Promise<void> {
  const pending = next.pendingRollout;
  const begins = pending && (previous.pendingRollout?.reason !== pending.reason || previous.pendingRollout.since !== pending.since);
  if (begins && waiting) {
    const { gate } = waiting;
    const change = describeChanges(waiting.changes);
    if (gate.reason === 'Queued') {
      scope.event(
        'Normal',
        REASONS.rolloutQueued,
        `Rollout of ${change} queued at position ${gate.position} of ${gate.queued}: ${gate.inProgress} of ${gate.limit} rollouts in progress (--max-concurrent-rollouts)`,
      );
    } else if (gate.reason === 'Flapping') {
      scope.event(
        'Warning',
        REASONS.rolloutHeld,
        `${gate.kind} "${gate.name}" is flapping: ${gate.changes} content changes within ${gate.windowMs / 1000}s (more than ${gate.threshold}); the rollout is held until it has not changed for ${gate.windowMs / 1000}s`,
      );
    } else if (gate.reason === 'Paused') {
      scope.event('Normal', REASONS.rolloutPaused, `Rollout of ${change} paused by spec.rollout.paused`);
    }
  }
  const last = next.lastRollout;
  const before = previous.lastRollout;
  const newOutcome = last && last.result !== 'InProgress' && (before?.startTime !== last.startTime || before.result !== last.result);
  const failed = progressCondition(current);
  if (newOutcome && last.result === 'Failed' && failed) {
    scope.event('Warning', REASONS.rolloutFailed, `${failed.message.charAt(0).toUpperCase()}${failed.message.slice(1)}`);
  }
}

/** Counts a rollout seen to end in `customapp_rollouts_total`, once: when the written status first records its result. */
export function countRolloutOutcome(scope: ReconcileScope, previous: CustomAppStatus, next: CustomAppStatus): void {
  const last = next.lastRollout;
  const before = previous.lastRollout;
  if (!last || last.result === 'InProgress') return;
  if (before?.startTime === last.startTime && before.trigger === last.trigger && before.result === last.result) return;
  scope.world.governance.ended(last.trigger, last.result);
  scope.request.log.info(
    { trigger: last.trigger, result: last.result, change: last.message, startTime: last.startTime },
    `rollout.${last.result === 'Failed' ? 'failed' : 'succeeded'}`,
  );
}
