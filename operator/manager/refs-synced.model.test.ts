// refsSynced against a trivial model, over random interleavings of first states, other refs' states, time, list failures, stops and a close.
import test from 'ava';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { settle, VirtualClock } from '../../test/support/virtual-time.js';
import type { DependencyRef, DependencySource, DependencyState } from '../dependencies/source.js';
import { useKey } from '../dependencies/source.js';
import { refsSynced, type RefsSyncOutcome } from './refs-synced.js';

const TIMEOUT_MS = 100;
const NAMES = ['a', 'b', 'c', 'd'] as const;

type Step =
  | { readonly type: 'emit'; readonly name: string; readonly keyed: boolean }
  | { readonly type: 'advance'; readonly ms: number }
  | { readonly type: 'fail' }
  | { readonly type: 'stop' }
  | { readonly type: 'close' };

const ref = (name: string, keyed: boolean): DependencyRef => ({
  kind: 'ConfigMap',
  namespace: 'ns',
  name,
  ...(keyed ? { keys: ['K'] } : {}),
});

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ type: fc.constant('emit' as const), name: fc.constantFrom(...NAMES, 'other'), keyed: fc.boolean() }),
  },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 60 }) }) },
  { weight: 1, arbitrary: fc.constant({ type: 'fail' as const }) },
  { weight: 1, arbitrary: fc.constant({ type: 'stop' as const }) },
  { weight: 1, arbitrary: fc.constant({ type: 'close' as const }) },
);

/** The model: the refs not synced at the start leave the set as their first state comes; the first ending wins. */
function modelOutcome(refs: readonly DependencyRef[], synced: ReadonlySet<string>, steps: readonly Step[]): RefsSyncOutcome | undefined {
  const waiting = new Set(refs.map(useKey).filter((key) => !synced.has(key)));
  if (waiting.size === 0) return 'synced';
  let elapsed = 0;
  for (const each of steps) {
    if (each.type === 'emit') waiting.delete(useKey(ref(each.name, each.keyed)));
    if (waiting.size === 0) return 'synced';
    if (each.type === 'advance') elapsed += each.ms;
    if (elapsed >= TIMEOUT_MS) return 'timeout';
    if (each.type === 'fail') return 'list failing';
    if (each.type === 'stop') return 'stopping';
    if (each.type === 'close') return 'closed';
  }
  return undefined;
}

/** The real wait, each step followed by the promise turns it may take. */
async function realOutcome(
  refs: readonly DependencyRef[],
  synced: ReadonlySet<string>,
  steps: readonly Step[],
): Promise<RefsSyncOutcome | undefined> {
  const clock = new VirtualClock();
  const changes = new Subject<DependencyState>();
  const listFailures = new Subject<unknown>();
  const stopping = new AbortController();
  const state = async (each: DependencyRef): Promise<DependencyState | undefined> =>
    synced.has(useKey(each)) ? { ref: each, exists: true, hash: 'h', resourceVersion: '1' } : undefined;
  const source = { changes, state } as unknown as DependencySource;
  let outcome: RefsSyncOutcome | undefined;
  const ended = refsSynced(source, refs, { scheduler: clock, timeoutMs: TIMEOUT_MS, signal: stopping.signal, listFailures }).then(
    (value) => {
      outcome = value;
    },
  );
  await settle();
  for (const each of steps) {
    if (outcome) break;
    if (each.type === 'emit') changes.next({ ref: ref(each.name, each.keyed), exists: false });
    if (each.type === 'advance') clock.advance(each.ms);
    if (each.type === 'fail') listFailures.next({});
    if (each.type === 'stop') stopping.abort();
    if (each.type === 'close') changes.complete();
    await settle();
  }
  if (outcome) await ended;
  return outcome;
}

test('the wait ends as the model says: synced once every ref has a state, else the first of a list failing, the bound, a stop or a close', async (t) => {
  const replay = process.env.REFS_SYNCED_MODEL_SEED;
  const seed = replay === undefined ? Date.now() % 2 ** 31 : Number(replay);
  const scenario = fc.record({
    refs: fc.uniqueArray(fc.record({ name: fc.constantFrom(...NAMES), keyed: fc.boolean() }), {
      minLength: 1,
      maxLength: 6,
      selector: (each) => `${each.name}${each.keyed}`,
    }),
    synced: fc.subarray([...NAMES.map((name) => `${name}:whole`), ...NAMES.map((name) => `${name}:keyed`)]),
    steps: fc.array(step, { maxLength: 12 }),
  });
  const property = fc.asyncProperty(scenario, async ({ refs: drawn, synced: drawnSynced, steps }) => {
    const refs = drawn.map(({ name, keyed }) => ref(name, keyed));
    const synced = new Set(
      drawnSynced.map((each) => {
        const [name, how] = each.split(':');
        return useKey(ref(name!, how === 'keyed'));
      }),
    );
    const expected = modelOutcome(refs, synced, steps);
    const actual = await realOutcome(refs, synced, steps);
    if (actual !== expected) throw new Error(`expected ${expected}, got ${actual}`);
  });
  const result = await fc.check(property, { numRuns: 500, seed });
  t.log(`500 runs, seed ${seed} (replay: REFS_SYNCED_MODEL_SEED=${seed})`);
  if (result.failed) t.fail(fc.defaultReportMessage(result) ?? `failed with seed ${seed}`);
  else t.pass();
});
