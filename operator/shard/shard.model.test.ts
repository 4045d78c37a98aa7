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

test("shards that join and leave gracefully during a stream of changes apply every change, by the key's live owner", async (t) => {
  const replay = process.env.SHARD_MODEL_SEED;
  const { seed, acts, handoffs } = await checkShardModel({
    numRuns: RUNS,
    seed: replay === undefined ? undefined : Number(replay),
    path: process.env.SHARD_MODEL_PATH,
    scenarios: 'handoffs',
  });
  t.log(`${RUNS} runs, ${acts} reconciles, ${handoffs} views acknowledged; seed ${seed} (replay: SHARD_MODEL_SEED=${seed})`);
  t.true(handoffs > RUNS, 'ownership changed hands in the runs');
});

test('with rollouts in the model, the cluster-wide budget holds and every change rolls', async (t) => {
  const replay = process.env.SHARD_MODEL_SEED;
  const { seed, acts, handoffs } = await checkShardModel({
    numRuns: RUNS,
    seed: replay === undefined ? undefined : Number(replay),
    path: process.env.SHARD_MODEL_PATH,
    rollouts: true,
  });
  t.log(`${RUNS} runs, ${acts} reconciles, ${handoffs} views acknowledged; seed ${seed} (replay: SHARD_MODEL_SEED=${seed})`);
  t.true(handoffs > RUNS, 'ownership changed hands in the runs');
});
