// The dependency registry's model-based check: random interleavings of refs, writes and API faults against a trivial model.
import fc from 'fast-check';
import { Subscription } from 'rxjs';
import { VirtualClock } from '../../../test/support/virtual-time.js';
import { contentHash } from '../content-hash.js';
import { keyDigests, keysHash } from '../key-digests.js';
import { DependencyRegistry } from '../registry.js';
import { RegistryDependencySource } from '../registry-source.js';
import { refKey, type DependencyRef, type DependencyState } from '../source.js';
import { FakeDependencyApi } from './fake-dependency-api.js';

const NAMESPACE = 'ns';
const NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p'] as const;
type Name = (typeof NAMES)[number];
/**
 * The owners that acquire refs through the reconcile's {@link RegistryDependencySource}: CustomApps (`namespace/name`)
 * and workloads opted in by annotation (`Kind/namespace/name`), sharing the registry's refs.
 */
const OWNERS = ['ns/app', 'ns/other', 'Deployment/ns/web', 'StatefulSet/ns/db', 'DaemonSet/ns/agent'] as const;
type Owner = (typeof OWNERS)[number];
/** The keys a write may change one of, and an owner may read some of. */
const KEYS = ['x', 'y'] as const;
type Key = (typeof KEYS)[number];
/** What an owner reads: the whole object (undefined), or some keys. */
type View = readonly Key[] | undefined;
const VIEWS: readonly View[] = [undefined, ['x'], ['y'], ['x', 'y']];
const viewText = (view: View): string => (view ? `[${view.join(',')}]` : '');

/** One step of a run: what a user, the API server or time does next. */
export type Step =
  /** A new owner of `name`: of the whole object, or with `keys` of these keys alone (env `configMapKeyRef`, volume `items`). */
  | { readonly type: 'acquire'; readonly name: Name; readonly keys?: readonly Key[] }
  | { readonly type: 'delete'; readonly name: Name }
  /** One owner of `name` lets go, or with `every` all of them at once (the entry goes; a later acquire makes a new one). */
  | { readonly type: 'release'; readonly name: Name; readonly every?: boolean }
  /** Replaces the object's data with `{ key: value }`; with `key`, sets that key alone and keeps the others. */
  | { readonly type: 'write'; readonly name: Name; readonly value: string; readonly key?: Key }
  /** What a Helm upgrade does: write every object of the namespace, referenced or not; the watches see it later. */
  | { readonly type: 'rewrite'; readonly value: string }
  /** What a GitOps apply does: write these ConfigMaps, let the watches see it, then reference them all. */
  | { readonly type: 'apply'; readonly names: readonly Name[]; readonly value: string }
  /** Owners that arrive together (a cold start, a sync of CustomApps): reference these names, one after another. */
  | { readonly type: 'reference'; readonly names: readonly Name[] }
  /** A new owner of the object written or deleted last that nobody has acquired (a CustomApp for a ConfigMap just made). */
  | { readonly type: 'acquireChanged' }
  | { readonly type: 'deliver'; readonly index: number; readonly count: number }
  | { readonly type: 'answerList' | 'failList' | 'bookmark'; readonly index: number }
  /** Answers the list that arrived last: the lists sent before it stay slow. */
  | { readonly type: 'answerNewest' }
  | { readonly type: 'endWatch'; readonly index: number; readonly how: 'closed' | 'reset' | 'gone' }
  | { readonly type: 'compact' | 'deliverAll' }
  /**
   * Every open watch's window passes at once (`FakeDependencyApi.expire`): each relists, losing the events it was
   * owed, and the relists are answered at once while the lists sent before them (snapshots) stay slow.
   */
  | { readonly type: 'expire' }
  /** The system comes to rest (every answer and event released) and every acquired ref must say its object's state. */
  | { readonly type: 'settle' }
  | { readonly type: 'advance'; readonly ms: number }
  /** A reconcile of `owner` (a CustomApp or a workload): it acquires exactly these names from now on (none: it releases). */
  | { readonly type: 'use'; readonly owner: Owner; readonly names: readonly Name[] }
  /** `owner` deleted or opted out: everything it has acquired is released. */
  | { readonly type: 'releaseOwner'; readonly owner: Owner };

const index = fc.nat({ max: 15 });
const value = fc.constantFrom('1', '2', '3');

/** Every kind of step, with the arbitrary of its arguments, over the names a run plays with. */
function stepKinds(names: readonly Name[]): readonly fc.Arbitrary<Step>[] {
  const name = fc.constantFrom(...names);
  // Bursts of at most 3: enough to cross a low threshold in one step, few enough to leave names nobody holds.
  const burst = fc.subarray([...names], { minLength: 1, maxLength: 3 });
  return [
    fc.record(
      { type: fc.constant('acquire' as const), name, keys: fc.constantFrom<readonly Key[]>(['x'], ['y'], ['x', 'y']) },
      { requiredKeys: ['type', 'name'] },
    ),
    fc.record({ type: fc.constant('release' as const), name, every: fc.boolean() }),
    fc.record(
      { type: fc.constant('write' as const), name, value, key: fc.constantFrom(...KEYS) },
      { requiredKeys: ['type', 'name', 'value'] },
    ),
    fc.record({ type: fc.constant('delete' as const), name }),
    fc.record({ type: fc.constant('rewrite' as const), value }),
    fc.record({ type: fc.constant('apply' as const), names: burst, value }),
    fc.record({ type: fc.constant('reference' as const), names: burst }),
    fc.record({ type: fc.constant('acquireChanged' as const) }),
    fc.record({ type: fc.constant('deliver' as const), index, count: fc.integer({ min: 1, max: 3 }) }),
    fc.record({ type: fc.constant('deliverAll' as const) }),
    fc.record({ type: fc.constant('answerList' as const), index }),
    fc.record({ type: fc.constant('answerNewest' as const) }),
    fc.record({ type: fc.constant('failList' as const), index }),
    fc.record({ type: fc.constant('bookmark' as const), index }),
    fc.record({ type: fc.constant('endWatch' as const), index, how: fc.constantFrom('closed', 'reset', 'gone') }),
    fc.record({ type: fc.constant('compact' as const) }),
    fc.record({ type: fc.constant('expire' as const) }),
    fc.record({ type: fc.constant('settle' as const) }),
    fc.record({ type: fc.constant('advance' as const), ms: fc.constantFrom(1, 500, 2_000, 40_000) }),
    fc.record({ type: fc.constant('use' as const), owner: fc.constantFrom(...OWNERS), names: fc.subarray([...names], { maxLength: 3 }) }),
    fc.record({ type: fc.constant('releaseOwner' as const), owner: fc.constantFrom(...OWNERS) }),
  ];
}

/**
 * Step sequences drawn as swarm testing does: each run first draws how many names it plays with (8 to 16) and a
 * weight from 0 to 4 for every kind of step (acquire at least 1), then its steps with those weights. Runs that leave
 * some kinds out, or favour a few, reach deep interleavings (a slow list, then a burst of refs and writes) far more
 * often than one fixed mix does. Names beyond a run's own stay unreferenced objects of the namespace, which only
 * `rewrite` writes and only `acquireChanged` references.
 */
export function stepsArbitrary(maxSteps: number): fc.Arbitrary<Step[]> {
  return fc.integer({ min: 8, max: NAMES.length }).chain((count) => {
    const kinds = stepKinds(NAMES.slice(0, count));
    return fc.tuple(...kinds.map((_, at) => fc.integer({ min: at === 0 ? 1 : 0, max: 4 }))).chain((weights) =>
      fc.array(fc.oneof(...kinds.flatMap((arbitrary, at) => (weights[at]! > 0 ? [{ weight: weights[at]!, arbitrary }] : []))), {
        maxLength: maxSteps,
        size: 'max',
      }),
    );
  });
}

/** The registry's switch points: collapse past `collapse` refs, split below `split`. */
export interface Thresholds {
  readonly collapse: number;
  readonly split: number;
}

/**
 * Low thresholds, so that a handful of names crosses them back and forth; a collapse threshold of 1 twice as often
 * as 2 or 3, since it takes the fewest refs to reach a namespace snapshot in flight.
 */
export const thresholdsArbitrary: fc.Arbitrary<Thresholds> = fc
  .constantFrom(1, 1, 2, 3)
  .chain((collapse) => fc.record({ collapse: fc.constant(collapse), split: fc.integer({ min: 0, max: collapse }) }));

/** What a state says, as the model compares it. */
function stateText(state: DependencyState | undefined): string {
  if (!state) return 'unsynced';
  return state.exists ? `present ${state.hash.slice(0, 12)}` : 'absent';
}

/** One logical subscription of the test, and everything it received. */
interface Acquired {
  readonly name: Name;
  /** The keys it reads; undefined: the whole object. */
  readonly keys: View;
  subscription: Subscription;
  readonly received: string[];
  /** How far in the object's history the ref's entry had got when the subscription was made (it starts there). */
  readonly from: number;
}

/** A macrotask turn: every promise callback the previous step set off has run. */
function drained(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Runs `steps` against a registry (with the given thresholds) whose watches are the real watchers over
 * a {@link FakeDependencyApi}, then lets everything settle with no more faults and checks the model:
 * - every acquired subscription's last state is the object's current state (present with its content hash, or absent);
 * - what each one received is, in order, a subsequence of the states the object went through, starting no earlier
 *   than the ref had got when it subscribed (never an older state after a newer one: no stale list wins over a newer
 *   event), checked on arrival, released refs included;
 * - the owners' refs (CustomApps and workloads through a {@link RegistryDependencySource} on the same registry): after
 *   every step its owners are exactly the model's (each ref's owners, across both domains, by the owners' last
 *   `use`), and at rest each ref an owner has acquired says its object's state, in the source's `state` and last `changes`;
 * - the physical watches are exactly what the acquired refs need (a subscription's or an owner's): one per acquired ref, or
 *   one for the namespace and no other, all synced, and the server has exactly those watches open;
 * - after everything is released, no watch is open and no list is pending.
 * Throws with a description of the first violation.
 */
export async function runRegistryModel(steps: readonly Step[], thresholds: Thresholds = { collapse: 2, split: 2 }): Promise<void> {
  const api = new FakeDependencyApi(NAMESPACE);
  const clock = new VirtualClock();
  const registry = new DependencyRegistry({
    client: api,
    // Namespace lists of 3 objects per page: a ref can be acquired, and an object written, between two pages of one list.
    watch: { timeoutSeconds: 300, pageSize: 3, maxPageSize: 3 },
    scheduler: clock,
    random: () => 0.5,
    collapseThreshold: thresholds.collapse,
    splitThreshold: thresholds.split,
  });
  /**
   * Every state each name went through as each view sees it (keyed by name and view), from "absent" before its first
   * creation: a view of some keys moves only when one of its keys does.
   */
  const histories = new Map<string, string[]>(NAMES.flatMap((each) => VIEWS.map((view) => [each + viewText(view), ['absent']])));
  const regressions: string[] = [];
  const truth = (each: Name, view: View = undefined): string => {
    const object = api.current(each);
    if (!object) return 'absent';
    const hash = view ? keysHash('ConfigMap', keyDigests('ConfigMap', undefined, object), view) : contentHash(object);
    return `present ${hash.slice(0, 12)}`;
  };
  /** The reconcile's view on the same registry, and the trivial model of what each owner has acquired. */
  const source = new RegistryDependencySource(registry);
  const uses = new Map<Owner, ReadonlySet<Name>>();
  const lastChange = new Map<string, string>();
  source.changes.subscribe((state) => lastChange.set(refKey(state.ref), stateText(state)));
  const ref = (each: Name): DependencyRef => ({ kind: 'ConfigMap', namespace: NAMESPACE, name: each });
  const ownedNames = (): Name[] => [...new Set([...uses.values()].flatMap((names) => [...names]))];
  /** How the source's owners differ from the model's, or undefined when they match. */
  const ownersMismatch = (): string | undefined => {
    const model = new Map<string, string[]>();
    for (const [owner, names] of uses)
      for (const each of names) model.set(refKey(ref(each)), [...(model.get(refKey(ref(each))) ?? []), owner]);
    const text = (entries: Iterable<[string, Iterable<string>]>): string =>
      JSON.stringify([...entries].map(([key, owners]) => [key, [...owners].sort()]).sort());
    const [expected, actual] = [text(model), text(source.owners())];
    return expected === actual ? undefined : `the owners are ${actual}, the model ${expected}`;
  };
  /** How far each name's entry has got in each view's history: the latest state any subscriber of the view received. */
  const progress = new Map<string, number>();
  const acquired: Acquired[] = [];
  const acquire = (each: Name, keys: View = undefined): void => {
    const received: string[] = [];
    const id = each + viewText(keys);
    const entry: Acquired = { name: each, keys, subscription: Subscription.EMPTY, received, from: progress.get(id) ?? 0 };
    let at = entry.from;
    const history = histories.get(id)!;
    // Checked on arrival: each state is in the view's history, at or after the one before it, and differs from the
    // one before it (an owner of some keys hears nothing of a change of another key).
    const ref = { kind: 'ConfigMap' as const, namespace: NAMESPACE, name: each, ...(keys ? { keys } : {}) };
    entry.subscription = registry.acquire(ref).subscribe((state) => {
      const text = stateText(state);
      if (received.at(-1) === text) regressions.push(`${id}: received "${text}" twice in a row: an emission without a change`);
      received.push(text);
      const found = history.indexOf(text, at);
      if (found < 0) {
        regressions.push(
          `${id}: received ${JSON.stringify(received)}, not in the order of its history ${JSON.stringify(history.slice(entry.from))}`,
        );
        return;
      }
      at = found;
      progress.set(id, Math.max(progress.get(id) ?? 0, found));
    });
    acquired.push(entry);
  };
  const release = (each: Name): void => {
    const at = acquired.findIndex((entry) => entry.name === each);
    if (at >= 0) acquired.splice(at, 1)[0]!.subscription.unsubscribe();
    // The last owner gone, the entry is gone: a new one may start from a list older than what this one had seen,
    // as long as the watch that follows that list delivers everything after it (the final check says it did).
    if (!acquired.some((entry) => entry.name === each)) for (const view of VIEWS) progress.delete(each + viewText(view));
  };
  /** The names written or deleted, the latest last, each once. */
  const changed: Name[] = [];
  const written = (each: Name): void => {
    if (changed.includes(each)) changed.splice(changed.indexOf(each), 1);
    changed.push(each);
    for (const view of VIEWS) {
      const history = histories.get(each + viewText(view))!;
      if (history.at(-1) !== truth(each, view)) history.push(truth(each, view));
    }
  };

  /** How the watches open at the server differ from the streams the registry counts, or undefined when they match. */
  const watchesMismatch = (): string | undefined => {
    const open = JSON.stringify(api.openWatches().sort());
    const served = JSON.stringify(
      registry
        .streams()
        .map((stream) => stream.name ?? '*')
        .sort(),
    );
    return open === served ? undefined : `the server has the watches ${open} open, the registry ${served}`;
  };

  /**
   * Quiescence: no more faults; answers, delivers and lets the backoff timers run until nothing moves. Then every
   * acquired ref must say its object's state, and no ref may have gone back in its history. A run checks this at its
   * end and at each `settle` step: a stale state must not survive a moment of rest, even if a later write happens
   * to bring the object back to it.
   */
  const settled = async (): Promise<void> => {
    // A watcher between two attempts (backing off after a second 410 without progress) has no watch open at the
    // server: rest also waits for every stream the registry counts to be open again.
    const busy = (): boolean => api.pendingLists > 0 || api.undelivered > 0 || watchesMismatch() !== undefined;
    for (let round = 0; round < 50 && (busy() || round < 3); round += 1) {
      api.answerAll();
      api.deliverAll();
      await drained();
      clock.advance(31_000);
      await drained();
    }
    if (api.pendingLists > 0 || api.undelivered > 0) {
      throw new Error(`no quiescence: ${api.pendingLists} lists pending, ${api.undelivered} events undelivered`);
    }

    for (const entry of acquired) {
      const last = entry.received.at(-1);
      if (last !== truth(entry.name, entry.keys)) {
        throw new Error(
          `${entry.name}${viewText(entry.keys)}: the registry says "${last ?? 'nothing'}", the object is ${truth(entry.name, entry.keys)} (received ${JSON.stringify(entry.received)})`,
        );
      }
    }
    if (regressions.length > 0) throw new Error(regressions[0]);
    for (const each of ownedNames()) {
      const said = stateText(await source.state(ref(each)));
      const changed = lastChange.get(refKey(ref(each)));
      if (said !== truth(each) || changed !== truth(each)) {
        throw new Error(
          `${each}, acquired by ${JSON.stringify([...(source.owners().get(refKey(ref(each))) ?? [])])}: the source says "${said}" and last changed to "${changed}", the object is ${truth(each)}`,
        );
      }
    }
  };

  try {
    for (const step of steps) {
      switch (step.type) {
        case 'acquire':
          acquire(step.name, step.keys);
          break;
        case 'release':
          do release(step.name);
          while (step.every && acquired.some((entry) => entry.name === step.name));
          break;
        case 'write':
          api.write(step.name, step.key ? { ...api.current(step.name)?.data, [step.key]: step.value } : { key: step.value });
          written(step.name);
          break;
        case 'rewrite':
          for (const each of NAMES) {
            api.write(each, { key: step.value });
            written(each);
          }
          break;
        case 'delete':
          api.remove(step.name);
          written(step.name);
          break;
        case 'apply':
          for (const each of step.names) {
            api.write(each, { key: step.value });
            written(each);
          }
          api.deliverAll();
          await drained();
          for (const each of step.names) acquire(each);
          break;
        case 'reference':
          for (const each of step.names) acquire(each);
          break;
        case 'deliver':
          api.deliver(step.index, step.count);
          break;
        case 'deliverAll':
          api.deliverAll();
          break;
        case 'answerList':
          api.answerList(step.index);
          break;
        case 'acquireChanged': {
          const unacquired = changed.findLast((each) => !acquired.some((entry) => entry.name === each));
          if (unacquired) acquire(unacquired);
          break;
        }
        case 'answerNewest':
          api.answerNewest();
          break;
        case 'failList':
          api.failList(step.index);
          break;
        case 'bookmark':
          api.bookmark(step.index);
          break;
        case 'endWatch':
          api.endWatch(step.index, step.how);
          break;
        case 'compact':
          api.compact();
          break;
        case 'advance':
          clock.advance(step.ms);
          break;
        case 'expire': {
          const older = api.pendingLists;
          api.expire();
          await drained();
          while (api.pendingLists > older) api.answerList(older);
          break;
        }
        case 'settle':
          await settled();
          break;
        case 'use':
          source.use(step.owner, step.names.map(ref));
          if (step.names.length === 0) uses.delete(step.owner);
          else uses.set(step.owner, new Set(step.names));
          break;
        case 'releaseOwner':
          source.release(step.owner);
          uses.delete(step.owner);
          break;
      }
      const mismatch = ownersMismatch();
      if (mismatch) throw new Error(`after ${JSON.stringify(step)}: ${mismatch}`);
      await drained();
    }

    await settled();

    const acquiredNames = JSON.stringify([...new Set([...acquired.map((entry) => entry.name), ...ownedNames()])].sort());
    const streams = registry.streams();
    const perObject = JSON.stringify(streams.flatMap((stream) => (stream.scope === 'object' ? [stream.name!] : [])).sort());
    const perNamespace = streams.filter((stream) => stream.scope === 'namespace').length;
    const matches =
      acquiredNames === '[]'
        ? streams.length === 0
        : perNamespace === 0
          ? perObject === acquiredNames
          : perNamespace === 1 && perObject === '[]';
    if (!matches)
      throw new Error(`streams: ${perNamespace} per namespace and ${perObject} per object for the acquired refs ${acquiredNames}`);
    if (streams.some((stream) => !stream.synced)) throw new Error(`a stream is not synced after quiescence: ${JSON.stringify(streams)}`);
    const mismatch = watchesMismatch();
    if (mismatch) throw new Error(mismatch);

    for (const entry of [...acquired]) release(entry.name);
    for (const owner of OWNERS) source.release(owner);
    uses.clear();
    await drained();
    if (registry.streams().length > 0 || api.openWatches().length > 0 || api.pendingLists > 0) {
      throw new Error(
        `after releasing everything: ${registry.streams().length} streams, ${api.openWatches().length} watches open, ${api.pendingLists} lists pending`,
      );
    }
  } finally {
    for (const entry of acquired) entry.subscription.unsubscribe();
    source.close();
    registry.close();
  }
}

/** Options of {@link checkRegistryModel}. */
export interface ModelCheckOptions {
  /** How many random runs. */
  readonly numRuns: number;
  /** Replays a failure: the seed fast-check printed. @default a fresh seed */
  readonly seed?: number;
  /** With `seed`, the shrink path fast-check printed. */
  readonly path?: string;
  /** Steps per run at most. @default 60 */
  readonly maxSteps?: number;
}

/**
 * Checks {@link runRegistryModel} over `numRuns` random step sequences. A failure throws fast-check's report: the
 * seed and path to replay it (`seed`/`path`, or `REGISTRY_MODEL_SEED`/`REGISTRY_MODEL_PATH` in the test) and the
 * shrunk counterexample. Answers the seed used.
 */
export async function checkRegistryModel(options: ModelCheckOptions): Promise<number> {
  const seed = options.seed ?? (Date.now() ^ (Math.random() * 0x100000000)) | 0;
  await fc.assert(
    fc.asyncProperty(thresholdsArbitrary, stepsArbitrary(options.maxSteps ?? 60), (thresholds, steps) =>
      runRegistryModel(steps, thresholds),
    ),
    { numRuns: options.numRuns, seed, path: options.path, endOnFailure: false, includeErrorInReport: true },
  );
  return seed;
}
