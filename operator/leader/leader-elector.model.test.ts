// The leader elector in virtual time, on slow and lossy networks: no write of a process lands while another holds the Lease.
import test from 'ava';
import pino from 'pino';
import { VirtualClock } from '../../test/support/virtual-time.js';
import { LeaderElector } from './leader-elector.js';
import { checkElectorModel, MODEL_TIMINGS, runElectorScenario, timersWithWallNow } from './testing/elector-model.js';
import { type Delivery, FakeLeaseServer, type RequestKind } from './testing/fake-lease-api.js';

/** Runs in `npm test`; `npm run soak` runs many more (test/soak/main.ts). */
const RUNS = Number(process.env.ELECTOR_MODEL_RUNS ?? 300);

test('leaders that lose their Lease on slow, lossy or cut networks fence before a successor can lead', async (t) => {
  const replay = process.env.ELECTOR_MODEL_SEED;
  const { seed, terms, writes } = await checkElectorModel({
    numRuns: RUNS,
    seed: replay === undefined ? undefined : Number(replay),
    path: process.env.ELECTOR_MODEL_PATH,
  });
  t.log(`${RUNS} runs, ${terms} leadership terms, ${writes} writes; seed ${seed} (replay: ELECTOR_MODEL_SEED=${seed})`);
  t.true(terms > RUNS, 'leadership changed hands in the runs');
});

// The counterexamples the model found in earlier versions of the elector, kept as fixed cases.

/**
 * One candidate alone on the fake Lease server for 8 s of virtual time, its network and wall clock as given (its wall
 * clock true time by default): whether it acquired the Lease, and when (in true time) it lost it.
 */
async function aloneForEightSeconds(
  network: (kind: RequestKind, now: number) => Delivery,
  wall: (now: number) => number = (now) => now,
): Promise<{ acquired: boolean; lostAt: number | undefined }> {
  const clock = new VirtualClock();
  const server = new FakeLeaseServer(clock);
  const wallNow = (): number => wall(clock.now());
  const elector = new LeaderElector({
    client: server.connect('p0', (kind) => network(kind, clock.now())).client,
    namespace: 'ns',
    name: 'lease',
    identity: 'p0',
    logger: pino({ level: 'silent' }),
    scheduler: timersWithWallNow(clock, wallNow),
    monotonicNow: () => clock.now(),
    wallNow,
    random: () => 0,
    ...MODEL_TIMINGS,
  });
  const acquired = elector.acquire(new AbortController().signal);
  let lostAt: number | undefined;
  void elector.lost.then(() => {
    lostAt = clock.now();
  });
  const runFor = async (ms: number): Promise<void> => {
    for (let elapsed = 0; elapsed < ms; elapsed += 5) {
      clock.advance(5);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await runFor(8_000);
  const result = { acquired: await acquired, lostAt };
  // A release by a leader that still thinks it leads tries the cut network until its deadline: time goes on for it.
  const released = elector.release();
  await runFor(MODEL_TIMINGS.renewDeadlineMs + 5);
  await released;
  return result;
}

test('the renew deadline counts from when the last successful renewal was sent, not from when its answer came', async (t) => {
  // From 1 s on, Lease updates are answered 1.5 s late; from 1.3 s on, nothing gets through any more.
  let lastRenewalSentAt = 0;
  const { acquired, lostAt } = await aloneForEightSeconds((kind, now) => {
    if (now >= 1_300) return { transitMs: 'lost', answer: 'lost' };
    if (kind === 'replace') lastRenewalSentAt = now;
    return { transitMs: 0, answer: { delayMs: kind === 'replace' && now >= 1_000 ? 1_500 : 0 } };
  });
  t.true(acquired);
  // Renewals every 400 ms: the last one got through at about 1.2 s and was answered 1.5 s later. The Lease was last
  // renewed on the server then, so a standby may take over 3 s later: the leader must be gone 2 s after the send
  // (counted from the start of that attempt, its GET, a step of this test before), not 2 s after the answer, as
  // client-go counts.
  t.true(lastRenewalSentAt > 1_000 && lastRenewalSentAt < 1_300, `last renewal sent at ${lastRenewalSentAt} ms`);
  const deadline = lastRenewalSentAt + MODEL_TIMINGS.renewDeadlineMs;
  t.true(lostAt !== undefined && lostAt <= deadline && lostAt >= deadline - 10, `lost at ${lostAt} ms, the deadline was ${deadline} ms`);
});

test('a leader whose wall clock steps back an hour still gives up within the renew deadline of its last renewal', async (t) => {
  // From 1 s on, the leader's wall clock reads an hour earlier and nothing it sends gets through any more.
  const STEP_AT_MS = 1_000;
  let lastRenewalSentAt = 0;
  const { acquired, lostAt } = await aloneForEightSeconds(
    (kind, now) => {
      if (now >= STEP_AT_MS) return { transitMs: 'lost', answer: 'lost' };
      if (kind === 'get') lastRenewalSentAt = now;
      return { transitMs: 0, answer: { delayMs: 0 } };
    },
    (now) => now - (now >= STEP_AT_MS ? 3_600_000 : 0),
  );
  t.true(acquired);
  const deadline = lastRenewalSentAt + MODEL_TIMINGS.renewDeadlineMs;
  t.true(lostAt !== undefined && lostAt <= deadline, `lost at ${lostAt} ms (true time), the deadline was ${deadline} ms`);
});

test('an acquisition whose answer comes after the renew deadline is not leadership', async (t) => {
  // p0's create of the Lease landed at once but was answered 4 s later, when p2 had already taken the expired Lease
  // over: p0 must not act as leader, not even for a moment.
  const report = await runElectorScenario({
    processes: [
      { startAtMs: 0, network: [{ forMs: 200, mode: 'slow' }], restarts: false },
      { startAtMs: 1731, network: [{ forMs: 200, mode: 'healthy' }], restarts: false },
      { startAtMs: 1746, network: [{ forMs: 200, mode: 'healthy' }], restarts: false },
    ],
    seed: -1304131084,
  });
  t.deepEqual(report.violations, []);
  t.true(report.terms >= 2, `leadership changed hands (${report.terms} terms)`);
});
