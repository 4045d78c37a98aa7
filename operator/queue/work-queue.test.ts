// Tests of the work queue in virtual time: dedupe, single flight, coalescing, delays, rate-limited backoff, shutdown.
import test from 'ava';
import { WorkQueue, type WorkItem } from './work-queue.js';
import { defaultControllerRateLimiter, ExponentialFailureRateLimiter, TokenBucketRateLimiter } from './rate-limiter.js';
import { VirtualClock, settle } from '../../test/support/virtual-time.js';

function queueWithClock(): { queue: WorkQueue; clock: VirtualClock } {
  const clock = new VirtualClock();
  return { queue: new WorkQueue({ scheduler: clock }), clock };
}

/** Takes the next item if one is ready now, without waiting. */
async function takeNow(queue: WorkQueue): Promise<WorkItem | undefined> {
  let taken: WorkItem | undefined;
  let resolved = false;
  const pending = queue.get().then((item) => {
    taken = item;
    resolved = true;
  });
  await settle();
  if (!resolved) {
    queue.shutDown();
    await pending;
    return undefined;
  }
  return taken;
}

test('adding a waiting key again coalesces into the one item, keeping the first trace and the later reasons', async (t) => {
  const { queue } = queueWithClock();
  t.is(queue.add('ns/a', 'customapp added', 'trace-1'), 'queued');
  t.is(queue.add('ns/b', 'customapp added', 'trace-2'), 'queued');
  t.is(queue.add('ns/a', 'configmap changed', 'trace-3'), 'coalesced');
  t.is(queue.length, 2);
  const first = await queue.get();
  t.like(first, { key: 'ns/a', reason: 'customapp added', traceId: 'trace-1' });
  t.deepEqual(first!.coalesced, ['configmap changed']);
  t.is((await queue.get())!.key, 'ns/b');
  t.is(queue.length, 0);
});

test('a key being processed is not handed to a second worker until it is done', async (t) => {
  const { queue } = queueWithClock();
  queue.add('ns/a', 'first', 'trace-1');
  const item = (await queue.get())!;
  t.is(queue.add('ns/a', 'during', 'trace-2'), 'deferred');
  t.is(queue.length, 0, 'the key waits outside the ready list while it is in flight');
  const second = queue.get();
  let handed = false;
  const observed = second.then(() => {
    handed = true;
  });
  await settle();
  t.false(handed);
  queue.done(item);
  const rerun = await second;
  await observed;
  t.like(rerun, { key: 'ns/a', reason: 'during', traceId: 'trace-2' });
});

test('many adds during one reconcile coalesce into exactly one rerun', async (t) => {
  const { queue } = queueWithClock();
  queue.add('ns/a', 'first', 'trace-1');
  const item = (await queue.get())!;
  t.is(queue.add('ns/a', 'one', 'trace-2'), 'deferred');
  t.is(queue.add('ns/a', 'two', 'trace-3'), 'deferred');
  t.is(queue.add('ns/a', 'three', 'trace-4'), 'deferred');
  queue.done(item);
  const rerun = (await queue.get())!;
  t.deepEqual([rerun.reason, ...rerun.coalesced], ['one', 'two', 'three']);
  queue.done(rerun);
  t.is(await takeNow(queue), undefined, 'no second rerun');
});

test('a worker waiting on an empty queue gets the next key as soon as it is added', async (t) => {
  const { queue } = queueWithClock();
  const waiting = queue.get();
  queue.add('ns/a', 'later', 'trace-1');
  t.is((await waiting)!.key, 'ns/a');
});

test('addAfter queues the key only when due, and an earlier deadline replaces a later one', async (t) => {
  const { queue, clock } = queueWithClock();
  queue.addAfter('ns/a', 100, 'requeue-after', 'trace-1');
  queue.addAfter('ns/a', 30, 'sooner', 'trace-2');
  queue.addAfter('ns/a', 50, 'later again', 'trace-3');
  t.is(queue.delayedCount, 1);
  clock.advance(29);
  t.is(queue.length, 0);
  clock.advance(1);
  t.is(queue.length, 1);
  t.like(await queue.get(), { key: 'ns/a', reason: 'sooner' });
  clock.advance(100);
  t.is(queue.length, 0, 'the replaced deadline never fires');
});

test('rate-limited retries of one key back off 5 ms × 2ⁿ, and forget starts over', async (t) => {
  const { queue, clock } = queueWithClock();
  const delays: number[] = [];
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const before = clock.now();
    queue.addRateLimited('ns/a', 'retry', `trace-${attempt}`);
    let waited = 0;
    while (queue.length === 0) {
      clock.advance(1);
      waited += 1;
    }
    delays.push(waited);
    t.is(clock.now() - before, waited);
    queue.done((await queue.get())!);
  }
  t.deepEqual(delays, [5, 10, 20, 40, 80]);
  t.is(queue.retries('ns/a'), 5);
  queue.forget('ns/a');
  t.is(queue.retries('ns/a'), 0);
  queue.addRateLimited('ns/a', 'retry', 'trace-again');
  clock.advance(4);
  t.is(queue.length, 0);
  clock.advance(1);
  t.is(queue.length, 1);
});

test('the per-key backoff is capped', (t) => {
  const limiter = new ExponentialFailureRateLimiter({ baseDelayMs: 5, maxDelayMs: 1_000_000 });
  let last = 0;
  for (let failure = 0; failure < 2000; failure += 1) last = limiter.when('ns/a');
  t.is(last, 1_000_000);
  t.is(limiter.when('ns/b'), 5, 'other keys have their own history');
});

test('the token bucket lets a burst of 100 retries through, then 10 per second', (t) => {
  const clock = new VirtualClock();
  const bucket = new TokenBucketRateLimiter({ scheduler: clock, qps: 10, burst: 100 });
  const burst = Array.from({ length: 100 }, (_, index) => bucket.when(`ns/${index}`));
  t.true(burst.every((delay) => delay === 0));
  t.is(bucket.when('ns/100'), 100);
  t.is(bucket.when('ns/101'), 200);
  clock.advance(1000);
  // 10 tokens came back, 2 of which were already promised.
  t.is(bucket.when('ns/102'), 0);
});

test('the default limiter takes the longer of the per-key and overall delays', (t) => {
  const clock = new VirtualClock();
  const limiter = defaultControllerRateLimiter(clock);
  for (let index = 0; index < 100; index += 1) t.is(limiter.when(`ns/${index}`), 5);
  t.is(limiter.when('ns/100'), 100, 'the bucket is empty: its delay is longer than 5 ms');
  t.is(limiter.retries('ns/0'), 1);
});

test('shutDown drops new adds, cancels timers and releases waiting workers', async (t) => {
  const { queue, clock } = queueWithClock();
  queue.addAfter('ns/a', 10, 'later', 'trace-1');
  const waiting = queue.get();
  queue.shutDown();
  t.is(await waiting, undefined);
  t.is(queue.add('ns/b', 'after shutdown', 'trace-2'), 'dropped');
  t.is(clock.actions.length, 0, 'no timer survives shutDown');
  clock.advance(20);
  t.is(queue.length, 0);
  t.is(await queue.get(), undefined);
});

test('a key in flight at shutDown can still be marked done, and is not queued again', async (t) => {
  const { queue } = queueWithClock();
  queue.add('ns/a', 'first', 'trace-1');
  const item = (await queue.get())!;
  queue.add('ns/a', 'during', 'trace-2');
  queue.shutDown();
  queue.done(item);
  t.is(queue.inFlight, 0);
  t.is(queue.length, 0);
});

test('the hooks see every add, the depth, the wait and the work time', async (t) => {
  const clock = new VirtualClock();
  const seen = { adds: 0, depths: [] as number[], waits: [] as number[], works: [] as number[], retries: 0 };
  const queue = new WorkQueue({
    scheduler: clock,
    hooks: {
      onAdd: () => {
        seen.adds += 1;
      },
      onDepth: (depth) => {
        seen.depths.push(depth);
      },
      onGet: (_key, waited) => {
        seen.waits.push(waited);
      },
      onDone: (_key, worked) => {
        seen.works.push(worked);
      },
      onRetry: () => {
        seen.retries += 1;
      },
    },
  });
  queue.add('ns/a', 'one', 'trace-1');
  queue.add('ns/a', 'two', 'trace-2');
  clock.advance(7);
  const item = (await queue.get())!;
  clock.advance(3);
  queue.done(item);
  queue.addRateLimited('ns/a', 'retry', 'trace-3');
  t.is(seen.adds, 2);
  t.deepEqual(seen.depths, [1, 0]);
  t.deepEqual(seen.waits, [7]);
  t.deepEqual(seen.works, [3]);
  t.is(seen.retries, 1);
  queue.shutDown();
});
