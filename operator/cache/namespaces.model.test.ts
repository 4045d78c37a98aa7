// One cache over several namespaces' watchers (acrossNamespaces, then the reflector) against a trivial model, over random
// interleavings of writes, deletions, lists split in pages and relists of each namespace.
import test from 'ava';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import type { KubeObject } from '../kube/objects.js';
import type { WatcherEvent } from '../watch/events.js';
import { acrossNamespaces } from '../watch/namespaces.js';
import { reflect } from './reflector.js';
import { objectKey, Store } from './store.js';

const RUNS = Number(process.env.NAMESPACES_MODEL_RUNS ?? 2_000);
const NAMES = ['x', 'y', 'z'] as const;

/** What happens next: on the server (a write, a deletion), or to one namespace's watcher (a list begins, a page, its end). */
type Step =
  | { readonly type: 'write' | 'remove'; readonly namespace: number; readonly name: (typeof NAMES)[number] }
  | { readonly type: 'list' | 'page' | 'done'; readonly namespace: number };

/** One namespace's watcher as a server would drive it: listing a snapshot page by page, or watching. */
interface WatcherState {
  phase: 'not-started' | 'listing' | 'watching';
  /** The list in progress: the snapshot taken when it began, and how many of it were sent. */
  snapshot: KubeObject[];
  sent: number;
  /** Changes made while listing: a watch from the list's resourceVersion delivers them after it. */
  pending: WatcherEvent<KubeObject>[];
  /** The model: what this watcher has told, by name (its last list, then its changes). */
  told: Map<string, KubeObject> | undefined;
}

function stepsArbitrary(namespaces: number): fc.Arbitrary<Step[]> {
  const namespace = fc.integer({ min: 0, max: namespaces - 1 });
  const name = fc.constantFrom(...NAMES);
  return fc.array(
    fc.oneof(
      fc.record({ type: fc.constantFrom('write' as const, 'remove' as const), namespace, name }),
      fc.record({ type: fc.constantFrom('list' as const, 'page' as const, 'done' as const), namespace }),
    ),
    { maxLength: 80, size: 'max' },
  );
}

/**
 * Runs `steps` on namespaces `ns-0`…, and after each step checks the cache against the model: empty and not synced
 * until every namespace has listed once; from then on synced, and exactly what the watchers have told, all namespaces
 * together; and the changes the reflector emitted, applied in order, always give the cache (nothing lost or invented).
 */
function runModel(namespaceCount: number, steps: readonly Step[]): void {
  const namespaces = Array.from({ length: namespaceCount }, (_, index) => `ns-${index}`);
  const subjects = namespaces.map(() => new Subject<WatcherEvent<KubeObject>>());
  const store = new Store<KubeObject>();
  const mirror = new Map<string, KubeObject>();
  const subscription = acrossNamespaces(namespaces, (namespace) => subjects[namespaces.indexOf(namespace!)]!.asObservable())
    .pipe(reflect(store))
    .subscribe((change) => {
      if (change.type === 'apply') mirror.set(change.key, change.object);
      else mirror.delete(change.key);
    });
  const server = namespaces.map(() => new Map<string, KubeObject>());
  const watchers: WatcherState[] = namespaces.map(() => ({ phase: 'not-started', snapshot: [], sent: 0, pending: [], told: undefined }));
  let version = 0;
  const emit = (index: number, event: WatcherEvent<KubeObject>): void => {
    const watcher = watchers[index]!;
    if (event.type === 'apply') watcher.told?.set(event.object.metadata.name!, event.object);
    if (event.type === 'delete') watcher.told?.delete(event.object.metadata.name!);
    subjects[index]!.next(event);
  };
  const change = (index: number, event: WatcherEvent<KubeObject>): void => {
    const watcher = watchers[index]!;
    if (watcher.phase === 'watching') emit(index, event);
    else if (watcher.phase === 'listing') watcher.pending.push(event);
  };
  for (const step of steps) {
    const index = step.namespace;
    const watcher = watchers[index]!;
    const objects = server[index]!;
    switch (step.type) {
      case 'write': {
        const object = {
          metadata: {
            namespace: namespaces[index],
            name: step.name,
            uid: `${index}/${step.name}`,
            resourceVersion: String((version += 1)),
          },
        };
        objects.set(step.name, object);
        change(index, { type: 'apply', object });
        break;
      }
      case 'remove': {
        const object = objects.get(step.name);
        if (!object) break;
        objects.delete(step.name);
        change(index, { type: 'delete', object });
        break;
      }
      case 'list':
        // A list begins (the first, or a relist after a 410): a snapshot of now, anything seen since comes after it.
        Object.assign(watcher, { phase: 'listing', snapshot: [...objects.values()], sent: 0, pending: [] });
        subjects[index]!.next({ type: 'init' });
        break;
      case 'page':
        if (watcher.phase !== 'listing' || watcher.sent >= watcher.snapshot.length) break;
        subjects[index]!.next({ type: 'initApply', object: watcher.snapshot[watcher.sent]! });
        watcher.sent += 1;
        break;
      case 'done': {
        if (watcher.phase !== 'listing') break;
        for (const object of watcher.snapshot.slice(watcher.sent)) subjects[index]!.next({ type: 'initApply', object });
        watcher.told = new Map(watcher.snapshot.map((object) => [object.metadata.name!, object]));
        watcher.phase = 'watching';
        subjects[index]!.next({ type: 'initDone', resourceVersion: String(version) });
        for (const event of watcher.pending.splice(0)) emit(index, event);
        break;
      }
    }
    const allListed = watchers.every((each) => each.told !== undefined);
    const expected = allListed
      ? watchers.flatMap((each) => [...each.told!.values()]).map((object) => `${objectKey(object)}@${object.metadata.resourceVersion}`)
      : [];
    const cached = store.list().map((object) => `${objectKey(object)}@${object.metadata.resourceVersion}`);
    const mirrored = [...mirror.values()].map((object) => `${objectKey(object)}@${object.metadata.resourceVersion}`);
    const context = `after ${JSON.stringify(step)}`;
    if (store.synced !== allListed) throw new Error(`${context}: synced is ${store.synced}, every namespace listed is ${allListed}`);
    if (JSON.stringify(cached.sort()) !== JSON.stringify(expected.sort())) {
      throw new Error(`${context}: the cache holds ${JSON.stringify(cached)}, the watchers told ${JSON.stringify(expected)}`);
    }
    if (JSON.stringify(mirrored.sort()) !== JSON.stringify(cached)) {
      throw new Error(`${context}: the changes emitted give ${JSON.stringify(mirrored)}, the cache holds ${JSON.stringify(cached)}`);
    }
  }
  subscription.unsubscribe();
}

test('one cache over 2 or 3 namespaces holds exactly what their watchers told, once every namespace has listed, whatever the interleaving', (t) => {
  const replay = process.env.NAMESPACES_MODEL_SEED;
  const seed = replay === undefined ? (Date.now() ^ (Math.random() * 0x100000000)) | 0 : Number(replay);
  t.log(`${RUNS} runs, seed ${seed} (replay: NAMESPACES_MODEL_SEED=${seed})`);
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 3 }).chain((count) => fc.tuple(fc.constant(count), stepsArbitrary(count))),
      ([count, steps]) => runModel(count, steps),
    ),
    { numRuns: RUNS, seed, endOnFailure: false, includeErrorInReport: true },
  );
  t.pass();
});

test('the model sees a relist of one namespace drop nothing of another, and the first list wait for the last namespace', (t) => {
  t.notThrows(() =>
    runModel(2, [
      { type: 'write', namespace: 0, name: 'x' },
      { type: 'write', namespace: 1, name: 'y' },
      { type: 'list', namespace: 0 },
      { type: 'done', namespace: 0 },
      // ns-0 has listed; a change there waits with its list for ns-1's.
      { type: 'write', namespace: 0, name: 'z' },
      { type: 'list', namespace: 1 },
      { type: 'page', namespace: 1 },
      { type: 'done', namespace: 1 },
      // ns-0 relists while x is deleted: only ns-0 loses x; ns-1's y stays.
      { type: 'list', namespace: 0 },
      { type: 'remove', namespace: 0, name: 'x' },
      { type: 'page', namespace: 0 },
      { type: 'list', namespace: 1 },
      { type: 'done', namespace: 0 },
      { type: 'done', namespace: 1 },
    ]),
  );
});
