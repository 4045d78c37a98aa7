// refsSynced: the workers wait for the batched refs to sync, and for no longer than a list failing, the bound, a stop or a close.
import test from 'ava';
import { Subject } from 'rxjs';
import { settle, VirtualClock } from '../../test/support/virtual-time.js';
import type { DependencyRef, DependencySource, DependencyState } from '../dependencies/source.js';
import { useKey } from '../dependencies/source.js';
import { refsSynced, REFS_SYNC_TIMEOUT_MS, type RefsSyncOutcome } from './refs-synced.js';

const cm = (name: string, keys?: string[]): DependencyRef => ({ kind: 'ConfigMap', namespace: 'big', name, ...(keys ? { keys } : {}) });
const present = (ref: DependencyRef): DependencyState => ({ ref, exists: true, hash: 'h', resourceVersion: '1' });

/** The part of a DependencySource the wait reads: `changes`, and `state` from what has synced. */
function source(synced: readonly DependencyRef[] = []): { source: DependencySource; changes: Subject<DependencyState> } {
  const states = new Map(synced.map((ref) => [useKey(ref), present(ref)]));
  const changes = new Subject<DependencyState>();
  const state = async (ref: DependencyRef): Promise<DependencyState | undefined> => states.get(useKey(ref));
  return { source: { changes, state } as unknown as DependencySource, changes };
}

/** Starts the wait and records its outcome once it ends. */
function waiting(
  from: DependencySource,
  refs: readonly DependencyRef[],
  extra: { listFailures?: Subject<unknown>; abort?: AbortController } = {},
): { clock: VirtualClock; outcome: () => RefsSyncOutcome | undefined } {
  const clock = new VirtualClock();
  let outcome: RefsSyncOutcome | undefined;
  void refsSynced(from, refs, {
    scheduler: clock,
    signal: (extra.abort ?? new AbortController()).signal,
    listFailures: extra.listFailures,
  }).then((value) => {
    outcome = value;
  });
  return { clock, outcome: () => outcome };
}

test('ends once every ref has emitted its first state, one already synced before the wait counting at once', async (t) => {
  const refs = [cm('a'), cm('b'), cm('b', ['K'])];
  const { source: from, changes } = source([refs[0]!]);
  const wait = waiting(from, refs);
  await settle();
  changes.next(present(refs[1]!));
  await settle();
  t.is(wait.outcome(), undefined, 'b with its keys is a ref of its own, not synced yet');
  changes.next(present(cm('unrelated')));
  await settle();
  t.is(wait.outcome(), undefined);
  changes.next(present(refs[2]!));
  await settle();
  t.is(wait.outcome(), 'synced');
});

test('no refs: nothing to wait for', async (t) => {
  t.is(await refsSynced(source().source, [], { scheduler: new VirtualClock(), signal: new AbortController().signal }), 'synced');
});

test('a ref that never syncs holds the workers for the bound, no longer', async (t) => {
  const wait = waiting(source().source, [cm('a')]);
  await settle();
  wait.clock.advance(REFS_SYNC_TIMEOUT_MS - 1);
  await settle();
  t.is(wait.outcome(), undefined);
  wait.clock.advance(1);
  await settle();
  t.is(wait.outcome(), 'timeout');
});

test('a list failing ends the wait at once: its refs stay unknown until someone fixes it', async (t) => {
  const listFailures = new Subject<unknown>();
  const wait = waiting(source().source, [cm('a')], { listFailures });
  await settle();
  listFailures.next({ kind: 'ConfigMap', namespace: 'big' });
  await settle();
  t.is(wait.outcome(), 'list failing');
});

test('the operator stopping, or the source closing, ends the wait', async (t) => {
  const abort = new AbortController();
  const stopped = waiting(source().source, [cm('a')], { abort });
  abort.abort();
  await settle();
  t.is(stopped.outcome(), 'stopping');
  const aborted = new AbortController();
  aborted.abort();
  t.is(await refsSynced(source().source, [cm('a')], { scheduler: new VirtualClock(), signal: aborted.signal }), 'stopping');
  const { source: closing, changes } = source();
  const closed = waiting(closing, [cm('a')]);
  changes.complete();
  await settle();
  t.is(closed.outcome(), 'closed');
});
