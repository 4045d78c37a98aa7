// The rollout budget split among shards across a handoff: a known gap, kept as a failing test until it is closed.
import test from 'ava';
import pino from 'pino';
import { Subject } from 'rxjs';
import { VirtualClock } from '../../test/support/virtual-time.js';
import { RolloutBudget } from '../governance/rollout-budget.js';
import type { Lease } from '../kube/objects.js';
import { ownerOf } from './ring.js';
import { RING_VIEW_ANNOTATION, Shard } from './shard.js';

const LIMIT = 2;

function lease(name: string, renewal: number, ack?: readonly string[]): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: 'ns', annotations: { [RING_VIEW_ANNOTATION]: ack ? JSON.stringify(ack) : '' } },
    spec: {
      holderIdentity: `${name}.0`,
      leaseDurationSeconds: 3,
      renewTime: `2026-01-01T00:00:${String(renewal).padStart(2, '0')}.000000Z`,
    },
  };
}

/** A shard with its own budget, fed the same ring snapshots as the others. */
function member(name: string, clock: VirtualClock, ring: Subject<readonly Lease[]>): { shard: Shard; budget: RolloutBudget } {
  const shard = new Shard({
    member: name,
    leases$: ring,
    monotonicNow: () => clock.now(),
    scheduler: clock,
    defaultLeaseDurationMs: 3_000,
    logger: pino({ level: 'silent' }),
  });
  const budget = new RolloutBudget(LIMIT);
  shard.viewsChanged$.subscribe(() => budget.setShare(shard.budgetShare(LIMIT)));
  shard.start({ isLeader: true, validUntil: Number.POSITIVE_INFINITY, renewNow: () => undefined }, async () => undefined);
  return { shard, budget };
}

const turns = async (): Promise<void> => {
  for (let turn = 0; turn < 20; turn += 1) await Promise.resolve();
};

test.failing('a rollout in progress that moves to a shard whose share is full still counts against the cluster-wide budget', async (t) => {
  const clock = new VirtualClock();
  const ring = new Subject<readonly Lease[]>();
  const [a, b, c] = ['a', 'b', 'c'].map((name) => member(name, clock, ring)) as [
    ReturnType<typeof member>,
    ReturnType<typeof member>,
    ReturnType<typeof member>,
  ];
  // k rolls on a while a and b share the ring; c joins, takes k over, and its share of 2 among 3 is 0.
  const k = Array.from({ length: 200 }, (_, index) => `ns/app-${index}`).find(
    (key) => ownerOf(key, ['a', 'b']) === 'a' && ownerOf(key, ['a', 'b', 'c']) === 'c',
  )!;
  const j = Array.from({ length: 200 }, (_, index) => `ns/other-${index}`).find((key) => ownerOf(key, ['a', 'b', 'c']) === 'b')!;
  ring.next([lease('a', 1, ['a', 'b']), lease('b', 1, ['a', 'b'])]);
  t.like(a.budget.admit(k, 1), { granted: true });
  a.budget.settle(k, { rolling: true, waiting: false });
  t.like(b.budget.admit(j, 1), { granted: true });
  b.budget.settle(j, { rolling: true, waiting: false });

  ring.next([lease('a', 1, ['a', 'b']), lease('b', 1, ['a', 'b']), lease('c', 1)]);
  await turns();
  // Every member acknowledges [a, b, c]; each rebuilds its budget from its own objects: k's rollout is c's now.
  ring.next([lease('a', 2, ['a', 'b', 'c']), lease('b', 2, ['a', 'b', 'c']), lease('c', 2, ['a', 'b', 'c'])]);
  a.budget.rebuild([], []);
  c.budget.rebuild([k], []);
  t.is(c.shard.budgetShare(LIMIT), 0);
  t.is(a.shard.budgetShare(LIMIT), 1);

  // a's share is free, so a grants a new rollout while k's still runs on c.
  a.budget.admit('ns/new', 2);
  const inProgress = a.budget.inProgress + b.budget.inProgress + c.budget.inProgress;
  t.true(inProgress <= LIMIT, `${inProgress} rollouts in progress cluster-wide, the budget is ${LIMIT}`);
});
