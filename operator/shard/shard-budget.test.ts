// The rollout budget split among shards across a handoff: a rollout in progress that changes owner never leaves the count.
import test from 'ava';
import pino from 'pino';
import { Subject } from 'rxjs';
import { VirtualClock } from '../../test/support/virtual-time.js';
import { RolloutBudget } from '../governance/rollout-budget.js';
import type { Lease } from '../kube/objects.js';
import { ownerOf } from './ring.js';
import { Shard } from './shard.js';

const LIMIT = 2;

/**
 * A shard with its own budget, wired as the operator wires them: its count published, its share from the ring, and
 * before each acknowledgement the rollouts it gives up handed off and its budget rebuilt from its caches (the keys of
 * `rolling`, the Deployments rolling in the cluster, that it owns in the new view or still holds).
 */
function member(
  name: string,
  clock: VirtualClock,
  ring: Subject<readonly Lease[]>,
  rolling: ReadonlySet<string>,
): { name: string; shard: Shard; budget: RolloutBudget } {
  const shard = new Shard({
    member: name,
    leases$: ring,
    monotonicNow: () => clock.now(),
    scheduler: clock,
    defaultLeaseDurationMs: 3_000,
    logger: pino({ level: 'silent' }),
  });
  const budget = new RolloutBudget(LIMIT);
  shard.countRollouts(() => budget.inProgress);
  shard.viewsChanged$.subscribe(() => budget.setShare(shard.budgetShare(LIMIT)));
  shard.start({ isLeader: true, validUntil: Number.POSITIVE_INFINITY, renewNow: () => undefined }, async (view) => {
    const held = budget.snapshot().inProgress;
    shard.handOff(held, view);
    budget.rebuild(
      [...rolling].filter((key) => ownerOf(key, view) === name || held.includes(key)),
      [],
    );
  });
  return { name, shard, budget };
}

/** The ring as the watch shows it once each member's Lease carries what it publishes now (`renewal` makes each record new). */
function published(members: readonly ReturnType<typeof member>[], renewal: number): Lease[] {
  return members.map(({ name, shard }) => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: 'ns', annotations: shard.annotations() },
    spec: {
      holderIdentity: `${name}.0`,
      leaseDurationSeconds: 3,
      renewTime: `2026-01-01T00:00:${String(renewal).padStart(2, '0')}.000000Z`,
    },
  }));
}

const turns = async (): Promise<void> => {
  for (let turn = 0; turn < 20; turn += 1) await Promise.resolve();
};

test('a rollout in progress that moves to a shard whose share is full still counts against the cluster-wide budget', async (t) => {
  const clock = new VirtualClock();
  const ring = new Subject<readonly Lease[]>();
  const rolling = new Set<string>();
  const a = member('a', clock, ring, rolling);
  const b = member('b', clock, ring, rolling);
  // k rolls on a while a and b share the ring; c joins and takes k over, and its share of 2 among 3 is 0.
  const k = Array.from({ length: 200 }, (_, index) => `ns/app-${index}`).find(
    (key) => ownerOf(key, ['a', 'b']) === 'a' && ownerOf(key, ['a', 'b', 'c']) === 'c',
  )!;
  const j = Array.from({ length: 200 }, (_, index) => `ns/other-${index}`).find((key) => ownerOf(key, ['a', 'b', 'c']) === 'b')!;
  ring.next(published([a, b], 1));
  await turns();
  ring.next(published([a, b], 2));
  t.like(a.budget.admit(k, 1), { granted: true });
  a.budget.settle(k, { rolling: true, waiting: false });
  t.like(b.budget.admit(j, 1), { granted: true });
  b.budget.settle(j, { rolling: true, waiting: false });
  rolling.add(k).add(j);

  const c = member('c', clock, ring, rolling);
  ring.next(published([a, b, c], 3));
  await turns();
  // c's caches list k (rolling) before it acknowledges; a, having acknowledged, lets k go from its caches.
  ring.next(published([a, b, c], 4));
  a.budget.forget(k);
  t.is(c.shard.budgetShare(LIMIT), 0);

  // a's own part is free, but c runs one rollout beyond its share: a may not start a new one while k's runs.
  ring.next(published([a, b, c], 5));
  t.like(a.budget.admit('ns/new', 2), { granted: false });
  const inProgress = a.budget.inProgress + b.budget.inProgress + c.budget.inProgress;
  t.true(inProgress <= LIMIT, `${inProgress} rollouts in progress cluster-wide, the budget is ${LIMIT}`);
  // k's rollout ends: c publishes it, and a's part is its own again.
  rolling.delete(k);
  c.budget.settle(k, { rolling: false, waiting: false });
  ring.next(published([a, b, c], 6));
  t.is(a.shard.budgetShare(LIMIT), 1);
});

test('a shard counts the rollouts it hands off until their new owner acknowledges them', async (t) => {
  const clock = new VirtualClock();
  const ring = new Subject<readonly Lease[]>();
  const rolling = new Set<string>();
  const a = member('a', clock, ring, rolling);
  const k = Array.from({ length: 200 }, (_, index) => `ns/app-${index}`).find((key) => ownerOf(key, ['a', 'c']) === 'c')!;
  ring.next(published([a], 1));
  await turns();
  ring.next(published([a], 2));
  a.budget.admit(k, 1);
  a.budget.settle(k, { rolling: true, waiting: false });
  rolling.add(k);
  const c = member('c', clock, ring, rolling);
  // c's Lease appears before c saw the ring: it acknowledges nothing yet.
  ring.next([...published([a], 3), ...published([c], 3).map((lease) => ({ ...lease, metadata: { ...lease.metadata, annotations: {} } }))]);
  await turns();
  ring.next([...published([a], 4), ...published([c], 4).map((lease) => ({ ...lease, metadata: { ...lease.metadata, annotations: {} } }))]);
  a.budget.forget(k);
  t.is(a.shard.annotations()['app.example.com/ring-rollouts'], '1', 'given up, still counted: c has not acknowledged');
  ring.next(published([a, c], 5));
  t.is(c.shard.annotations()['app.example.com/ring-rollouts'], '1');
  t.is(a.shard.annotations()['app.example.com/ring-rollouts'], '0', "c's acknowledgement counts it now");
});
