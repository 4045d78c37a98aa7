// The shards in virtual time, joining, leaving, crashing, frozen and cut off: no key ever has two acting shards, and the ring settles.
import test from 'ava';
import { checkShardModel } from './testing/shard-model.js';

/** Runs in `npm test`; SHARD_MODEL_RUNS runs more. */
const RUNS = Number(process.env.SHARD_MODEL_RUNS ?? 100);

test('shards that join, leave, crash, freeze or are cut off never act on one key at once, and settle on one owner per key', async (t) => {
  const replay = process.env.SHARD_MODEL_SEED;
  const { seed, acts, handoffs } = await checkShardModel({
    numRuns: RUNS,
    seed: replay === undefined ? undefined : Number(replay),
    path: process.env.SHARD_MODEL_PATH,
  });
  t.log(`${RUNS} runs, ${acts} reconciles, ${handoffs} views acknowledged; seed ${seed} (replay: SHARD_MODEL_SEED=${seed})`);
  t.true(handoffs > RUNS, 'ownership changed hands in the runs');
});

// Not yet holding: with rollouts in the model (seed 5: 14 runs of 150), some runs start a rollout with 2 already in
// progress against a budget of 2, and some leave a change never rolled. Not diagnosed yet; the candidates are a rollout
// handed to a member that crashes before acknowledging it, a grant whose write lands after its shard rebuilt its budget,
// and a slot or a place kept for a key given up. Kept failing (test.failing) until it holds.
test.failing('with rollouts in the model, the cluster-wide budget holds and every change rolls', async (t) => {
  await checkShardModel({ numRuns: 150, seed: 5, rollouts: true });
  t.pass();
});
