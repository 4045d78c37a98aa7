// One shard's state machine in virtual time, driven by hand-made snapshots of the ring: what it may act on, when, and its share.
import test from 'ava';
import pino from 'pino';
import { Subject } from 'rxjs';
import { VirtualClock } from '../../test/support/virtual-time.js';
import type { Lease } from '../kube/objects.js';
import { ownerOf, shareOf, viewOf } from './ring.js';
import {
  PREPARE_RETRY_MS,
  RING_ROLLOUTS_ANNOTATION,
  RING_VIEW_ANNOTATION,
  STALE_LEASE_DURATIONS,
  Shard,
  type ShardLease,
  type ShardOptions,
} from './shard.js';

const DURATION_MS = 3_000;
const KEYS = Array.from({ length: 40 }, (_, index) => `ns/app-${index}`);

/** A member's Lease as the watch shows it: its holder, a renewal counter (a new record each time), its acknowledged view. */
function lease(name: string, renewal: number, ack?: readonly string[], holder = `${name}.0`): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: 'ns', annotations: { [RING_VIEW_ANNOTATION]: ack ? JSON.stringify(ack) : '' } },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: DURATION_MS / 1000,
      renewTime: `2026-01-01T00:00:${String(renewal).padStart(2, '0')}.000000Z`,
    },
  };
}

/**
 * A shard named `member` on a virtual clock, its own Lease held until told otherwise, and what it asked of that Lease;
 * its caches hold `cached` (every key by default); `prepare` and `collect` as the manager's.
 */
function shardOf(
  member: string,
  {
    cached = KEYS,
    prepare,
    collect,
    onRenew,
  }: {
    cached?: readonly string[];
    prepare?: () => Promise<void>;
    collect?: ShardOptions['collect'];
    /** Called at each renewal its shard asks for (a publication). */
    onRenew?: (renewal: number) => void;
  } = {},
): {
  shard: Shard;
  ring: Subject<readonly Lease[]>;
  clock: VirtualClock;
  renewals: () => number;
  ready: string[];
} {
  const clock = new VirtualClock();
  const ring = new Subject<readonly Lease[]>();
  let renewals = 0;
  const own: ShardLease = {
    isLeader: true,
    get validUntil() {
      return clock.now() + 1_000;
    },
    renewNow: () => {
      renewals += 1;
      onRenew?.(renewals);
    },
  };
  const shard = new Shard({
    member,
    leases$: ring,
    monotonicNow: () => clock.now(),
    scheduler: clock,
    defaultLeaseDurationMs: DURATION_MS,
    logger: pino({ level: 'silent' }),
    cachedKeys: () => cached,
    collect,
  });
  const ready: string[] = [];
  shard.ready$.subscribe((key) => ready.push(key));
  shard.start(own, prepare);
  return { shard, ring, clock, renewals: () => renewals, ready };
}

/** Lets the handshake's promises run. */
const turns = async (): Promise<void> => {
  for (let turn = 0; turn < 20; turn += 1) await Promise.resolve();
};

/** Shard a alone on the ring with its view `[a]` acknowledged (it acts on every key), and a key b would own once it joins. */
async function aloneAcknowledged(): Promise<{ a: ReturnType<typeof shardOf>; ofB: string }> {
  const a = shardOf('a');
  a.ring.next([lease('a', 1)]);
  await turns();
  a.ring.next([lease('a', 2, ['a'])]);
  return { a, ofB: KEYS.find((key) => ownerOf(key, ['a', 'b']) === 'b')! };
}

test('a shard acts on nothing until its own Lease shows its acknowledgement, then on every key it owns alone', async (t) => {
  const { shard, ring, renewals } = shardOf('a');
  ring.next([lease('a', 1)]);
  await turns();
  t.deepEqual(shard.liveMembers, ['a']);
  t.is(renewals(), 1, 'it asked its Lease to publish the view');
  t.is(shard.annotations()[RING_VIEW_ANNOTATION], '["a"]');
  t.false(shard.enter(KEYS[0]!), 'published is not acknowledged: the watch has not shown it yet');
  ring.next([lease('a', 2, ['a'])]);
  t.true(KEYS.every((key) => shard.mayAct(key)));
});

test("a member that joins takes its keys only once the old owner's Lease shows it gave them up", async (t) => {
  const b = shardOf('b');
  // a acts alone on everything ([a] acknowledged); b joins.
  b.ring.next([lease('a', 1, ['a']), lease('b', 1)]);
  await turns();
  b.ring.next([lease('a', 1, ['a']), lease('b', 2, ['a', 'b'])]);
  const ofB = KEYS.filter((key) => ownerOf(key, ['a', 'b']) === 'b');
  t.true(ofB.length > 0);
  t.is(b.shard.annotations()[RING_VIEW_ANNOTATION], '["a","b"]');
  for (const key of ofB) t.false(b.shard.enter(key), `${key}: a still claims it`);
  t.deepEqual(b.ready, []);
  // a acknowledges [a, b]: its claims shrink to its own keys, and b's refused keys come back on ready$.
  b.ring.next([lease('a', 2, ['a', 'b']), lease('b', 2, ['a', 'b'])]);
  t.deepEqual(b.ready.sort(), [...ofB].sort());
  for (const key of ofB) t.true(b.shard.enter(key));
  for (const key of KEYS.filter((key) => !ofB.includes(key))) t.false(b.shard.mayAct(key), `${key} is a's`);
});

test('a shard gives keys up only after its reconciles on them ended, then acknowledges the view that moves them', async (t) => {
  const { a, ofB } = await aloneAcknowledged();
  t.true(a.shard.enter(ofB));
  // b joins: a stops starting b's keys at once, but keeps its acknowledgement of [a] while one is in flight.
  a.ring.next([lease('a', 2, ['a']), lease('b', 1)]);
  await turns();
  t.deepEqual(a.shard.liveMembers, ['a', 'b']);
  t.false(a.shard.mayAct(ofB));
  t.is(a.shard.annotations()[RING_VIEW_ANNOTATION], '["a"]', 'not acknowledged while a reconcile of a moved key runs');
  t.true(a.shard.inScope(ofB), 'its caches keep it meanwhile');
  a.shard.exit(ofB);
  await turns();
  t.is(a.shard.annotations()[RING_VIEW_ANNOTATION], '["a","b"]');
  a.ring.next([lease('a', 3, ['a', 'b']), lease('b', 1)]);
  t.false(a.shard.inScope(ofB), 'acknowledged: its caches let it go');
});

test('a key refused while out of scope and taken back with its caches unchanged is queued once the shard may act on it', async (t) => {
  const { a, ofB } = await aloneAcknowledged();
  // b joins and a gives its keys up; a's caches have not listed again yet, so a change of one still queues it here.
  a.ring.next([lease('a', 2, ['a']), lease('b', 1)]);
  await turns();
  a.ring.next([lease('a', 3, ['a', 'b']), lease('b', 1)]);
  t.false(a.shard.inScope(ofB));
  t.false(a.shard.enter(ofB), "b's now");
  // b leaves before acting on it (SIGTERM: its Lease released): the key is a's again, and its caches still hold it,
  // so listing again emits nothing for it.
  a.ring.next([lease('a', 3, ['a', 'b']), lease('b', 2, undefined, '')]);
  await turns();
  t.is(a.shard.annotations()[RING_VIEW_ANNOTATION], '["a"]');
  a.ring.next([lease('a', 4, ['a']), lease('b', 2, undefined, '')]);
  t.true(a.ready.includes(ofB), 'queued again: the change refused while it was out of scope is applied');
  t.true(a.shard.enter(ofB));
});

test('a view that changes right as the handshake publishes the one before is published in turn', async (t) => {
  let ring!: Subject<readonly Lease[]>;
  // b's Lease shows up in the watch just after a asked to publish [a]: before the handshake that did it has ended.
  const a = shardOf('a', { onRenew: (renewal) => renewal === 1 && queueMicrotask(() => ring.next([lease('a', 2), lease('b', 1)])) });
  ring = a.ring;
  a.ring.next([lease('a', 1)]);
  await turns();
  t.deepEqual(a.shard.liveMembers, ['a', 'b']);
  t.is(a.shard.annotations()[RING_VIEW_ANNOTATION], '["a","b"]', 'the view of both is published, not left behind');
  t.is(a.renewals(), 2);
});

test('a view whose caches failed to list again is retried on its own, with no further change of the ring', async (t) => {
  let failures = 1;
  const { shard, ring, clock, renewals } = shardOf('a', {
    prepare: async () => {
      if (failures-- > 0) throw new Error('the list failed');
    },
  });
  ring.next([lease('a', 1)]);
  await turns();
  t.is(renewals(), 0, 'nothing published while the caches did not list');
  clock.advance(PREPARE_RETRY_MS);
  await turns();
  t.is(shard.annotations()[RING_VIEW_ANNOTATION], '["a"]', 'retried after a while: the view is published');
  t.is(renewals(), 1);
});

test('the first member deletes a ring Lease unchanged for 10 Lease durations, once, on that resourceVersion; a renewed one stays', async (t) => {
  const collected: string[] = [];
  const { ring, clock } = shardOf('a', {
    collect: async (name, resourceVersion) => {
      collected.push(`${name}@${resourceVersion}`);
    },
  });
  const withVersion = (each: Lease, resourceVersion: string): Lease => ({ ...each, metadata: { ...each.metadata, resourceVersion } });
  // b crashed long ago (its record never changes again); c was released and comes back later.
  ring.next([withVersion(lease('a', 1, ['a']), '1'), withVersion(lease('b', 1), '2'), withVersion(lease('c', 1, undefined, ''), '3')]);
  clock.advance(STALE_LEASE_DURATIONS * DURATION_MS - 1);
  ring.next([withVersion(lease('a', 2, ['a']), '4'), withVersion(lease('b', 1), '2'), withVersion(lease('c', 2), '5')]);
  t.deepEqual(collected, [], 'not yet stale: within 10 durations');
  clock.advance(2);
  t.deepEqual(collected, ['b@2'], "b's Lease, unchanged for 10 durations, on its resourceVersion; c renewed meanwhile");
  clock.advance(STALE_LEASE_DURATIONS * DURATION_MS);
  await turns();
  ring.next([withVersion(lease('a', 3, ['a']), '6'), withVersion(lease('b', 1), '2'), withVersion(lease('c', 2), '5')]);
  t.deepEqual(collected, ['b@2', 'c@5'], 'b is asked once; c in turn, 10 durations after its last change');
});

test('a member other than the first of its view collects no Lease', async (t) => {
  const collected: string[] = [];
  const { shard, ring, clock } = shardOf('b', {
    collect: async (name) => {
      collected.push(name);
    },
  });
  for (let renewal = 1; renewal <= 12; renewal += 1) {
    ring.next([lease('a', renewal, ['a', 'b']), lease('b', renewal, ['a', 'b']), lease('c', 1)]);
    clock.advance(DURATION_MS - 1);
  }
  t.deepEqual(shard.liveMembers, ['a', 'b']);
  t.deepEqual(collected, [], "a collects c's Lease, not b");
});

test('a member whose Lease is not renewed for its duration leaves the view, and its claims with it', async (t) => {
  const b = shardOf('b');
  b.ring.next([lease('a', 1, ['a', 'b']), lease('b', 1, ['a', 'b'])]);
  const ofA = KEYS.find((key) => ownerOf(key, ['a', 'b']) === 'a')!;
  b.clock.advance(DURATION_MS - 1);
  b.ring.next([lease('a', 1, ['a', 'b']), lease('b', 2, ['a', 'b'])]);
  t.deepEqual(b.shard.liveMembers, ['a', 'b'], 'a renewed within its duration, as b observed it');
  b.clock.advance(2);
  t.deepEqual(b.shard.liveMembers, ['b'], 'expired on b’s own clock: the expiry timer fired');
  await turns();
  b.ring.next([lease('a', 1, ['a', 'b']), lease('b', 3, ['b'])]);
  t.true(b.shard.mayAct(ofA));
});

test('a rollout handed to a member stops being counted by the giver once any member claims it, even one it moved on to', (t) => {
  const { shard, ring } = shardOf('a');
  const key = KEYS.find((each) => ownerOf(each, ['a', 'b']) === 'b' && ownerOf(each, ['a', 'b', 'c']) === 'c')!;
  ring.next([lease('a', 1, ['a', 'b']), lease('b', 1, ['a'])]);
  shard.handOff([key], ['a', 'b']);
  ring.next([lease('a', 2, ['a', 'b']), lease('b', 1, ['a'])]);
  t.is(shard.annotations()[RING_ROLLOUTS_ANNOTATION], '1', 'counted here until its new owner counts it');
  // c joins before b acknowledged [a, b]: the key goes on to c, which counts it when it acknowledges [a, b, c].
  ring.next([lease('a', 3, ['a', 'b']), lease('b', 2, ['a', 'b', 'c']), lease('c', 1, ['a', 'b', 'c'])]);
  t.is(shard.annotations()[RING_ROLLOUTS_ANNOTATION], '0', 'c claims it: no longer counted here, nor published');
});

test("a shard's part of the budget is its smallest in every view in play", (t) => {
  t.deepEqual(
    ['a', 'b', 'c'].map((member) => shareOf(member, viewOf(['a', 'b', 'c']), 10)),
    [4, 3, 3],
  );
  t.is(shareOf('d', viewOf(['a', 'b', 'c']), 10), 0);
  t.is(shareOf('a', viewOf(['a', 'b', 'c']), 2) + shareOf('b', viewOf(['a', 'b', 'c']), 2) + shareOf('c', viewOf(['a', 'b', 'c']), 2), 2);
  const { shard, ring } = shardOf('b');
  // b sees [a, b] and acknowledged it, but a still acknowledges [a] alone: b's part is 0 until a moves on.
  ring.next([lease('a', 1, ['a']), lease('b', 1, ['a', 'b'])]);
  t.is(shard.budgetShare(10), 0);
  ring.next([lease('a', 2, ['a', 'b']), lease('b', 1, ['a', 'b'])]);
  t.is(shard.budgetShare(10), 5);
});
