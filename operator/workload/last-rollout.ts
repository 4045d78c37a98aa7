// A workload's last rollout of ours and its outcome, kept in its `app.example.com/last-rollout` annotation (no status of ours there).
import { ROLLOUT_RESULTS, type RolloutResult, type RolloutTrigger } from '../../api/customapp.js';
import { LAST_ROLLOUT_ANNOTATION } from '../../api/workload.js';
import { type ContentChange, describeChanges } from '../governance/rollout-cause.js';
import type { RecordedRollout } from '../governance/rollout-progress.js';
import type { KubeObject } from '../kube/objects.js';
import { parseJsonObject } from '../podtemplate/hash-annotation.js';

/** The annotation's content. */
export interface WorkloadRollout extends RecordedRollout {
  readonly trigger: Exclude<RolloutTrigger, 'Spec'>;
  /** The objects whose content changed, with the hashes the pods ran with and the ones rolled out. */
  readonly changes: readonly ContentChange[];
  /**
   * The workload's `metadata.generation` that the write of the template made (the one it read plus one: the write is
   * conditional on its resourceVersion). A status that observed it tells this rollout's end apart from a later scale's
   * (`progress.ts`); a record without it (an earlier version's) is judged by kubectl's rules alone.
   */
  readonly templateGeneration?: number;
  /** RFC 3339: when the operator saw it succeed or fail. */
  readonly completionTime?: string;
  /** Why it failed (the workload controller's message). */
  readonly message?: string;
}

/** The annotation's value: compact JSON, hashes only (never content). */
export function encodeWorkloadRollout(rollout: WorkloadRollout): string {
  return JSON.stringify(rollout);
}

/** The last rollout recorded on `workload`, or undefined when none is, or it does not parse (edited by hand). */
export function lastWorkloadRollout(workload: KubeObject): WorkloadRollout | undefined {
  const value = parseJsonObject(workload.metadata.annotations?.[LAST_ROLLOUT_ANNOTATION]) as Partial<WorkloadRollout> | undefined;
  if (value === undefined) return undefined;
  if (value.trigger !== 'ConfigMap' && value.trigger !== 'Secret') return undefined;
  if (typeof value.startTime !== 'string' || !ROLLOUT_RESULTS.includes(value.result as RolloutResult)) return undefined;
  if (!Array.isArray(value.changes)) return undefined;
  // A template generation edited into something else is left out: the rollout is then judged by kubectl's rules.
  const { templateGeneration, ...rest } = value;
  const valid = Number.isSafeInteger(templateGeneration) && (templateGeneration as number) >= 1;
  return (valid ? value : rest) as WorkloadRollout;
}

/** `ConfigMap "app-config" 3f2a9c0d1e2b→e4e8a1b2c3d4`, for Events and logs. */
export function describeWorkloadRollout(rollout: WorkloadRollout): string {
  return describeChanges(rollout.changes);
}
