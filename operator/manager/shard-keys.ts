// What a shard keeps per key across a view change: a key it gives up lets go of its refs and its governance; a key it keeps keeps its place in the queue.
import type { Logger } from '../log.js';

/** What a shard holds for a key besides its caches. */
export interface KeyHoldings {
  /** Frees the key's slot and its place in the rollout budget (`RolloutGovernance.forget`). */
  forget(key: string): void;
  /** Releases every dependency ref the key acquired (`DependencySource.release`): its watches stop if nobody else reads them. */
  release(key: string): void;
  /** Forgets what was reported of the key (a workload's Warnings and waits, `WorkloadReconciler.forgetReports`). */
  forgetReports(key: string): void;
}

/**
 * A key that left this shard's caches (a delete event). Unless the key is in scope again (`inScope`: the view moved back
 * while the caches listed), the shard gave it up, and what the key holds here goes: its slot and place (its new owner
 * counts it, from its own objects), its dependency refs and what was reported of it. Nothing else would release those:
 * the reconcile that releases a key gone from the caches is one the shard no longer starts, for it does not own the
 * key. The release cannot race a
 * reconcile of the key: one starts only while the key is owned in the view acknowledged, and the shard acknowledged the
 * view that gave the key up only once none was in flight (and the caches drop a key only once no view in play gives it
 * here). When a view gives the key back, the acknowledgement owes it a reconcile (`Shard.ready$`), which acquires its refs
 * again. Answers whether the key was given up.
 */
export function keyLeftCaches(key: string, inScope: (key: string) => boolean, holdings: KeyHoldings, logger: Logger): boolean {
  if (inScope(key)) return false;
  holdings.forget(key);
  holdings.release(key);
  holdings.forgetReports(key);
  logger.debug({ key }, 'shard.key-released');
  return true;
}

/**
 * The places in the rollout budget's queue to keep through the rebuild of a view change: those of the keys still in
 * scope. A rebuild reads the queue from what the cluster records (a CustomApp's `status.pendingRollout`), and not every
 * place is recorded there: a workload records none, and a CustomApp's status write may still be on its way. A key the
 * shard keeps is reconciled again only by a trigger, and a rebuild that dropped its place would leave it waiting with
 * nothing to trigger it; a key the shard gives up leaves the queue when it leaves the caches (see {@link keyLeftCaches}).
 */
export function queuePlacesKept(
  queue: readonly { readonly key: string; readonly since: number }[],
  inScope: (key: string) => boolean,
): { key: string; since: number }[] {
  return queue.filter(({ key }) => inScope(key));
}
