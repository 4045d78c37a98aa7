// The phases of a benchmark session: cold start, updates, idle and restart, each measured.
import { appendFileSync } from 'node:fs';
import { contentHash } from '../operator/dependencies/content-hash.js';
import { CONFIGMAPS } from '../operator/kube/resources.js';
import { CUSTOM_APPS } from '../operator/customapp/custom-app.js';
import { idleFigures } from './idle.js';
import { configMapData, imageAt, type PlannedApp } from './load.js';
import type { ColdStartResult, IdleResult, MemoryResult, PhaseResult, RestartResult } from './results.js';
import { diffCpu } from './cpu.js';
import { StatusObserver } from './observers.js';
import { diffSteps, PhaseMeter, POLL_MS, ServerWindow, sleep, type Session } from './session-state.js';
import { addCounts, diffCounts, summarize } from './stats.js';

/** A write the harness made and what it should cause. */
interface Expectation {
  /** The Deployment that should change (`namespace/name`). */
  readonly deployment: string;
  /** When the write was sent. */
  readonly sentAt: number;
  readonly hash?: string;
  readonly image?: string;
}

/** A ConfigMap write, for the API server's delivery floor. */
export interface DeliveryProbe {
  readonly key: string;
  readonly sentAt: number;
  readonly resourceVersion: string;
}

/** Runs `writes` at `perSecond`, each started on schedule without waiting for the previous one. */
export async function paced<T>(items: readonly T[], perSecond: number, write: (item: T) => Promise<void>): Promise<void> {
  const interval = 1000 / perSecond;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let index = 0; index < items.length; index += 1) {
    const wait = started + index * interval - performance.now();
    if (wait > 0) await sleep(wait);
    inFlight.push(write(items[index]!));
  }
  await Promise.all(inFlight);
}

/** However slow an operator is, an expected change not seen this long after the phase's last write is missed. */
const MISS_CAP_MS = 300_000;

/**
 * Waits until `met` says every expectation is met (its latency), or until `missAfterMs` passed with no progress since
 * the last write or the last expectation met (a slow participant that is still catching up is not cut short; one that
 * dropped the update is). Answers each expectation's latency, undefined for a miss.
 */
export async function awaitMet<E extends { readonly sentAt: number }>(
  session: Pick<Session, 'now' | 'status' | 'options'>,
  expectations: readonly E[],
  met: (expectation: E) => number | undefined,
  what: string,
): Promise<(number | undefined)[]> {
  const lastWrite = Math.max(...expectations.map((expectation) => expectation.sentAt));
  let lastProgress = lastWrite;
  let pending = [...expectations];
  while (pending.length > 0 && session.now() < Math.min(lastProgress + session.options.profile.missAfterMs, lastWrite + MISS_CAP_MS)) {
    const before = pending.length;
    pending = pending.filter((expectation) => met(expectation) === undefined);
    if (pending.length < before) lastProgress = Math.max(lastProgress, session.now());
    session.status(`${what}: ${expectations.length - pending.length}/${expectations.length} Deployments updated`);
    if (pending.length > 0) await sleep(POLL_MS);
  }
  return expectations.map(met);
}

/** {@link awaitMet} for a Deployment carrying the expected hash or image; answers the latencies and the misses. */
async function awaitExpectations(
  session: Session,
  expectations: readonly Expectation[],
  what: string,
): Promise<{ latencies: number[]; missed: number }> {
  const met = (expectation: Expectation): number | undefined => {
    const sighting = session.deployments
      .changesSince(expectation.deployment, expectation.sentAt)
      .find(
        (seen) =>
          (expectation.hash === undefined || seen.hash === expectation.hash) &&
          (expectation.image === undefined || seen.image === expectation.image),
      );
    return sighting ? sighting.at - expectation.sentAt : undefined;
  };
  const seen = await awaitMet(session, expectations, met, what);
  const latencies = seen.filter((latency): latency is number => latency !== undefined);
  // BENCH_LATENCY_DUMP=file: every expectation as a JSON line (epoch ms), to line up with the operators' trace lines.
  if (process.env.BENCH_LATENCY_DUMP) {
    const lines = expectations.map((expectation, index) =>
      JSON.stringify({
        what,
        deployment: expectation.deployment,
        sentAt: performance.timeOrigin + expectation.sentAt,
        latencyMs: seen[index],
      }),
    );
    appendFileSync(process.env.BENCH_LATENCY_DUMP, `${lines.join('\n')}\n`);
  }
  return { latencies, missed: expectations.length - latencies.length };
}

/** Write → the raw watcher's sighting of each probed ConfigMap write (the API server's delivery floor). */
export function floorOf(session: Pick<Session, 'deliveries'>, probes: readonly DeliveryProbe[]): number[] {
  return probes.flatMap((probe) => {
    const arrival = session.deliveries.arrival(probe.key, probe.resourceVersion);
    return arrival === undefined ? [] : [arrival - probe.sentAt];
  });
}

/** Writes a new version of a ConfigMap; answers the probe of the write. */
export async function updateConfigMap(session: Pick<Session, 'configMaps' | 'now' | 'client'>, key: string): Promise<DeliveryProbe> {
  const [namespace, name] = key.split('/') as [string, string];
  const current = session.configMaps.get(key)!;
  const version = current.version + 1;
  const data = configMapData(name, version);
  session.configMaps.set(key, { version, hash: contentHash({ data }) });
  const sentAt = session.now();
  const written = await session.client.patch(CONFIGMAPS, namespace, name, 'merge', { data });
  return { key, sentAt, resourceVersion: written.metadata.resourceVersion ?? '' };
}

/** Picks `count` items spread evenly over `items`. */
export function spread<T>(items: readonly T[], count: number): T[] {
  if (items.length === 0) return [];
  const step = items.length / Math.min(count, items.length);
  return Array.from({ length: Math.min(count, items.length) }, (_, index) => items[Math.floor(index * step)]!);
}

/**
 * Spawns the operator on the full load and waits until every Deployment carries its ConfigMap's hash (at most
 * 3 minutes, or 60 ms per CustomApp), then until it settles.
 */
export async function coldStart(session: Session): Promise<ColdStartResult> {
  const { size } = session.options;
  const window = await ServerWindow.open(session);
  const cpuBefore = session.cpu();
  const spawnedAt = session.now();
  await session.launch();
  const apps = session.plan.apps.map((app) => `${app.namespace}/${app.name}`);
  const timeoutMs = Math.max(180_000, size * 60);
  const convergedAt = (key: string): number | undefined =>
    session.deployments.changesSince(key, spawnedAt).find((seen) => seen.hash === session.expectedHash(key))?.at;
  let pending = apps;
  while (pending.length > 0 && session.now() - spawnedAt < timeoutMs) {
    session.assertAlive();
    pending = pending.filter((key) => convergedAt(key) === undefined);
    session.status(
      `cold start: ${size - pending.length}/${size} Deployments carry their ConfigMap's hash (${((session.now() - spawnedAt) / 1000).toFixed(1)} s)`,
    );
    if (pending.length > 0) await sleep(POLL_MS);
  }
  const times = apps.map(convergedAt);
  const converged = times.filter((time) => time !== undefined).length;
  if (converged === size) {
    session.status('cold start: settling');
    await session.settle();
  }
  const server = await window.close();
  const stats = await session.stats();
  const cpuSeconds = diffCpu(session.cpu(), cpuBefore);
  return {
    operations: size,
    durationMs: session.now() - spawnedAt,
    cpuSeconds,
    reconcileSteps: diffSteps(stats.reconcileSteps, undefined),
    requests: server?.requests ?? stats.requests,
    renewals: server?.renewals,
    selfRequests: stats.requests,
    reconciles: stats.reconciles,
    deploymentChanges: session.deployments.changeCount,
    expected: size,
    missed: size - converged,
    converged,
    convergedMs: converged === size ? Math.max(...(times as number[])) - spawnedAt : undefined,
  };
}

/**
 * The referenced-update phase's writes, the same for CustomApps and workloads: the own ConfigMaps of the profile's
 * `referencedUpdates` apps spread over the load, each written once at the profile's pace. Answers the writes' probes
 * and what `expect` makes of each (the change it should cause).
 */
export async function writeOwnConfigMaps<E>(
  session: Pick<Session, 'configMaps' | 'now' | 'client' | 'plan' | 'options'>,
  expect: (app: PlannedApp, probe: DeliveryProbe) => E,
): Promise<{ writes: number; probes: DeliveryProbe[]; expectations: E[] }> {
  const { profile } = session.options;
  const targets = spread(
    session.plan.apps.filter((app) => !app.sharer),
    profile.referencedUpdates,
  );
  const probes: DeliveryProbe[] = [];
  const expectations: E[] = [];
  await paced(targets, profile.writesPerSecond, async (app) => {
    const probe = await updateConfigMap(session, `${app.namespace}/${app.configMapName}`);
    probes.push(probe);
    expectations.push(expect(app, probe));
  });
  return { writes: targets.length, probes, expectations };
}

/** A delivery phase's figures: the latencies, the API floor of its writes, how many changes were expected and missed. */
export function deliveryFigures(
  session: Pick<Session, 'deliveries'>,
  probes: readonly DeliveryProbe[],
  latencies: readonly number[],
  expected: number,
  missed: number,
): Partial<PhaseResult> {
  return { latencyMs: summarize([...latencies]), floorMs: summarize(floorOf(session, probes)), expected, missed };
}

/** Writes distinct own ConfigMaps at a steady pace; each CustomApp's Deployment must roll to the new hash. */
export async function referencedUpdates(session: Session): Promise<PhaseResult> {
  const meter = await PhaseMeter.start(session);
  const { writes, probes, expectations } = await writeOwnConfigMaps(session, (app, probe) => ({
    deployment: `${app.namespace}/${app.name}`,
    sentAt: probe.sentAt,
    hash: session.configMaps.get(probe.key)!.hash,
  }));
  const { latencies, missed } = await awaitExpectations(session, expectations, 'referenced updates');
  await session.settle();
  return meter.finish(writes, deliveryFigures(session, probes, latencies, expectations.length, missed));
}

/** Writes ConfigMaps no CustomApp names: ideally nothing follows. */
export async function unrelatedUpdates(session: Session): Promise<PhaseResult> {
  const { profile } = session.options;
  const unrelated = session.plan.configMaps.filter((configMap) => configMap.role === 'unrelated');
  const targets = spread(unrelated, profile.unrelatedUpdates);
  const meter = await PhaseMeter.start(session);
  const probes: DeliveryProbe[] = [];
  await paced(targets, profile.writesPerSecond, async (configMap) => {
    session.status(`unrelated updates: ${probes.length + 1}/${targets.length} written`);
    probes.push(await updateConfigMap(session, `${configMap.namespace}/${configMap.name}`));
  });
  await sleep(profile.settleMs);
  await session.settle();
  return meter.finish(targets.length, { floorMs: summarize(floorOf(session, probes)) });
}

/** Image changes, and the sharers' configMapName handoffs to a ConfigMap of their own. */
export async function specUpdates(session: Session): Promise<PhaseResult> {
  const { profile } = session.options;
  const own = session.plan.apps.filter((app) => !app.sharer);
  const imageTargets = spread([...own].reverse(), profile.imageUpdates);
  const handoffs = session.plan.apps.filter((app) => app.handoffTo);
  const meter = await PhaseMeter.start(session);
  const expectations: Expectation[] = [];
  type SpecWrite = { app: PlannedApp; kind: 'image' | 'handoff' };
  const writes: SpecWrite[] = [
    ...imageTargets.map((app) => ({ app, kind: 'image' as const })),
    ...handoffs.map((app) => ({ app, kind: 'handoff' as const })),
  ];
  await paced(writes, profile.writesPerSecond, async ({ app, kind }) => {
    const key = `${app.namespace}/${app.name}`;
    const sentAt = session.now();
    if (kind === 'image') {
      const image = imageAt(1);
      await session.client.patch(CUSTOM_APPS, app.namespace, app.name, 'merge', { spec: { image } });
      expectations.push({ deployment: key, sentAt, image });
    } else {
      await session.client.patch(CUSTOM_APPS, app.namespace, app.name, 'merge', { spec: { configMapName: app.handoffTo } });
      session.appConfigMap.set(key, app.handoffTo!);
      expectations.push({ deployment: key, sentAt, hash: session.expectedHash(key) });
    }
  });
  const { latencies, missed } = await awaitExpectations(session, expectations, 'spec updates');
  await session.settle();
  return meter.finish(writes.length, { latencyMs: summarize(latencies), expected: expectations.length, missed });
}

/** Two rounds of updates to each namespace's shared ConfigMap, after some of its sharers switched away. */
export async function sharedUpdates(session: Session): Promise<PhaseResult> {
  const meter = await PhaseMeter.start(session);
  const statuses = new StatusObserver(session.client, session.now);
  await statuses.start();
  const statusLatencies: number[] = [];
  const latencies: number[] = [];
  const probes: DeliveryProbe[] = [];
  let expected = 0;
  let missed = 0;
  const sharedKeys = session.plan.configMaps
    .filter((configMap) => configMap.role === 'shared')
    .map((configMap) => `${configMap.namespace}/${configMap.name}`);
  for (let round = 1; round <= 2; round += 1) {
    const expectations: Expectation[] = [];
    for (const key of sharedKeys) {
      const probe = await updateConfigMap(session, key);
      probes.push(probe);
      const [namespace, name] = key.split('/');
      for (const [app, configMap] of session.appConfigMap) {
        if (configMap === name && app.startsWith(`${namespace}/`))
          expectations.push({ deployment: app, sentAt: probe.sentAt, hash: session.configMaps.get(key)!.hash });
      }
    }
    const result = await awaitExpectations(session, expectations, `shared updates, round ${round}`);
    latencies.push(...result.latencies);
    expected += expectations.length;
    missed += result.missed;
    await session.settle();
    for (const expectation of expectations) {
      const at = statuses.sawHash(expectation.deployment, expectation.hash!, expectation.sentAt);
      if (at !== undefined) statusLatencies.push(at - expectation.sentAt);
    }
  }
  await statuses.stop();
  return meter.finish(sharedKeys.length * 2, {
    latencyMs: summarize(latencies),
    statusLatencyMs: summarize(statusLatencies),
    floorMs: summarize(floorOf(session, probes)),
    expected,
    missed,
  });
}

/** Nothing happens for the idle window: the operator's watch renewals, measured and extrapolated (see idle.ts). */
export async function idle(session: Session): Promise<IdleResult> {
  const { profile } = session.options;
  await session.settle();
  const before = await session.stats();
  const window = await ServerWindow.open(session);
  const watchStreams = (await memoryAfterSync(session, false)).openWatches;
  const until = session.now() + profile.idleSeconds * 1000;
  while (session.now() < until) {
    session.status(`idle: ${Math.ceil((until - session.now()) / 1000)} s left`);
    await sleep(Math.min(1000, until - session.now()));
  }
  const server = await window.close();
  const toMs = Date.now();
  const all = server?.requests ?? diffCounts((await session.stats()).requests, before.requests);
  const audit = session.server.audit;
  if (audit) {
    return idleFigures({
      requests: audit.between(0, toMs),
      fromMs: window.fromMs,
      toMs,
      serverWatchTimeoutSeconds: profile.serverWatchTimeoutSeconds,
      renewals: server?.renewals ?? {},
      all,
    });
  }
  // Without an audit log: every list and watch of the window is a renewal, and there is no model to extrapolate with.
  const renewals = (all.watch ? Object.values(all.watch) : []).concat(all.list ? Object.values(all.list) : []).reduce((a, b) => a + b, 0);
  const windowSeconds = (toMs - window.fromMs) / 1000;
  return {
    windowSeconds,
    serverWatchTimeoutSeconds: 0,
    watchStreams,
    renewals,
    measuredPerWatchHour: watchStreams > 0 ? renewals / watchStreams / (windowSeconds / 3600) : 0,
    extrapolatedPerWatchHour: undefined,
    periods: { clientTimeout: 0, clientClosed: 0, serverDefault: 0 },
    requestsPerRenewal: 1,
    requests: all,
  };
}

/** SIGTERM, then a new process on the same cluster: what it costs to get back to work, and what it rolls. */
export async function restart(session: Session): Promise<RestartResult> {
  const stopFrom = session.now();
  await session.operator!.stop();
  const stopMs = session.now() - stopFrom;
  const window = await ServerWindow.open(session);
  const cpuBefore = session.cpu();
  const changesBefore = session.deployments.changeCount;
  const spawnedAt = session.now();
  await session.launch();
  const settled = await session.settle(Math.max(120_000, session.options.size * 60));
  const settledMs = settled ? session.now() - spawnedAt - session.options.profile.settleMs : undefined;
  const server = await window.close();
  const stats = await session.stats();
  // The new process's first lists and watches repeat the streams the old one just closed: not renewals here.
  const requests = server ? addCounts(server.requests, server.renewals ?? {}) : stats.requests;
  return {
    operations: 1,
    durationMs: session.now() - spawnedAt,
    requests,
    selfRequests: stats.requests,
    reconciles: stats.reconciles,
    deploymentChanges: session.deployments.changeCount - changesBefore,
    cpuSeconds: diffCpu(session.cpu(), cpuBefore),
    reconcileSteps: diffSteps(stats.reconcileSteps, undefined),
    settledMs,
    stopMs,
  };
}

/** The operator's memory (after a forced GC when `gc`), its open watches as the server sees them, and its caches. */
export async function memoryAfterSync(
  session: Session,
  gc = true,
): Promise<{ memory: MemoryResult; openWatches: number; cachedObjects: Record<string, number> }> {
  const stats = await session.stats(gc);
  const { audit, counters } = session.server;
  let openWatches = stats.openWatches;
  if (audit) {
    await audit.refresh();
    openWatches = audit.openWatchesAt(Date.now()).length;
  } else if (counters) {
    openWatches = (await counters()).openWatches;
  }
  return {
    memory: {
      heapUsedBytes: stats.heapUsedBytes,
      heapTotalBytes: stats.heapTotalBytes,
      rssBytes: stats.rssBytes,
      gcForced: stats.gcForced,
    },
    openWatches,
    cachedObjects: stats.cachedObjects,
  };
}
