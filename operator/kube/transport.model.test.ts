// The transport's stale-socket rule against a trivial model: whatever the server resets, each request is sent again
// exactly when it failed before any answer on a reused connection and may be replayed (GET, PUT, DELETE), at most
// eight sends in all; otherwise its first answer or failure is the caller's. Replay a failure with
// TRANSPORT_MODEL_SEED=<seed>.
import test from 'ava';
import fc from 'fast-check';
import { CONFIGMAPS } from './resources.js';
import { resettingServer } from './testing/resetting-server.js';
import { type Call, Transport } from './transport.js';

const METHODS = ['GET', 'PUT', 'DELETE', 'POST', 'PATCH'] as const;
const REPLAYABLE = new Set(['GET', 'PUT', 'DELETE']);
const MAX_SENDS = 8;

/** One request as the server received it: which call, on which connection, its index there, and whether it was reset. */
interface Received {
  readonly id: number;
  readonly indexOnConnection: number;
  readonly reset: boolean;
}

/** The caller's outcome of each call the model expects from the server's log, or why the log breaks the rule. */
function modelOutcomes(calls: readonly { id: number; method: string }[], log: readonly Received[]): Map<number, string> {
  const outcomes = new Map<number, string>();
  for (const { id, method } of calls) {
    const sends = log.filter((received) => received.id === id);
    if (sends.length === 0) throw new Error(`call ${id} was never sent`);
    for (const [index, send] of sends.entries()) {
      const last = index === sends.length - 1;
      const again = send.reset && send.indexOnConnection > 0 && REPLAYABLE.has(method) && index + 1 < MAX_SENDS;
      if (again === last)
        throw new Error(`call ${id} (${method}): send ${index + 1} of ${sends.length} ${again ? 'was not' : 'was'} sent again`);
      if (last) outcomes.set(id, send.reset ? 'error' : 'answered');
    }
  }
  return outcomes;
}

test('each request is sent again exactly as the stale-socket rule says, and every caller gets its outcome', async (t) => {
  const replay = process.env.TRANSPORT_MODEL_SEED;
  const seed = replay === undefined ? Date.now() % 2 ** 31 : Number(replay);
  const scenario = fc.record({
    // Whether the server resets each request it receives, in arrival order (past the end: answered).
    resets: fc.array(fc.boolean(), { maxLength: 40 }),
    // Batches of concurrent calls, one batch after another.
    batches: fc.array(fc.array(fc.constantFrom(...METHODS), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
  });
  const property = fc.asyncProperty(scenario, async ({ resets, batches }) => {
    const log: Received[] = [];
    const server = await resettingServer((line, indexOnConnection) => {
      const id = Number(/[?&]id=(\d+)/.exec(line)?.[1]);
      const reset = resets[log.length] ?? false;
      log.push({ id, indexOnConnection, reset });
      return reset;
    });
    const transport = new Transport({ server: server.url, authHeaders: async () => ({}) }, 'model');
    try {
      const calls: { id: number; method: string }[] = [];
      const actual = new Map<number, string>();
      for (const batch of batches) {
        await Promise.all(
          batch.map(async (method) => {
            const id = calls.length;
            calls.push({ id, method });
            const call: Call = {
              method,
              path: `/api/v1/namespaces/default/configmaps/a?id=${id}`,
              verb: 'get',
              resource: CONFIGMAPS,
              ...(method === 'GET' || method === 'DELETE' ? {} : { body: { data: {} } }),
            };
            try {
              const { response, abort } = await transport.send(call, 5_000);
              const body = (await response.read()).toString('utf8');
              abort();
              actual.set(id, body === '{}' ? 'answered' : `answered ${body}`);
            } catch {
              actual.set(id, 'error');
            }
          }),
        );
      }
      const expected = modelOutcomes(calls, log);
      for (const { id, method } of calls) {
        if (actual.get(id) !== expected.get(id))
          throw new Error(`call ${id} (${method}): expected ${expected.get(id)}, got ${actual.get(id)}`);
      }
    } finally {
      transport.close();
      server.close();
    }
  });
  const result = await fc.check(property, { numRuns: 150, seed });
  t.log(`150 runs, seed ${seed} (replay: TRANSPORT_MODEL_SEED=${seed})`);
  if (result.failed) t.fail(fc.defaultReportMessage(result) ?? `failed with seed ${seed}`);
  else t.pass();
});
