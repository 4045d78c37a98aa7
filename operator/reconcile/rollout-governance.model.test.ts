// The rollout governance against a trivial model, through the real reconcilers of CustomApps and workloads sharing one budget: never over the limit, first in first out, latest content once, nothing starved.
import test from 'ava';
import { checkRolloutModel } from './testing/rollout-model.js';

/** Runs in `npm test`; `npm run soak` runs many more (test/soak/main.ts). */
const RUNS = Number(process.env.ROLLOUT_MODEL_RUNS ?? 300);

test('CustomApps and workloads sharing ConfigMaps and the budget: random edits, reconciles in any order, rollouts that end or fail, pauses, scales, deletions, time, restarts and failovers on slow caches keep the budget, its order and the latest content', async (t) => {
  const replay = process.env.ROLLOUT_MODEL_SEED;
  const { seed, contentRollouts, workloadRollouts, workloadsQueued, queuedSeen, restarts, failovers, deletedRolling } =
    await checkRolloutModel({
      numRuns: RUNS,
      seed: replay === undefined ? undefined : Number(replay),
      path: process.env.ROLLOUT_MODEL_PATH,
    });
  t.log(
    `${RUNS} runs: ${contentRollouts} content rollouts (${workloadRollouts} of workloads), ${queuedSeen} apps and ${workloadsQueued} workloads queued, ${restarts} restarts, ${failovers} failovers, ${deletedRolling} apps deleted while rolling; seed ${seed} (replay: ROLLOUT_MODEL_SEED=${seed})`,
  );
  // Coverage bars, not figures: the step mix queues about 70 to 90 apps in 300 runs, so the bars sit far enough below
  // that no seed's spread fails them, and a generator that stopped queueing still does.
  t.true(queuedSeen > RUNS / 10, 'the runs did queue apps: the budget was exercised');
  t.true(restarts > 0);
  t.true(failovers > 0);
  t.true(deletedRolling > 0, 'apps were deleted in the middle of a content rollout');
  t.true(workloadRollouts > RUNS / 4, 'the workloads did roll');
  t.true(workloadsQueued > RUNS / 10, 'the workloads did wait behind slots: the budget was shared');
});
