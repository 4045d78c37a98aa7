// The echo rule of FreshCache against a trivial model: whatever the order of writes, other writers, the client's reading
// of the answers and the watch's deliveries (relists among them), a change is an echo only when it is a version this
// process wrote, and it is one whenever the write's answer was read before the watch delivered it (at most the last
// four such versions awaited). Replay a failure with FRESH_CACHE_MODEL_SEED=<seed>.
import test from 'ava';
import fc from 'fast-check';
import type { KubeObject } from '../kube/objects.js';
import { FreshCache } from './fresh-cache.js';
import { Store } from './store.js';

const ACTIONS = ['write', 'foreign', 'answer', 'event', 'relist'] as const;
type Action = (typeof ACTIONS)[number];
/** The awaited versions the cache keeps per key (`MAX_AWAITED_ECHOES`). */
const AWAITED = 4;

const at = (resourceVersion: number): KubeObject => ({
  metadata: { namespace: 'ns', name: 'a', uid: 'u', resourceVersion: String(resourceVersion) },
});

/** Plays `actions` on one key; throws at the first change whose echo verdict the model does not expect. */
function play(actions: readonly Action[]): void {
  const store = new Store<KubeObject>();
  const cache = new FreshCache(store, { ttlMs: 1e12 });
  try {
    // The server's revisions of the key, oldest first; which are this process's; how far the watch delivered them.
    const revisions: { rv: number; ours: boolean }[] = [];
    let delivered = 0;
    const unanswered: number[] = [];
    // The model: this process's versions whose answer was read before the watch delivered them, the last AWAITED.
    let awaited: number[] = [];
    const deliver = (index: number, step: number): void => {
      const { rv, ours } = revisions[index]!;
      const change = { type: 'apply', key: 'ns/a', object: at(rv) } as const;
      store.apply(change.object);
      const expected = ours && awaited.includes(rv);
      awaited = awaited.filter((each) => each > rv);
      const echo = cache.isEcho(change);
      cache.observe(change);
      if (echo !== expected)
        throw new Error(
          `step ${step}: version ${rv} (${ours ? 'ours' : "another writer's"}) ${echo ? 'was' : 'was not'} taken for an echo`,
        );
    };
    for (const [step, action] of actions.entries()) {
      if (action === 'write' || action === 'foreign') {
        const rv = (revisions.at(-1)?.rv ?? 10) + 1;
        revisions.push({ rv, ours: action === 'write' });
        if (action === 'write') unanswered.push(rv);
      } else if (action === 'answer') {
        const rv = unanswered.shift();
        if (rv === undefined) continue;
        cache.wrote(at(rv));
        const seen = delivered > 0 && revisions[delivered - 1]!.rv >= rv;
        if (!seen) awaited = [...awaited, rv].slice(-AWAITED);
      } else if (action === 'event') {
        if (delivered < revisions.length) deliver(delivered++, step);
      } else if (revisions.length > 0) {
        // A relist: the store gets the latest revision whatever the watch had delivered, and an apply for it.
        delivered = revisions.length;
        deliver(revisions.length - 1, step);
      }
    }
  } finally {
    cache.close();
  }
}

test('a change is an echo exactly when it is a version this process wrote and read the answer of first', (t) => {
  const replay = process.env.FRESH_CACHE_MODEL_SEED;
  const seed = replay === undefined ? Date.now() % 2 ** 31 : Number(replay);
  const property = fc.property(fc.array(fc.constantFrom(...ACTIONS), { maxLength: 60 }), (actions) => play(actions));
  const result = fc.check(property, { numRuns: 500, seed });
  t.log(`500 runs, seed ${seed} (replay: FRESH_CACHE_MODEL_SEED=${seed})`);
  if (result.failed) t.fail(fc.defaultReportMessage(result) ?? `failed with seed ${seed}`);
  else t.pass();
});
