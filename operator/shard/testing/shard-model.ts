// The shards' model-based check: replicas join, leave, crash, freeze and are cut off in virtual time; no key ever has two acting shards.
import fc from 'fast-check';
import pino from 'pino';
import { BehaviorSubject, filter, firstValueFrom, Subject } from 'rxjs';
import { VirtualClock } from '../../../test/support/virtual-time.js';
import type { Lease } from '../../kube/objects.js';
import { LeaderElector } from '../../leader/leader-elector.js';
import {
  checkScenarios,
  deliveryIn,
  type ElectorCheckOptions,
  MODEL_TIMINGS,
  prng,
  timersWithWallNow,
} from '../../leader/testing/elector-model.js';
import { type Delivery, FakeLeaseServer } from '../../leader/testing/fake-lease-api.js';
import { RolloutBudget } from '../../governance/rollout-budget.js';
import { withDeadline } from '../../leader/timers.js';
import { ownerOf, viewOf } from '../ring.js';
import { RING_LABEL, Shard } from '../shard.js';
import { keyLeftCaches, queuePlacesKept } from '../../manager/shard-keys.js';

/**
 * The objects of every run, by key: CustomApps (`namespace/name`), whose status records a rollout's place in the queue,
 * and workloads (`Kind/namespace/name`), which record none (a workload has no status of ours).
 */
export const KEYS: readonly string[] = [
  ...Array.from({ length: 8 }, (_, index) => `ns/app-${index}`),
  ...Array.from({ length: 4 }, (_, index) => `Deployment/ns/wl-${index}`),
];
/** Whether `key`'s rollout records its place in the queue in the cluster (a CustomApp's `status.pendingRollout`). */
const recordsQueuePlace = (key: string): boolean => !key.startsWith('Deployment/');
/** Events happen within this much virtual time; then every network heals and the run goes on until quiescence. */
const ACTIVE_MS = 24_000;
/** How long after the last event the ring must have settled (several lease durations). */
const QUIET_MS = 12_000;
/** With rollouts, how much longer at most the queued ones may take to drain after the quiet time. */
const DRAIN_MS = 40_000;
/** Workers per shard (the operator's `--max-concurrent-reconciles`). */
const WORKERS = 2;
/**
 * The cluster-wide rollout budget (`--max-concurrent-rollouts`): each change of a key is a rollout. As many slots as a
 * scenario has shards at most, so that each member has a part in a view of them all: with more members than slots, one
 * ranked past the limit has none (`shareOf`) and its keys wait while that view lasts.
 */
const ROLLOUT_LIMIT = 4;

/** How one shard's network behaves for a while. */
export interface ShardNetworkPhase {
  readonly forMs: number;
  /** healthy: fast; slow: answers and watch events up to 1.5 s late; lossy: a third of the answers lost; partitioned: nothing gets through. */
  readonly mode: 'healthy' | 'slow' | 'lossy' | 'partitioned';
}

/** One shard: when it joins, its network, its freezes, and how it ends (it stays, leaves gracefully or crashes). */
export interface ShardPlan {
  readonly joinAtMs: number;
  readonly network: readonly ShardNetworkPhase[];
  /** The process is frozen (SIGSTOP, a long GC): no timer of its work runs, nothing it sends goes out, nothing arrives. */
  readonly pauses: readonly { readonly atMs: number; readonly forMs: number }[];
  readonly end: { readonly kind: 'stays' } | { readonly kind: 'leaves' | 'crashes'; readonly atMs: number };
}

/** A run: the shards (the first one stays), the object changes, and the seed of every per-request draw. */
export interface ShardScenario {
  readonly shards: readonly ShardPlan[];
  readonly changes: readonly { readonly atMs: number; readonly key: number }[];
  readonly seed: number;
}

const networkPhase: fc.Arbitrary<ShardNetworkPhase> = fc.record({
  forMs: fc.integer({ min: 200, max: 6_000 }),
  mode: fc.constantFrom('healthy', 'healthy', 'slow', 'lossy', 'partitioned'),
});

const shardPlan = (stays: boolean): fc.Arbitrary<ShardPlan> =>
  fc.record({
    joinAtMs: fc.integer({ min: 0, max: stays ? 2_000 : 16_000 }),
    network: fc.array(networkPhase, { minLength: 1, maxLength: 6 }),
    pauses: fc.array(fc.record({ atMs: fc.integer({ min: 0, max: ACTIVE_MS - 6_000 }), forMs: fc.integer({ min: 100, max: 6_000 }) }), {
      maxLength: 2,
    }),
    end: stays
      ? fc.constant({ kind: 'stays' as const })
      : fc.oneof(
          fc.constant({ kind: 'stays' as const }),
          fc.record({ kind: fc.constantFrom('leaves' as const, 'crashes' as const), atMs: fc.integer({ min: 0, max: ACTIVE_MS }) }),
        ),
  });

export const shardScenarioArbitrary: fc.Arbitrary<ShardScenario> = fc.record({
  shards: fc
    .tuple(shardPlan(true), fc.array(shardPlan(false), { minLength: 1, maxLength: 3 }))
    .map(([first, others]) => [first, ...others]),
  changes: fc.array(fc.record({ atMs: fc.integer({ min: 0, max: ACTIVE_MS }), key: fc.integer({ min: 0, max: KEYS.length - 1 }) }), {
    maxLength: 30,
  }),
  seed: fc.integer(),
});

/**
 * Scenarios of handoffs alone: members join and leave gracefully (SIGTERM) on healthy or slow networks, with no
 * crash, freeze or partition, during a stream of changes; the keys change hands often while their changes flow.
 */
export const handoffScenarioArbitrary: fc.Arbitrary<ShardScenario> = fc.record({
  shards: fc
    .array(
      fc.record({
        joinAtMs: fc.integer({ min: 0, max: 16_000 }),
        network: fc.array(
          fc.record({ forMs: fc.integer({ min: 200, max: 6_000 }), mode: fc.constantFrom('healthy' as const, 'slow' as const) }),
          { minLength: 1, maxLength: 4 },
        ),
        pauses: fc.constant([]),
        end: fc.oneof(
          fc.constant({ kind: 'stays' as const }),
          fc.record({ kind: fc.constant('leaves' as const), atMs: fc.integer({ min: 0, max: 8_000 }) }),
        ),
      }),
      { minLength: 2, maxLength: 5 },
    )
    .map(([first, ...others]) => [{ ...first!, joinAtMs: 0, end: { kind: 'stays' as const } }, ...others]),
  changes: fc.array(fc.record({ atMs: fc.integer({ min: 0, max: ACTIVE_MS }), key: fc.integer({ min: 0, max: KEYS.length - 1 }) }), {
    minLength: 10,
    maxLength: 60,
  }),
  seed: fc.integer(),
});

/** What a run models besides the handoff. */
export interface ShardModelOptions {
  /**
   * Each change of a key is a rollout that runs a while, under a cluster-wide budget of {@link ROLLOUT_LIMIT} split
   * among the shards as the operator splits it; checked: never more in progress than that. @default false
   */
  readonly rollouts?: boolean;
  /** Which scenarios: every fault ({@link shardScenarioArbitrary}), or joins and graceful leaves alone. @default 'faults' */
  readonly scenarios?: 'faults' | 'handoffs';
}

/** What a run saw. */
export interface ShardRunReport {
  /** Reconciles that started. */
  readonly acts: number;
  /** Ownership changes (views acknowledged), over all shards. */
  readonly handoffs: number;
  readonly violations: readonly string[];
}

/** The world's state of one key: the latest change, and what the last write that landed applied. */
interface KeyState {
  version: number;
  applied?: { readonly version: number; readonly writer: string; readonly startedAt: number };
  /** Since when its rollout waits for a slot, as a CustomApp's status says (`pendingRollout`): what a rebuild queues again. */
  pending?: number;
}

/**
 * Runs a scenario: each shard is the real {@link Shard} with the real {@link LeaderElector} on its own Lease, on a
 * {@link FakeLeaseServer} whose network delays, loses and cuts requests and watch events; its workers reconcile the
 * keys it is given, each reconcile writing the key's latest version unless it is applied. Its caches are modelled as
 * the operator's: a change of a key queues it on every shard whose caches hold it (in scope or not yet dropped), and
 * each scope version lists again after a while (a newer one restarts it), queuing only the keys that entered the
 * caches; a rollout that waits for a slot says so in its status, from which a shard's budget is rebuilt, with the
 * rollouts its caches show (a list reads them as they are, the watch sees one start or end after its network's delay).
 * A write is refused past the shard's renew deadline, as the operator's client is (`KubeClient.fenceWhen`).
 *
 * Checked: **when a reconcile starts, no other shard that can still write has one in flight on that key**; no write
 * of a key lands after one of a reconcile that started later in another shard; no version is applied twice; no key's
 * refs are released while its reconcile is in flight; and after quiescence every shard still running sees the same
 * members, has acknowledged that view, holds the dependency refs of exactly the keys it owns (a reconcile acquires
 * them, a key that leaves the caches releases them), every key's owner runs, and every key's latest change was applied
 * (a workload's queued rollout too, whose place no rebuild can read from the cluster).
 */
export async function runShardScenario(scenario: ShardScenario, options: ShardModelOptions = {}): Promise<ShardRunReport> {
  const governed = options.rollouts ?? false;
  const clock = new VirtualClock();
  const server = new FakeLeaseServer(clock);
  const random = prng(scenario.seed);
  const silent = pino({ level: 'silent' });
  const violations: string[] = [];
  const keys = new Map<string, KeyState>(KEYS.map((key) => [key, { version: 1 }]));
  const applications = new Map<string, number>();
  /** The rollouts running in the cluster: key → when it ends. */
  const rollouts = new Map<string, number>();
  /** The reconciles in flight: key → shard → whether that shard can still write (its Lease within its renew deadline). */
  const acting = new Map<string, Map<string, () => boolean>>();
  const running = new Map<string, { readonly shard: Shard; changed: (key: string) => void; readonly refs: ReadonlySet<string> }>();
  /** Each running incarnation's watch of the rollouts: told when one starts or ends, it sees it after its network's delay. */
  const rolloutWatchers = new Map<string, (key: string, rolling: boolean) => void>();
  const rolloutChanged = (key: string, rolling: boolean): void => {
    for (const watcher of rolloutWatchers.values()) watcher(key, rolling);
  };
  let acts = 0;
  let handoffs = 0;
  const changedEverywhere = (key: string): void => {
    for (const { changed } of running.values()) changed(key);
  };
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => clock.schedule(() => resolve(), Math.max(0, ms)));

  const runShard = async (plan: ShardPlan, index: number): Promise<void> => {
    const member = `shard-${index}`;
    // Every end happens while the events do, so that the ring has the quiet time to settle after it.
    const endAt = plan.end.kind === 'stays' ? undefined : Math.min(plan.joinAtMs + plan.end.atMs, ACTIVE_MS);
    const pausedUntil = (at: number): number | undefined => {
      const pause = plan.pauses.find(
        (each) => at >= plan.joinAtMs + each.atMs && at < Math.min(plan.joinAtMs + each.atMs + each.forMs, ACTIVE_MS),
      );
      return pause && Math.min(plan.joinAtMs + pause.atMs + pause.forMs, ACTIVE_MS);
    };
    const phaseAt = (at: number): { mode: ShardNetworkPhase['mode']; endsAt: number } => {
      if (at >= ACTIVE_MS) return { mode: 'healthy', endsAt: Number.POSITIVE_INFINITY };
      let from = plan.joinAtMs;
      for (const phase of plan.network) {
        if (at < from + phase.forMs) return { mode: phase.mode, endsAt: Math.min(from + phase.forMs, ACTIVE_MS) };
        from += phase.forMs;
      }
      return { mode: plan.network.at(-1)!.mode, endsAt: ACTIVE_MS };
    };
    /** Sleeps `ms` of this process's time: a freeze stretches it to the end of the freeze. */
    const nap = async (ms: number): Promise<void> => {
      await sleep(ms);
      const until = pausedUntil(clock.now());
      if (until !== undefined) await sleep(until - clock.now());
    };
    await sleep(plan.joinAtMs);
    // A process whose Lease is lost exits (the operator does) and its container restarts: a new holder, the same member.
    for (let incarnation = 0; endAt === undefined || clock.now() < endAt; incarnation += 1) {
      if ((await runIncarnation(member, `${member}.${incarnation}`, { endAt, pausedUntil, phaseAt, nap })) !== 'lost') return;
    }
  };

  const runIncarnation = async (
    member: string,
    holder: string,
    plan: {
      readonly endAt: number | undefined;
      readonly pausedUntil: (at: number) => number | undefined;
      readonly phaseAt: (at: number) => { mode: ShardNetworkPhase['mode']; endsAt: number };
      readonly nap: (ms: number) => Promise<void>;
    },
  ): Promise<'lost' | 'ended'> => {
    const { pausedUntil, phaseAt, nap } = plan;
    let crashed = false;
    const network = (): Delivery => {
      const now = clock.now();
      if (crashed || pausedUntil(now) !== undefined) return { transitMs: 'lost', answer: 'lost' };
      return deliveryIn(phaseAt(now).mode, random, 1_500);
    };
    /** A watch event arrives after the network lets it: at the end of a partition or a freeze, in order. */
    const watchDelay = (): number => {
      const now = clock.now();
      const { mode, endsAt } = phaseAt(now);
      const after = Math.max(mode === 'partitioned' ? endsAt : now, pausedUntil(now) ?? now);
      const jitter = mode === 'slow' ? random() * 1_500 : random() * 20;
      return after - now + Math.floor(jitter);
    };

    const connection = server.connect(holder, network);
    const leases$ = new Subject<readonly Lease[]>();
    const stopWatch = server.watch({ delayMs: watchDelay, deliver: (leases) => leases$.next(leases) });
    /** The keys this shard's caches hold (its CustomApps): a relist keeps what is in scope, and may lag the scope. */
    const cached = new Set<string>();
    /** The keys whose dependency refs this shard's registry holds: a key's reconcile acquires them (`use`). */
    const refs = new Set<string>();
    /** The rollouts this shard's caches show in progress: a list reads them as they are, the watch after a delay. */
    const seenRolling = new Set<string>();
    rolloutWatchers.set(holder, (key, rolling) =>
      clock.schedule(() => (rolling ? seenRolling.add(key) : seenRolling.delete(key)), watchDelay()),
    );
    const shard = new Shard({
      member,
      leases$,
      monotonicNow: () => clock.now(),
      scheduler: clock,
      defaultLeaseDurationMs: MODEL_TIMINGS.leaseDurationMs,
      logger: silent,
      cachedKeys: () => cached,
    });
    const elector = new LeaderElector({
      client: connection.client,
      namespace: 'ns',
      name: member,
      identity: holder,
      labels: { [RING_LABEL]: 'model' },
      annotations: () => shard.annotations(),
      onLeadingChange: () => shard.leaseChanged(),
      logger: silent,
      scheduler: timersWithWallNow(clock, () => clock.now()),
      monotonicNow: () => clock.now(),
      wallNow: () => clock.now(),
      random,
      ...MODEL_TIMINGS,
    });
    const canWrite = (): boolean => !crashed && clock.now() < elector.validUntil;

    const queue = new Set<string>();
    let wake: (() => void) | undefined;
    const enqueue = (key: string): void => {
      queue.add(key);
      wake?.();
    };
    /** A change of a key's inputs (its ConfigMap): the triggers queue it if the caches hold it, in scope or not yet dropped. */
    const changed = (key: string): void => {
      if (cached.has(key)) enqueue(key);
    };
    running.set(member, { shard, changed, refs });
    shard.ready$.subscribe(enqueue);
    // The rollout budget, wired as the operator wires it (manager/lifecycle.ts).
    const budget = new RolloutBudget(ROLLOUT_LIMIT);
    budget.setShare(0);
    budget.eligible.subscribe(enqueue);
    shard.countRollouts(() => budget.inProgress);
    shard.viewsChanged$.subscribe(() => budget.setShare(shard.budgetShare(ROLLOUT_LIMIT)));
    // What a key that leaves the caches lets go of, as in the operator (manager/shard-keys.ts): its place in the budget
    // and its refs, never while a reconcile of it is in flight here.
    const holdings = {
      forget: (key: string) => budget.forget(key),
      release: (key: string) => {
        if (acting.get(key)?.has(holder))
          violations.push(`at ${clock.now()} ms ${holder} released the refs of ${key} during its reconcile`);
        refs.delete(key);
      },
      forgetReports: () => {},
    };
    const inScope = (key: string): boolean => shard.inScope(key);
    // The caches list again at each scope version, as the operator's do (cache/informer.ts): a new version restarts a
    // list still on its way; a list emits only the keys that entered the store (queued) or left it (given up).
    const listedScope = new BehaviorSubject(-1);
    let listing = 0;
    shard.scope$.subscribe((version) => {
      const attempt = ++listing;
      // A LIST over this shard's network: up to 200 ms, up to 1.5 s on a slow one, after the end of a partition.
      const { mode, endsAt } = phaseAt(clock.now());
      const at = (mode === 'partitioned' ? endsAt : clock.now()) + Math.floor(random() * (mode === 'slow' ? 1_500 : 200));
      clock.schedule(
        () => {
          if (attempt !== listing || crashed) return;
          for (const key of KEYS) {
            if (rollouts.has(key)) seenRolling.add(key);
            else seenRolling.delete(key);
            const keeps = shard.inScope(key);
            if (keeps && !cached.has(key)) {
              cached.add(key);
              enqueue(key);
            } else if (!keeps && cached.delete(key)) keyLeftCaches(key, inScope, holdings, silent);
          }
          listedScope.next(version);
        },
        (pausedUntil(at) ?? at) - clock.now(),
      );
    });
    shard.start(elector, async (view) => {
      shard.handOff(budget.snapshot().inProgress, view);
      // The caches have listed with this scope (or a later one), then the budget is rebuilt from them, keeping the
      // places the cluster does not record of the keys still in scope (a place it records is read from there).
      const version = shard.scopeVersionNow;
      await firstValueFrom(listedScope.pipe(filter((listed) => listed >= version)));
      budget.rebuild(
        [...seenRolling].filter((key) => cached.has(key)),
        [
          ...queuePlacesKept(budget.snapshot().queue, inScope),
          ...[...keys].flatMap(([key, { pending }]) => (pending !== undefined && cached.has(key) ? [{ key, since: pending }] : [])),
        ],
      );
      handoffs += 1;
    });
    const stop = new AbortController();
    const stopped = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));

    const work = async (): Promise<void> => {
      while (!stop.signal.aborted) {
        const key = [...queue][0];
        if (key === undefined) {
          await Promise.race([new Promise<void>((resolve) => (wake = resolve)), stopped]);
          wake = undefined;
          continue;
        }
        queue.delete(key);
        if (!shard.enter(key)) continue;
        acts += 1;
        refs.add(key);
        const startedAt = clock.now();
        const others = acting.get(key) ?? new Map<string, () => boolean>();
        for (const [other, writes] of others) {
          if (other !== holder && writes())
            violations.push(`at ${startedAt} ms ${holder} started ${key} while ${other} was still acting on it`);
        }
        others.set(holder, canWrite);
        acting.set(key, others);
        try {
          const state = keys.get(key)!;
          const version = state.version;
          await nap(Math.floor(random() * 300));
          if (crashed) continue;
          // Where its rollout stands, as a reconcile reads it from the Deployment.
          const rolling = rollouts.has(key);
          if (state.applied?.version === version || (governed && rolling)) {
            budget.settle(key, { rolling, waiting: state.applied?.version !== version });
            continue;
          }
          if (governed) {
            budget.settle(key, { rolling: false, waiting: true });
            const admission = budget.admit(key, clock.now());
            // A CustomApp's status says it waits, and since when (a write: not past the renew deadline).
            if (!admission.granted && canWrite() && recordsQueuePlace(key)) state.pending = admission.since;
            if (!admission.granted) continue;
          }
          // The operator's client refuses a write past the Lease's renew deadline (KubeClient.fenceWhen).
          if (!canWrite()) continue;
          await withDeadline(1_000, stop.signal, clock, (signal) =>
            connection.request(() => {
              const last = state.applied;
              if (last && last.writer !== holder && last.startedAt > startedAt) {
                violations.push(
                  `at ${clock.now()} ms a write of ${key} by ${holder} landed after one of ${last.writer}, which started later`,
                );
              }
              const counted = `${key}@${version}`;
              applications.set(counted, (applications.get(counted) ?? 0) + 1);
              if (applications.get(counted)! > 1)
                violations.push(`at ${clock.now()} ms ${key} version ${version} was applied again, by ${holder}`);
              state.applied = { version, writer: holder, startedAt };
              state.pending = undefined;
              if (!governed) return;
              if (rollouts.size >= ROLLOUT_LIMIT) {
                violations.push(
                  `at ${clock.now()} ms ${holder} started a rollout of ${key} with ${rollouts.size} in progress, the budget is ${ROLLOUT_LIMIT}`,
                );
              }
              rollouts.set(key, clock.now());
              rolloutChanged(key, true);
              clock.schedule(
                () => {
                  rollouts.delete(key);
                  rolloutChanged(key, false);
                  changedEverywhere(key);
                },
                300 + Math.floor(random() * 2_000),
              );
            }, signal),
          );
          budget.settle(key, { rolling: rollouts.has(key), waiting: false });
        } catch {
          // Refused (fenced), lost or late: the key goes again, as a failed reconcile is retried.
          if (!stop.signal.aborted) queue.add(key);
        } finally {
          if (!crashed) {
            acting.get(key)?.delete(holder);
            shard.exit(key);
          }
        }
      }
    };

    /** Gone at once: nothing more is sent, its reconciles in flight are gone with it, its Lease expires. */
    const crash = (): void => {
      crashed = true;
      running.delete(member);
      rolloutWatchers.delete(holder);
      for (const others of acting.values()) others.delete(holder);
      shard.stop();
      stopWatch();
      connection.fence();
      stop.abort();
    };

    const acquired = elector.acquire(stop.signal);
    const workers = Array.from({ length: WORKERS }, () => work());
    const lost = elector.lost.then(() => 'lost' as const);
    const ended =
      plan.endAt === undefined ? new Promise<never>(() => undefined) : sleep(plan.endAt - clock.now()).then(() => 'ended' as const);
    const outcome = await Promise.race([lost, ended]);
    if (outcome === 'lost') {
      connection.fence();
      crash();
      await acquired;
      return 'lost';
    }
    if (plan.endAt !== undefined && endKind(member) === 'crashes') {
      crash();
      await acquired;
      return 'ended';
    }
    // A graceful stop, as the operator's: no new reconcile, drain those in flight, fence, release the Lease.
    running.delete(member);
    rolloutWatchers.delete(holder);
    shard.stop();
    stop.abort();
    await Promise.all(workers);
    stopWatch();
    connection.fence();
    await acquired;
    await elector.release();
    return 'ended';
  };
  const endKind = (member: string): ShardPlan['end']['kind'] => scenario.shards[Number(member.slice('shard-'.length))]!.end.kind;

  const runs = scenario.shards.map((plan, index) => runShard(plan, index));
  for (const change of scenario.changes) {
    clock.schedule(() => {
      const key = KEYS[change.key]!;
      keys.get(key)!.version += 1;
      changedEverywhere(key);
    }, change.atMs);
  }

  const runFor = async (ms: number): Promise<void> => {
    const end = clock.now() + ms;
    while (clock.now() < end) {
      const due = clock.actions[0]?.delay ?? end;
      clock.advance(Math.max(1, Math.min(end, due) - clock.now()));
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await runFor(ACTIVE_MS + QUIET_MS);
  // Rollouts queued for a slot drain a few at a time: quiescence is when none runs and every change is applied.
  const unsettled = (): boolean =>
    rollouts.size > 0 || [...keys.values()].some((state) => state.version > 1 && state.applied?.version !== state.version);
  for (let waited = 0; governed && waited < DRAIN_MS && unsettled(); waited += 1_000) await runFor(1_000);

  const members = [...running.keys()];
  const view = viewOf(members);
  for (const [member, { shard }] of running) {
    const seen = shard.liveMembers;
    if (seen.join() !== view.join())
      violations.push(`after quiescence ${member} sees [${seen.join(', ')}], the running shards are [${view.join(', ')}]`);
    if (shard.annotations()['app.example.com/ring-view'] !== JSON.stringify(view)) {
      violations.push(
        `after quiescence ${member} acknowledges ${shard.annotations()['app.example.com/ring-view']}, not the view [${view.join(', ')}]`,
      );
    }
  }
  for (const [member, { refs }] of running) {
    for (const key of refs) {
      const owner = ownerOf(key, view);
      if (owner !== member)
        violations.push(`after quiescence ${member} holds the dependency refs of ${key}, which ${owner ?? 'nobody'} owns`);
    }
    for (const key of KEYS) {
      if (ownerOf(key, view) === member && !refs.has(key))
        violations.push(`after quiescence ${member} owns ${key} and holds none of its dependency refs`);
    }
  }
  for (const [key, state] of keys) {
    const owner = ownerOf(key, view);
    if (owner === undefined || !running.has(owner)) violations.push(`after quiescence ${key} has no running owner`);
    if (state.applied?.version !== state.version && state.version > 1) {
      violations.push(`after quiescence ${key} is at version ${state.version}, the last applied is ${state.applied?.version ?? 'none'}`);
    }
  }

  // Stop whatever still runs, so that no timer outlives the run.
  for (const { shard } of running.values()) shard.stop();
  running.clear();
  void runs;
  return { acts, handoffs, violations };
}

/**
 * Checks {@link runShardScenario} over `numRuns` random scenarios; a failure throws fast-check's report (seed, path,
 * counterexample) at once, unshrunk: a run takes about 100 ms, and shrinking one takes minutes (replay it with the seed
 * and path, then cut it down by hand into a fixed case).
 */
export async function checkShardModel(
  options: ElectorCheckOptions & ShardModelOptions,
): Promise<{ seed: number; acts: number; handoffs: number }> {
  let acts = 0;
  let handoffs = 0;
  const run = (scenario: ShardScenario): Promise<ShardRunReport> => runShardScenario(scenario, options);
  const arbitrary = options.scenarios === 'handoffs' ? handoffScenarioArbitrary : shardScenarioArbitrary;
  const seed = await checkScenarios(arbitrary, run, { ...options, shrink: false }, (report) => {
    acts += report.acts;
    handoffs += report.handoffs;
  });
  return { seed, acts, handoffs };
}
