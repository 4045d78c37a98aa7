// metav1.Condition bookkeeping: set one condition, keeping lastTransitionTime unless the status flips.
import type { ConditionType } from '../../api/customapp.js';
import type { Condition } from '../../api/customapp-status.js';

/** A condition as the reconcile decides it, before the bookkeeping fields. */
export interface ConditionDecision {
  readonly type: ConditionType;
  readonly status: Condition['status'];
  readonly reason: string;
  readonly message: string;
}

/**
 * `decision` as a full condition: `lastTransitionTime` is `now` when the previous condition of that type had another
 * status (or there was none), and the previous time otherwise, as `meta.SetStatusCondition` does.
 */
export function nextCondition(
  previous: readonly Condition[] | undefined,
  decision: ConditionDecision,
  generation: number | undefined,
  now: string,
): Condition {
  const before = previous?.find((condition) => condition.type === decision.type);
  return {
    type: decision.type,
    status: decision.status,
    observedGeneration: generation,
    lastTransitionTime: before && before.status === decision.status ? before.lastTransitionTime : now,
    reason: decision.reason,
    message: decision.message,
  };
}

/** The condition of a type, if present. */
export function findCondition(conditions: readonly Condition[] | undefined, type: ConditionType): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}
