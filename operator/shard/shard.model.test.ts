// The shards in virtual time, joining, leaving, crashing, frozen and cut off: no key ever has two acting shards, and the ring settles.
import test from 'ava';
import { checkShardModel, type ShardModelOptions } from './testing/shard-model.js';

/** Runs of the scenarios with every fault in `npm test` (the other families half as many); SHARD_MODEL_RUNS runs more. */
const RUNS = Number(process.env.SHARD_MODEL_RUNS ?? 100);

/** Checks the model over `runs` scenarios (SHARD_MODEL_SEED and SHARD_MODEL_PATH replay one) and logs the seed. */
const modelHolds = test.macro(async (t, runs: number, options: ShardModelOptions) => {
  const replay = process.env.SHARD_MODEL_SEED;
  const { seed, acts, handoffs } = await checkShardModel({
    ...options,
    numRuns: runs,
    seed: replay === undefined ? undefined : Number(replay),
    path: process.env.SHARD_MODEL_PATH,
  });
  t.log(`${runs} runs, ${acts} reconciles, ${handoffs} views acknowledged; seed ${seed} (replay: SHARD_MODEL_SEED=${seed})`);
  t.true(handoffs > runs, 'ownership changed hands in the runs');
});

test(
  'shards that join, leave, crash, freeze or are cut off never act on one key at once, and settle on one owner per key',
  modelHolds,
  RUNS,
  {},
);

test(
  "shards that join and leave gracefully during a stream of changes apply every change, by the key's live owner",
  modelHolds,
  Math.ceil(RUNS / 2),
  { scenarios: 'handoffs' },
);

test('with rollouts in the model, the cluster-wide budget holds and every change rolls', modelHolds, Math.ceil(RUNS / 2), {
  rollouts: true,
});
