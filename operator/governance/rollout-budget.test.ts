// The rollout budget alone: the limit, first in first out, the keys it lets go when a slot frees, and its rebuild.
import test from 'ava';
import { RolloutBudget } from './rollout-budget.js';

/** A budget and everything it emitted on `eligible`. */
function budget(limit: number): { budget: RolloutBudget; eligible: string[] } {
  const made = new RolloutBudget(limit);
  const eligible: string[] = [];
  made.eligible.subscribe((key) => eligible.push(key));
  return { budget: made, eligible };
}

test('grants up to the limit, then queues in arrival order with 1-based positions', (t) => {
  const { budget: b } = budget(2);
  t.like(b.admit('a', 1), { granted: true });
  t.like(b.admit('b', 2), { granted: true });
  t.deepEqual(b.admit('c', 3), { granted: false, position: 1, queued: 1, inProgress: 2, since: 3 });
  t.deepEqual(b.admit('d', 4), { granted: false, position: 2, queued: 2, inProgress: 2, since: 4 });
  t.like(b.admit('c', 9), { granted: false, position: 1, since: 3 }, 'asking again keeps the place and its time');
  t.is(b.inProgress, 2);
});

test('a freed slot emits the head of the queue once, and only the head gets it', (t) => {
  const { budget: b, eligible } = budget(1);
  b.admit('a', 1);
  b.admit('b', 2);
  b.admit('c', 3);
  t.deepEqual(eligible, []);
  b.settle('a', { rolling: false, waiting: false });
  t.deepEqual(eligible, ['b']);
  t.like(b.admit('c', 4), { granted: false, position: 2 }, 'c may not pass b');
  b.settle('x', { rolling: false, waiting: false });
  t.deepEqual(eligible, ['b'], 'no second emission while b has not taken its slot');
  t.like(b.admit('b', 5), { granted: true });
  t.like(b.admit('c', 6), { granted: false, position: 1 });
});

test('a newcomer is not granted ahead of queued keys, even when their slots are free and they have not asked yet', (t) => {
  const { budget: b, eligible } = budget(2);
  b.admit('a', 1);
  b.admit('b', 2);
  b.admit('c', 3);
  b.admit('d', 4);
  b.settle('a', { rolling: false, waiting: false });
  b.settle('b', { rolling: false, waiting: false });
  t.deepEqual(eligible, ['c', 'd']);
  t.like(b.admit('e', 5), { granted: false, position: 3 });
  t.like(b.admit('d', 6), { granted: true }, 'the second of two free slots is d, even before c asks');
  t.like(b.admit('c', 7), { granted: true });
});

test('a queued key that is still rolling keeps its place and does not block the keys behind it', (t) => {
  const { budget: b, eligible } = budget(2);
  b.admit('a', 1);
  b.admit('b', 2);
  // a's content changed again while its rollout is in progress: it queues behind.
  t.like(b.wait('a', 3), { granted: false, position: 1 });
  t.like(b.admit('c', 4), { granted: false, position: 1 }, 'a is rolling: it is not counted ahead of c');
  b.settle('a', { rolling: true, waiting: true });
  b.settle('b', { rolling: false, waiting: false });
  t.deepEqual(eligible, ['c'], 'the free slot goes to c, since a cannot take it yet');
  t.like(b.admit('c', 5), { granted: true });
  b.settle('a', { rolling: false, waiting: true });
  t.deepEqual(eligible, ['c', 'a'], "a's own rollout is done: the slot it occupied is free, and it is first in line");
  t.like(b.admit('a', 6), { granted: true });
  t.like(b.admit('d', 7), { granted: false, position: 1, inProgress: 2 });
});

test('a slot is kept by the key it was granted to until a settle says it does not roll: a failed write retries in place', (t) => {
  const { budget: b } = budget(1);
  t.like(b.admit('a', 1), { granted: true });
  t.like(b.admit('b', 2), { granted: false });
  t.like(b.admit('a', 3), { granted: true }, 'a asks again (its update failed): it still occupies its slot');
  t.is(b.inProgress, 1);
  b.forget('a');
  t.like(b.admit('b', 4), { granted: true });
});

test('leaving the queue lets the next key go; forget frees both a slot and a place', (t) => {
  const { budget: b, eligible } = budget(1);
  b.admit('a', 1);
  b.admit('b', 2);
  b.admit('c', 3);
  b.settle('b', { rolling: false, waiting: false });
  t.like(b.admit('c', 4), { granted: false, position: 1 });
  b.forget('a');
  t.deepEqual(eligible, ['c']);
  t.deepEqual(b.snapshot(), { limit: 1, inProgress: [], queue: [{ key: 'c', since: 3 }] });
});

test('a limit of 0 grants everything at once and still counts what rolls', (t) => {
  const { budget: b, eligible } = budget(0);
  for (const key of ['a', 'b', 'c']) t.like(b.admit(key, 1), { granted: true });
  t.is(b.inProgress, 3);
  t.is(b.queued, 0);
  b.settle('a', { rolling: false, waiting: false });
  t.is(b.inProgress, 2);
  t.deepEqual(eligible, []);
});

test('rebuild orders the queue by the time each key joined, then by key, and lets go the keys free slots allow', (t) => {
  const { budget: b, eligible } = budget(2);
  b.admit('stale', 1);
  b.rebuild(
    ['rolling'],
    [
      { key: 'late', since: 30 },
      { key: 'b-early', since: 10 },
      { key: 'a-early', since: 10 },
    ],
  );
  t.deepEqual(b.snapshot(), {
    limit: 2,
    inProgress: ['rolling'],
    queue: [
      { key: 'a-early', since: 10 },
      { key: 'b-early', since: 10 },
      { key: 'late', since: 30 },
    ],
  });
  t.deepEqual(eligible, ['a-early'], 'one slot is free');
  t.like(b.admit('late', 40), { granted: false, position: 3 });
});

test('a limit that is not an integer ≥ 0 is refused, quoting it', (t) => {
  t.throws(() => new RolloutBudget(-1), { message: /limit -1 is not an integer ≥ 0/ });
  t.throws(() => new RolloutBudget(1.5), { message: /limit 1.5 is not/ });
});

test('keys that join in the same millisecond keep their arrival order, which is also the order a rebuild finds in their times', (t) => {
  const { budget: b } = budget(1);
  b.admit('a', 1);
  const zed = b.admit('z', 5);
  const bee = b.admit('b', 5);
  const cee = b.admit('c', 4);
  t.like(zed, { granted: false, position: 1, since: 5 });
  t.like(bee, { granted: false, position: 2, since: 6 }, 'one ms later: by name alone it would sort before z');
  t.like(cee, { granted: false, position: 3, since: 6 }, 'a clock gone back still joins at the back');
  const order = b.snapshot().queue.map((entry) => entry.key);
  t.deepEqual(order, ['z', 'b', 'c']);
  const rebuilt = new RolloutBudget(1);
  rebuilt.rebuild(['a'], b.snapshot().queue);
  t.deepEqual(
    rebuilt.snapshot().queue.map((entry) => entry.key),
    order,
    'the same order from the times alone',
  );
  rebuilt.close();
  b.close();
});

test('settleSlot (a reconcile that failed early): a rollout over frees its slot, a grant not yet written and a place are kept', (t) => {
  const { budget: b, eligible } = budget(1);
  b.admit('a', 1);
  b.settle('a', { rolling: true, waiting: false });
  b.admit('b', 2);
  b.admit('c', 3);
  b.settleSlot('b', false);
  t.deepEqual(
    b.snapshot().queue.map((entry) => entry.key),
    ['b', 'c'],
    'b keeps its place',
  );
  b.settleSlot('a', false);
  t.deepEqual(b.snapshot().inProgress, []);
  t.deepEqual(eligible, ['b']);
  t.like(b.admit('b', 4), { granted: true });
  b.settleSlot('b', false);
  t.deepEqual(b.snapshot().inProgress, ['b'], 'the grant is kept for the retry');
  b.settleSlot('b', true);
  b.settle('b', { rolling: false, waiting: false });
  t.deepEqual(eligible, ['b', 'c']);
});

test('a key let go but refused again (a resumed rollout took the slot first) is let go again when a slot frees', (t) => {
  const { budget: b, eligible } = budget(1);
  b.admit('a', 1);
  b.settle('a', { rolling: true, waiting: false });
  b.admit('b', 2);
  b.settle('a', { rolling: false, waiting: false });
  t.deepEqual(eligible, ['b']);
  // Before b asks again, a user resumes c's paused rollout: it occupies the slot.
  b.settle('c', { rolling: true, waiting: false });
  t.like(b.admit('b', 3), { granted: false, position: 1 });
  b.settle('c', { rolling: false, waiting: false });
  t.deepEqual(eligible, ['b', 'b'], 'b is told again: nobody else would reconcile it');
});

test("a share of the limit grants only that many; a share of 0 grants nothing new; a larger share lets the queue's head go", (t) => {
  const { budget: b, eligible } = budget(4);
  b.setShare(1);
  t.like(b.admit('a', 1), { granted: true });
  t.like(b.admit('b', 2), { granted: false, position: 1 });
  b.setShare(0);
  b.settle('a', { rolling: false, waiting: false });
  t.deepEqual(eligible, [], 'a share of 0 lets nobody go, though the slot freed');
  t.like(b.admit('c', 3), { granted: false, position: 2 });
  b.setShare(2);
  t.deepEqual(eligible, ['b', 'c'], 'a larger share emits the keys it lets go, in order');
  b.setShare(undefined);
  t.like(b.admit('b', 4), { granted: true });
});

test('slots occupied stay occupied when the share shrinks below them, and nothing new is granted until they end', (t) => {
  const { budget: b } = budget(3);
  b.admit('a', 1);
  b.admit('b', 2);
  b.settle('a', { rolling: true, waiting: false });
  b.settle('b', { rolling: true, waiting: false });
  b.setShare(1);
  t.is(b.inProgress, 2);
  t.like(b.admit('c', 3), { granted: false });
  b.settle('a', { rolling: false, waiting: false });
  t.like(b.admit('c', 4), { granted: false }, 'one still rolls: the share of 1 is full');
  b.settle('b', { rolling: false, waiting: false });
  t.like(b.admit('c', 5), { granted: true });
});

test('an unlimited budget stays unlimited whatever the share', (t) => {
  const { budget: b } = budget(0);
  b.setShare(0);
  t.like(b.admit('a', 1), { granted: true });
});
