// The leader elector's model-based check: candidates on slow, lossy networks in virtual time, and the one rule that matters.
import fc from 'fast-check';
import pino from 'pino';
import type { SchedulerLike } from 'rxjs';
import { VirtualClock } from '../../../test/support/virtual-time.js';
import { LeaderElector } from '../leader-elector.js';
import { type Connection, type Delivery, FakeLeaseServer } from './fake-lease-api.js';

/** Short timings with the defaults' shape: the standby waits 1 s longer than the leader may keep writing. */
export const MODEL_TIMINGS = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 400 };
/** Requests travel at most this long: less than the margin (lease duration − renew deadline), as the design assumes. */
export const MAX_TRANSIT_MS = 600;
/** How long each run lasts, in virtual time. */
const RUN_MS = 40_000;
/** The leader's own work: one write this often. */
const WRITE_EVERY_MS = 150;

/** How one process's network behaves for a while. */
export interface NetworkPhase {
  readonly forMs: number;
  /**
   * healthy: fast; slow: answers up to 4 s late; lossy: a third of the answers lost; deaf: every request lands but
   * no answer comes back; partitioned: no request lands.
   */
  readonly mode: 'healthy' | 'slow' | 'lossy' | 'deaf' | 'partitioned';
}

/** A step of one process's wall clock (an NTP correction, an operator's `date -s`): from `atMs` on, it reads `byMs` more. */
export interface ClockStep {
  readonly atMs: number;
  readonly byMs: number;
}

/**
 * One process: when it starts, its network over time, whether it comes back (a new identity) after losing, and the
 * steps of its wall clock (none: it reads true time).
 */
export interface ProcessPlan {
  readonly startAtMs: number;
  readonly network: readonly NetworkPhase[];
  readonly restarts: boolean;
  readonly clockSteps?: readonly ClockStep[];
}

/** A run: the processes and the seed of every per-request draw. */
export interface ElectorScenario {
  readonly processes: readonly ProcessPlan[];
  readonly seed: number;
}

const phase: fc.Arbitrary<NetworkPhase> = fc.record({
  forMs: fc.integer({ min: 200, max: 8_000 }),
  mode: fc.constantFrom('healthy', 'slow', 'lossy', 'deaf', 'partitioned'),
});

export const scenarioArbitrary: fc.Arbitrary<ElectorScenario> = fc.record({
  processes: fc.array(
    fc.record({
      startAtMs: fc.integer({ min: 0, max: 5_000 }),
      network: fc.array(phase, { minLength: 1, maxLength: 8 }),
      restarts: fc.boolean(),
      clockSteps: fc.array(fc.record({ atMs: fc.integer({ min: 0, max: 30_000 }), byMs: fc.integer({ min: -60_000, max: 60_000 }) }), {
        maxLength: 2,
      }),
    }),
    { minLength: 2, maxLength: 3 },
  ),
  seed: fc.integer(),
});

/** A small deterministic PRNG (mulberry32), so that a scenario replays exactly. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The network of one process: the phase in force when a request is sent decides its fate. */
function network(plan: ProcessPlan, clock: VirtualClock, random: () => number): () => Delivery {
  return () => {
    let at = clock.now() - plan.startAtMs;
    const current = plan.network.find((each) => (at -= each.forMs) < 0) ?? plan.network.at(-1)!;
    return deliveryIn(current.mode, random, 4_000);
  };
}

/**
 * The fate of one request sent while the network is in `mode` (see {@link NetworkPhase}); a slow answer comes up to
 * `slowMs` late. It draws from `random` in the same order whatever the mode, so that a seed replays the same run.
 */
export function deliveryIn(mode: NetworkPhase['mode'], random: () => number, slowMs: number): Delivery {
  const transitMs = Math.floor(random() * (mode === 'healthy' ? 20 : MAX_TRANSIT_MS));
  switch (mode) {
    case 'healthy':
      return { transitMs, answer: { delayMs: Math.floor(random() * 20) } };
    case 'slow':
      return { transitMs, answer: { delayMs: Math.floor(random() * slowMs) } };
    case 'lossy':
      return { transitMs, answer: random() < 1 / 3 ? 'lost' : { delayMs: Math.floor(random() * 300) } };
    case 'deaf':
      return { transitMs, answer: 'lost' };
    case 'partitioned':
      return { transitMs: 'lost', answer: 'lost' };
  }
}

/** The wall clock of a process: true (virtual) time plus every step taken so far. */
function wallClock(clock: VirtualClock, steps: readonly ClockStep[]): () => number {
  return () => clock.now() + steps.filter((step) => step.atMs <= clock.now()).reduce((sum, step) => sum + step.byMs, 0);
}

/** A scheduler as rxjs' asyncScheduler is: its timers run on monotonic time (here virtual), its `now()` is the wall clock. */
export function timersWithWallNow(clock: VirtualClock, wall: () => number): SchedulerLike {
  return { now: wall, schedule: clock.schedule.bind(clock) as SchedulerLike['schedule'] };
}

function sleep(clock: VirtualClock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.schedule(() => resolve(), ms));
}

/** What a run saw, for the check and for the log. */
export interface ElectorRunReport {
  readonly terms: number;
  readonly writes: number;
  /** Writes that landed while another process held the Lease. */
  readonly violations: readonly string[];
}

/**
 * Runs a scenario: each process runs a {@link LeaderElector} (the real one, on the virtual clock) and, while it
 * leads, writes its own work every {@link WRITE_EVERY_MS}; when its leadership is lost it fences its connection, as
 * the operator fences its client, and (if its plan says so) comes back as a new process. Then checks, over everything
 * the server applied in order: **no write of a process lands while the Lease names another process**.
 */
export async function runElectorScenario(scenario: ElectorScenario): Promise<ElectorRunReport> {
  const clock = new VirtualClock();
  const server = new FakeLeaseServer(clock);
  const random = prng(scenario.seed);
  const silent = pino({ level: 'silent' });
  const stop = new AbortController();

  const run = async (plan: ProcessPlan, index: number): Promise<void> => {
    await sleep(clock, plan.startAtMs);
    for (let incarnation = 0; !stop.signal.aborted; incarnation += 1) {
      const identity = `p${index}.${incarnation}`;
      const connection: Connection = server.connect(identity, network(plan, clock, random));
      const wall = wallClock(clock, plan.clockSteps ?? []);
      const elector = new LeaderElector({
        client: connection.client,
        namespace: 'ns',
        name: 'lease',
        identity,
        logger: silent,
        scheduler: timersWithWallNow(clock, wall),
        monotonicNow: () => clock.now(),
        wallNow: wall,
        random,
        ...MODEL_TIMINGS,
      });
      if (!(await elector.acquire(stop.signal))) return;
      let lost = false;
      void elector.lost.then(() => {
        lost = true;
        connection.fence();
      });
      while (!lost && !stop.signal.aborted) {
        await connection.write().catch(() => undefined);
        await sleep(clock, WRITE_EVERY_MS);
      }
      if (!lost) {
        connection.fence();
        await elector.release();
        return;
      }
      if (!plan.restarts) return;
    }
  };
  const running = scenario.processes.map((plan, index) => run(plan, index));

  for (let elapsed = 0; elapsed < RUN_MS; elapsed += 5) {
    clock.advance(5);
    await new Promise((resolve) => setImmediate(resolve));
  }
  stop.abort();
  for (let round = 0; round < 200 && clock.actions.length > 0; round += 1) {
    clock.advance(5_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(running);

  const violations: string[] = [];
  let holder: string | undefined;
  let terms = 0;
  for (const entry of server.landed) {
    if (entry.kind === 'lease') {
      if (entry.holder !== '' && entry.holder !== holder) terms += 1;
      holder = entry.holder;
    } else if (holder !== undefined && holder !== '' && holder !== entry.writer) {
      violations.push(`at ${entry.at} ms a write of ${entry.writer} landed while ${holder} held the Lease`);
    }
  }
  return { terms, writes: server.landed.filter((entry) => entry.kind === 'write').length, violations };
}

/** Options of {@link checkElectorModel}. */
export interface ElectorCheckOptions {
  readonly numRuns: number;
  /** Replays a failure: the seed fast-check printed. @default a fresh seed */
  readonly seed?: number;
  readonly path?: string;
}

/**
 * Runs `run` over `numRuns` scenarios of `arbitrary` and throws fast-check's report (seed, path, counterexample) when a
 * run reports violations (the first three in the message); `tally` sees every report. Shrinks the counterexample when
 * `shrink` says so. Answers the seed.
 */
export async function checkScenarios<S, R extends { readonly violations: readonly string[] }>(
  arbitrary: fc.Arbitrary<S>,
  run: (scenario: S) => Promise<R>,
  options: ElectorCheckOptions & { readonly shrink: boolean },
  tally: (report: R) => void,
): Promise<number> {
  const seed = options.seed ?? (Date.now() ^ (Math.random() * 0x100000000)) | 0;
  await fc.assert(
    fc.asyncProperty(arbitrary, async (scenario) => {
      const report = await run(scenario);
      tally(report);
      if (report.violations.length > 0) throw new Error(report.violations.slice(0, 3).join('; '));
    }),
    { numRuns: options.numRuns, seed, path: options.path, endOnFailure: !options.shrink, includeErrorInReport: true },
  );
  return seed;
}

/** Checks {@link runElectorScenario} over `numRuns` random scenarios; a failure throws fast-check's report (seed, path, counterexample). */
export async function checkElectorModel(options: ElectorCheckOptions): Promise<{ seed: number; terms: number; writes: number }> {
  let terms = 0;
  let writes = 0;
  const seed = await checkScenarios(scenarioArbitrary, runElectorScenario, { ...options, shrink: true }, (report) => {
    terms += report.terms;
    writes += report.writes;
  });
  return { seed, terms, writes };
}
