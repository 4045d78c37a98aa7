// One shard-count session: N shards on a fresh API server and the load; cold start, RSS per shard, then the failovers.
import { join } from 'node:path';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { Lease } from '../../operator/kube/objects.js';
import { LEASES } from '../../operator/kube/resources.js';
import { RING_SELECTOR, shardLeaseName } from '../../operator/manager/sharding.js';
import { ownerOf, viewOf } from '../../operator/shard/ring.js';
import { RING_VIEW_ANNOTATION } from '../../operator/shard/shard.js';
import { customAppObject, forEachConcurrent, type PlannedApp } from '../load.js';
import { DeploymentObserver } from '../observers.js';
import type { BenchTarget, Profile } from '../options.js';
import { spread, updateConfigMap } from '../phases.js';
import type { Progress } from '../progress.js';
import { OPERATOR_NAMESPACE } from '../server.js';
import { createLoad, openSession, POLL_MS, sleep, untilQuiet, type Session } from '../session-state.js';
import { type LatencySummary, summarize } from '../stats.js';
import { type ShardCommand, type ShardProcess, startShard } from './process.js';

/** The shards' Lease duration: the operator's default (`--leader-elect-lease-duration`), which the goal is stated in. */
export const LEASE_DURATION_MS = 15_000;
/** ConfigMap writes (each to another app's own ConfigMap) right after a shard stops: about 1/N of them are its. */
const FAILOVER_UPDATES = 200;
/** Concurrent ConfigMap writes of a failover phase. */
const WRITE_CONCURRENCY = 32;

/** One failover: a shard stopped, then ConfigMap writes; each app's Deployment must roll, the stopped shard's too. */
export interface FailoverResult {
  readonly signal: 'SIGKILL' | 'SIGTERM';
  /** Writes made right after the stop. */
  readonly updates: number;
  /** Stop → the last write answered. */
  readonly writesMs: number;
  /** Of the written apps, those the stopped shard owned (by the ring, in the view all shards had agreed on). */
  readonly stoppedShardApps: number;
  /** The stopped shard's apps: stop → each Deployment rolled to its new hash, for those seen. */
  readonly sinceStopMs?: LatencySummary;
  /** The other shards' apps: their write → their Deployment rolled (how much the view change held the survivors). */
  readonly othersSinceWriteMs?: LatencySummary;
  /** Writes whose Deployment never rolled within the phase. */
  readonly missed: number;
}

/** The figures of one session. */
export interface ShardSessionResult {
  readonly shards: number;
  readonly size: number;
  serverVersion?: string;
  /** First spawn → the last Deployment carrying its ConfigMap's hash. */
  coldStartMs?: number;
  converged?: number;
  /** Each shard's RSS after the cold start settled, in bytes. */
  rssBytes?: number[];
  killed?: FailoverResult;
  graceful?: FailoverResult;
  readonly leaseDurationMs: number;
  error?: string;
}

/** What one session needs. */
export interface ShardSessionOptions {
  readonly shards: number;
  readonly size: number;
  readonly profile: Profile;
  readonly target: BenchTarget;
  readonly command: ShardCommand;
  readonly logDir: string;
  readonly progress: Progress;
  readonly label: string;
}

/** The parts of a bench session a shard session uses. */
type ShardSession = Pick<Session, 'now' | 'configMaps' | 'appConfigMap' | 'status' | 'client' | 'server' | 'plan' | 'deployments'>;

/** A session under way: its API server and observers, the shards running now (by identity), and its output. */
interface ShardRun {
  readonly session: ShardSession;
  readonly running: Map<string, ShardProcess>;
  readonly status: (text: string) => void;
  readonly log: (line: string) => void;
}

/** Runs one shard count at one size on a fresh API server; a failure ends the session with the figures so far. */
export async function runShardSession(options: ShardSessionOptions): Promise<ShardSessionResult> {
  const result: ShardSessionResult = { shards: options.shards, size: options.size, leaseDurationMs: LEASE_DURATION_MS };
  const status = (text: string): void => options.progress.status(`${options.label} ${text}`);
  const log = (line: string): void => options.progress.log(`${options.label} ${line}`);
  const session = {
    now: () => performance.now(),
    configMaps: new Map<string, { version: number; hash: string }>(),
    appConfigMap: new Map<string, string>(),
    status,
  } as ShardSession;
  const run: ShardRun = { session, running: new Map(), status, log };
  const { running } = run;
  let next = 0;
  const spawnShard = (): ShardProcess => {
    const identity = `shard-${next++}`;
    const shard = startShard(
      options.command,
      session.server.operatorKubeconfigPath,
      identity,
      join(options.logDir, `shards-${options.shards}-${options.size}-${identity}.log`),
    );
    running.set(identity, shard);
    return shard;
  };
  try {
    ({ server: session.server, client: session.client, plan: session.plan } = await openSession(options, {}));
    result.serverVersion = session.server.version;
    await createLoad(session, async (app) => {
      await session.client.create(CUSTOM_APPS, app.namespace, customAppObject(app));
      session.appConfigMap.set(`${app.namespace}/${app.name}`, app.configMapName);
    });
    session.deployments = new DeploymentObserver(session.client, session.now);
    await session.deployments.start();

    const spawnedAt = session.now();
    for (let index = 0; index < options.shards; index += 1) spawnShard();
    await coldStart(run, spawnedAt, options.size, result);
    await settled(session, running, options.profile.settleMs, status);
    result.rssBytes = [...running.values()].map((shard) => shard.rssBytes() ?? 0);
    log(`RSS per shard: ${result.rssBytes.map((bytes) => (bytes / 2 ** 20).toFixed(0)).join(', ')} MiB`);
    if (options.shards < 2) return result;

    const samples = spread(
      session.plan.apps.filter((app) => !app.sharer),
      FAILOVER_UPDATES * 2,
    );
    result.killed = await failover(
      run,
      'SIGKILL',
      samples.filter((_, index) => index % 2 === 0),
    );
    // Back to N shards (a new member: the killed one's Lease lapsed) before the graceful stop.
    spawnShard();
    await settled(session, running, options.profile.settleMs, status);
    result.graceful = await failover(
      run,
      'SIGTERM',
      samples.filter((_, index) => index % 2 === 1),
    );
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    log(`failed: ${result.error}`);
  } finally {
    await Promise.all([...running.values()].map((shard) => shard.stop('SIGTERM').catch(() => undefined)));
    await session.deployments?.stop().catch(() => undefined);
    session.client?.close();
    await session.server?.stop().catch(() => undefined);
  }
  return result;
}

/** Waits until every app's Deployment carries its ConfigMap's hash, and records the cold start in `result`. */
async function coldStart(
  { session, running, status, log }: ShardRun,
  spawnedAt: number,
  size: number,
  result: ShardSessionResult,
): Promise<void> {
  const expectedHash = (key: string): string => session.configMaps.get(`${key.split('/')[0]}/${session.appConfigMap.get(key)}`)!.hash;
  const apps = session.plan.apps.map((app) => `${app.namespace}/${app.name}`);
  const convergedAt = (key: string): number | undefined =>
    session.deployments.changesSince(key, spawnedAt).find((seen) => seen.hash === expectedHash(key))?.at;
  const timeoutMs = Math.max(180_000, size * 60);
  let pending = apps;
  while (pending.length > 0 && session.now() - spawnedAt < timeoutMs) {
    assertAlive(running);
    pending = pending.filter((key) => convergedAt(key) === undefined);
    status(`cold start: ${apps.length - pending.length}/${apps.length} converged (${((session.now() - spawnedAt) / 1000).toFixed(1)} s)`);
    if (pending.length > 0) await sleep(POLL_MS);
  }
  result.converged = apps.length - pending.length;
  if (pending.length > 0) throw new Error(`did not converge from cold within ${timeoutMs / 1000} s (${result.converged}/${apps.length})`);
  result.coldStartMs = Math.max(...apps.map((key) => convergedAt(key)!)) - spawnedAt;
  log(`cold start: converged in ${(result.coldStartMs / 1000).toFixed(1)} s`);
}

/** One written app: the hash its Deployment must roll to, when it was written, and whether the stopped shard owned it. */
interface Expectation {
  readonly key: string;
  readonly hash: string;
  readonly sentAt: number;
  readonly stoppedShard: boolean;
}

/** Stops the first running shard with `signal`, writes each sample app's ConfigMap, and measures the roll of each. */
async function failover(run: ShardRun, signal: 'SIGKILL' | 'SIGTERM', sample: readonly PlannedApp[]): Promise<FailoverResult> {
  const { session, running, status, log } = run;
  const [victim] = running.values();
  status(`${signal} ${victim!.identity}, then ${sample.length} ConfigMap writes`);
  const stoppedAt = session.now();
  const stopped = victim!.stop(signal);
  running.delete(victim!.identity);
  const view = viewOf([...running.keys(), victim!.identity].map(shardLeaseName));
  const expectations: Expectation[] = [];
  await forEachConcurrent(sample, WRITE_CONCURRENCY, async (app) => {
    const probe = await updateConfigMap(session, `${app.namespace}/${app.configMapName}`);
    const key = `${app.namespace}/${app.name}`;
    const stoppedShard = ownerOf(key, view) === shardLeaseName(victim!.identity);
    expectations.push({ key, hash: session.configMaps.get(probe.key)!.hash, sentAt: probe.sentAt, stoppedShard });
  });
  const writesMs = session.now() - stoppedAt;
  await stopped;
  const seenAt = (key: string, hash: string): number | undefined =>
    session.deployments.changesSince(key, stoppedAt).find((seen) => seen.hash === hash)?.at;
  const deadline = stoppedAt + LEASE_DURATION_MS + 60_000;
  while (expectations.some(({ key, hash }) => seenAt(key, hash) === undefined) && session.now() < deadline) {
    assertAlive(running);
    await sleep(POLL_MS);
  }
  const latencies = (of: readonly Expectation[], from: (expectation: Expectation) => number): number[] =>
    of.flatMap((expectation) => {
      const at = seenAt(expectation.key, expectation.hash);
      return at === undefined ? [] : [at - from(expectation)];
    });
  const stoppedShards = expectations.filter((expectation) => expectation.stoppedShard);
  const outcome: FailoverResult = {
    signal,
    updates: expectations.length,
    writesMs,
    stoppedShardApps: stoppedShards.length,
    sinceStopMs: summarize(latencies(stoppedShards, () => stoppedAt)),
    othersSinceWriteMs: summarize(
      latencies(
        expectations.filter((expectation) => !expectation.stoppedShard),
        (expectation) => expectation.sentAt,
      ),
    ),
    missed: expectations.filter(({ key, hash }) => seenAt(key, hash) === undefined).length,
  };
  const seconds = (ms: number | undefined): string => ((ms ?? Number.NaN) / 1000).toFixed(1);
  log(
    `${signal}: the stopped shard's ${outcome.stoppedShardApps} apps rolled again ${seconds(outcome.sinceStopMs?.max)} s after the stop at the latest; ` +
      `the others' ${outcome.updates - outcome.stoppedShardApps} within ${seconds(outcome.othersSinceWriteMs?.max)} s of their write; ` +
      `writes took ${seconds(writesMs)} s, ${outcome.missed} missed`,
  );
  return outcome;
}

function assertAlive(running: ReadonlyMap<string, ShardProcess>): void {
  const dead = [...running.values()].filter((shard) => !shard.alive).map((shard) => shard.identity);
  if (dead.length > 0) throw new Error(`shard ${dead.join(', ')} exited on its own; see its log`);
}

/**
 * Waits until every running shard's Lease publishes a drained view of exactly the running shards, and then until no
 * Deployment changed for `settleMs`.
 */
async function settled(
  session: Pick<Session, 'client' | 'deployments' | 'now'>,
  running: ReadonlyMap<string, ShardProcess>,
  settleMs: number,
  status: (text: string) => void,
): Promise<void> {
  const timeoutMs = 120_000;
  const agreed = await untilQuiet(session.now, settleMs, timeoutMs, async () => {
    assertAlive(running);
    const leases = (await session.client.list<Lease>(LEASES, { namespace: OPERATOR_NAMESPACE, labelSelector: RING_SELECTOR })).items;
    const views = [...running.keys()].map((identity) => {
      const lease = leases.find((each) => each.metadata.name === shardLeaseName(identity));
      return lease?.metadata.annotations?.[RING_VIEW_ANNOTATION] ?? '';
    });
    const ready = views.every((view) => view !== '' && view === views[0] && (JSON.parse(view) as unknown[]).length === running.size);
    status(`waiting for ${running.size} shards to agree on their view and settle`);
    return { signature: `${views.join('|')}|${session.deployments.changeCount}`, ready };
  });
  if (!agreed) throw new Error(`the ${running.size} shards did not agree on one view and settle within ${timeoutMs / 1000} s`);
}
