// One benchmark session: a fresh API server, the load, one participant's operator, and its phases measured.
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { contentHash } from '../operator/deps/content-hash.js';
import { KubeClient, type RequestSample } from '../operator/kube/client.js';
import { CONFIGMAPS, CUSTOM_APPS, NAMESPACES } from '../operator/kube/resources.js';
import { idleFigures } from './idle.js';
import { configMapData, configMapObject, customAppObject, forEachConcurrent, imageAt, namespaceObject, planLoad, type LoadPlan, type PlannedApp } from './load.js';
import { ConfigMapDeliveries, DeploymentObserver, type Clock } from './observers.js';
import { startOperatorProcess, type OperatorProcess, type RunnerCommand } from './operator-process.js';
import type { OperatorStats } from './operator-stats.js';
import { namespacesFor, type BenchTarget, type Participant, type Profile } from './options.js';
import type { Progress } from './progress.js';
import type { ColdStartResult, IdleResult, MemoryResult, PhaseResult, RestartResult, SessionResult } from './results.js';
import { startBenchServer, type BenchServer } from './server.js';
import { addCounts, countRequest, diffCounts, summarize, totalRequests, type RequestCounts } from './stats.js';

/** What a session needs. */
export interface SessionOptions {
  readonly participant: Participant;
  readonly size: number;
  readonly profile: Profile;
  readonly target: BenchTarget;
  /** Where the operator's log goes. */
  readonly logDir: string;
  readonly peerBinary?: string;
  readonly runner?: RunnerCommand;
  readonly progress: Progress;
  /** A short name for progress lines, e.g. `[2/12 ours 1k]`. */
  readonly label: string;
}

/** Concurrent writes while creating the load. */
const LOAD_CONCURRENCY = 32;
/** How often waits look at the observer and the operator. */
const POLL_MS = 100;

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

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
interface DeliveryProbe {
  readonly key: string;
  readonly sentAt: number;
  readonly resourceVersion: string;
}

/**
 * Everything the harness keeps while a session runs: the clients, the raw watchers, the operator process and the
 * current content of the load.
 */
class Session {
  readonly now: Clock = () => performance.now();
  readonly harnessRequests: RequestCounts = {};
  client!: KubeClient;
  server!: BenchServer;
  deployments!: DeploymentObserver;
  deliveries!: ConfigMapDeliveries;
  operator: OperatorProcess | undefined;
  plan!: LoadPlan;
  /** `namespace/name` of each ConfigMap → its current version and hash. */
  readonly configMaps = new Map<string, { version: number; hash: string }>();
  /** `namespace/name` of each CustomApp → the ConfigMap it names now. */
  readonly appConfigMap = new Map<string, string>();
  readonly notes: Record<string, number> = {};

  constructor(readonly options: SessionOptions) {}

  status(text: string): void {
    this.options.progress.status(`${this.options.label} ${text}`);
  }

  async start(): Promise<void> {
    const { profile, target } = this.options;
    this.status('starting the API server');
    this.server = await startBenchServer(target, { watchTimeoutSeconds: profile.serverWatchTimeoutSeconds });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(this.server.adminKubeconfigPath);
    this.client = await KubeClient.fromKubeConfig(kubeConfig, {
      userAgent: 'customapp-bench',
      onRequest: (sample: RequestSample) => countRequest(this.harnessRequests, sample.verb, sample.resource),
    });
    this.plan = planLoad({
      size: this.options.size,
      namespaces: namespacesFor(this.options.size),
      unrelatedConfigMaps: profile.unrelatedConfigMaps,
      handoffShare: profile.handoffShare,
    });
    await this.createLoad();
    this.deployments = new DeploymentObserver(this.client, this.now);
    this.deliveries = new ConfigMapDeliveries(this.client, this.now);
    await this.deployments.start();
    await this.deliveries.start();
  }

  private async createLoad(): Promise<void> {
    const { plan } = this;
    await forEachConcurrent(plan.namespaces, LOAD_CONCURRENCY, async (name) => {
      await this.client.create(NAMESPACES, undefined, namespaceObject(name));
    });
    let created = 0;
    const total = plan.configMaps.length + plan.apps.length;
    await forEachConcurrent(plan.configMaps, LOAD_CONCURRENCY, async (configMap) => {
      const object = configMapObject(configMap);
      await this.client.create(CONFIGMAPS, configMap.namespace, object);
      this.configMaps.set(`${configMap.namespace}/${configMap.name}`, { version: 0, hash: contentHash(object) });
      if (++created % 500 === 0) this.status(`creating the load: ${created}/${total} objects`);
    });
    await forEachConcurrent(this.plan.apps, LOAD_CONCURRENCY, async (app) => {
      await this.client.create(CUSTOM_APPS, app.namespace, customAppObject(app));
      this.appConfigMap.set(`${app.namespace}/${app.name}`, app.configMapName);
      if (++created % 500 === 0) this.status(`creating the load: ${created}/${total} objects`);
    });
  }

  /** The hash each CustomApp's Deployment should carry now. */
  expectedHash(appKey: string): string {
    const [namespace] = appKey.split('/');
    return this.configMaps.get(`${namespace}/${this.appConfigMap.get(appKey)}`)!.hash;
  }

  async launch(): Promise<OperatorProcess> {
    this.operator = await startOperatorProcess({
      participant: this.options.participant,
      kubeconfigPath: this.server.operatorKubeconfigPath,
      peerBinary: this.options.peerBinary,
      runner: this.options.runner,
      logPath: join(this.options.logDir, `${this.options.participant}-${this.options.size}.log`),
    });
    return this.operator;
  }

  /** Reads the operator's stats, failing fast when its process has died. */
  async stats(gc = false): Promise<OperatorStats> {
    const operator = this.operator!;
    return Promise.race([operator.stats(gc), operator.exited.then(() => {
      throw new Error(`${operator.participant} operator stopped`);
    })]);
  }

  /**
   * Waits until the operator is quiet: no request but watches (a watch is reported when it ends, and some
   * strategies renew watches all the time), no reconcile and no Deployment change for `settleMs`. Answers false
   * when that did not happen within `timeoutMs`.
   */
  async settle(timeoutMs = 120_000): Promise<boolean> {
    const { settleMs } = this.options.profile;
    const deadline = this.now() + timeoutMs;
    let signature = '';
    let quietSince = this.now();
    while (this.now() < deadline) {
      const stats = await this.stats();
      const { watch: _watches, ...work } = stats.requests;
      const next = `${stats.ready}|${totalRequests(work)}|${stats.reconciles}|${this.deployments.changeCount}`;
      if (next !== signature || !stats.ready) {
        signature = next;
        quietSince = this.now();
      } else if (this.now() - quietSince >= settleMs) {
        return true;
      }
      await sleep(POLL_MS * 2);
    }
    return false;
  }

  async stop(): Promise<void> {
    await this.operator?.stop().catch(() => undefined);
    await this.deployments?.stop().catch(() => undefined);
    await this.deliveries?.stop().catch(() => undefined);
    this.client?.close();
    await this.server?.stop();
  }
}

/** The operator's requests in a window as the server counted them, renewals apart when the server can tell. */
interface ServerCounts {
  readonly requests: RequestCounts;
  readonly renewals?: RequestCounts;
}

/**
 * A window of time over which the server counts the operator's requests: the audit log (envtest: renewals told
 * apart), or the emulator's per-user counters (a difference of two snapshots); undefined on `close` when the server
 * counts nothing, and the operator's own count stands in.
 */
class ServerWindow {
  private constructor(
    private readonly session: Session,
    readonly fromMs: number,
    private readonly countersBefore: RequestCounts | undefined,
  ) {}

  static async open(session: Session): Promise<ServerWindow> {
    const before = session.server.counters ? (await session.server.counters()).requests : undefined;
    return new ServerWindow(session, Date.now(), before);
  }

  async close(): Promise<ServerCounts | undefined> {
    const toMs = Date.now();
    const { audit, counters } = this.session.server;
    if (audit) {
      await audit.refresh();
      const { work, renewals } = audit.counts(this.fromMs, toMs);
      return { requests: work, renewals };
    }
    if (counters && this.countersBefore) return { requests: diffCounts((await counters()).requests, this.countersBefore) };
    return undefined;
  }
}

/** Server-side and self-counted requests of a phase, and what else moved during it. */
class PhaseMeter {
  private readonly fromClock: number;
  private readonly changesBefore: number;

  private constructor(private readonly session: Session, private readonly window: ServerWindow, private readonly before: OperatorStats) {
    this.fromClock = session.now();
    this.changesBefore = session.deployments.changeCount;
  }

  static async start(session: Session): Promise<PhaseMeter> {
    const before = await session.stats();
    return new PhaseMeter(session, await ServerWindow.open(session), before);
  }

  async finish(operations: number, extra: Partial<PhaseResult> = {}): Promise<PhaseResult> {
    const server = await this.window.close();
    const after = await this.session.stats();
    const selfRequests = diffCounts(after.requests, this.before.requests);
    return {
      operations,
      durationMs: this.session.now() - this.fromClock,
      requests: server?.requests ?? selfRequests,
      renewals: server?.renewals,
      selfRequests,
      reconciles: after.reconciles - this.before.reconciles,
      deploymentChanges: this.session.deployments.changeCount - this.changesBefore,
      ...extra,
    };
  }
}

/** Runs `writes` at `perSecond`, each started on schedule without waiting for the previous one. */
async function paced<T>(items: readonly T[], perSecond: number, write: (item: T) => Promise<void>): Promise<void> {
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
 * Waits until every expectation is met, or until `missAfterMs` passed with no progress since the last write or
 * the last expectation met (a slow strategy that is still catching up is not cut short; one that dropped the
 * update is). Answers the latencies and the misses.
 */
async function awaitExpectations(session: Session, expectations: readonly Expectation[], what: string): Promise<{ latencies: number[]; missed: number }> {
  const met = (expectation: Expectation): number | undefined => {
    const sighting = session.deployments.changesSince(expectation.deployment, expectation.sentAt).find((seen) =>
      (expectation.hash === undefined || seen.hash === expectation.hash) && (expectation.image === undefined || seen.image === expectation.image));
    return sighting ? sighting.at - expectation.sentAt : undefined;
  };
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
  const latencies = expectations.map(met).filter((latency): latency is number => latency !== undefined);
  return { latencies, missed: expectations.length - latencies.length };
}

function floorOf(session: Session, probes: readonly DeliveryProbe[]): number[] {
  return probes.flatMap((probe) => {
    const arrival = session.deliveries.arrival(probe.key, probe.resourceVersion);
    return arrival === undefined ? [] : [arrival - probe.sentAt];
  });
}

/** Writes a new version of a ConfigMap; answers the probe of the write. */
async function updateConfigMap(session: Session, key: string): Promise<DeliveryProbe> {
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
function spread<T>(items: readonly T[], count: number): T[] {
  if (items.length === 0) return [];
  const step = items.length / Math.min(count, items.length);
  return Array.from({ length: Math.min(count, items.length) }, (_, index) => items[Math.floor(index * step)]!);
}

async function coldStart(session: Session): Promise<ColdStartResult> {
  const { size } = session.options;
  const window = await ServerWindow.open(session);
  const spawnedAt = session.now();
  await session.launch();
  const apps = session.plan.apps.map((app) => `${app.namespace}/${app.name}`);
  const timeoutMs = Math.max(180_000, size * 60);
  const convergedAt = (key: string): number | undefined =>
    session.deployments.changesSince(key, spawnedAt).find((seen) => seen.hash === session.expectedHash(key))?.at;
  let pending = apps;
  while (pending.length > 0 && session.now() - spawnedAt < timeoutMs) {
    await session.stats(); // fails fast if the process died
    pending = pending.filter((key) => convergedAt(key) === undefined);
    session.status(`cold start: ${size - pending.length}/${size} Deployments carry their ConfigMap's hash (${((session.now() - spawnedAt) / 1000).toFixed(1)} s)`);
    if (pending.length > 0) await sleep(POLL_MS);
  }
  const times = apps.map(convergedAt);
  const converged = times.filter((time) => time !== undefined).length;
  session.status('cold start: settling');
  await session.settle();
  const server = await window.close();
  const stats = await session.stats();
  return {
    operations: size,
    durationMs: session.now() - spawnedAt,
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

async function referencedUpdates(session: Session): Promise<PhaseResult> {
  const { profile } = session.options;
  const own = session.plan.apps.filter((app) => !app.sharer);
  const targets = spread(own, profile.referencedUpdates);
  const meter = await PhaseMeter.start(session);
  const expectations: Expectation[] = [];
  const probes: DeliveryProbe[] = [];
  await paced(targets, profile.writesPerSecond, async (app) => {
    const probe = await updateConfigMap(session, `${app.namespace}/${app.configMapName}`);
    probes.push(probe);
    expectations.push({ deployment: `${app.namespace}/${app.name}`, sentAt: probe.sentAt, hash: session.configMaps.get(probe.key)!.hash });
  });
  const { latencies, missed } = await awaitExpectations(session, expectations, 'referenced updates');
  await session.settle();
  return meter.finish(targets.length, { latencyMs: summarize(latencies), floorMs: summarize(floorOf(session, probes)), expected: expectations.length, missed });
}

async function unrelatedUpdates(session: Session): Promise<PhaseResult> {
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

async function specUpdates(session: Session): Promise<PhaseResult> {
  const { profile } = session.options;
  const own = session.plan.apps.filter((app) => !app.sharer);
  const imageTargets = spread([...own].reverse(), profile.imageUpdates);
  const handoffs = session.plan.apps.filter((app) => app.handoffTo);
  const meter = await PhaseMeter.start(session);
  const expectations: Expectation[] = [];
  type SpecWrite = { app: PlannedApp; kind: 'image' | 'handoff' };
  const writes: SpecWrite[] = [...imageTargets.map((app) => ({ app, kind: 'image' as const })), ...handoffs.map((app) => ({ app, kind: 'handoff' as const }))];
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
async function sharedUpdates(session: Session): Promise<PhaseResult> {
  const meter = await PhaseMeter.start(session);
  const latencies: number[] = [];
  const probes: DeliveryProbe[] = [];
  let expected = 0;
  let missed = 0;
  const sharedKeys = session.plan.configMaps.filter((configMap) => configMap.role === 'shared').map((configMap) => `${configMap.namespace}/${configMap.name}`);
  for (let round = 1; round <= 2; round += 1) {
    const expectations: Expectation[] = [];
    for (const key of sharedKeys) {
      const probe = await updateConfigMap(session, key);
      probes.push(probe);
      const [namespace, name] = key.split('/');
      for (const [app, configMap] of session.appConfigMap) {
        if (configMap === name && app.startsWith(`${namespace}/`)) expectations.push({ deployment: app, sentAt: probe.sentAt, hash: session.configMaps.get(key)!.hash });
      }
    }
    const result = await awaitExpectations(session, expectations, `shared updates, round ${round}`);
    latencies.push(...result.latencies);
    expected += expectations.length;
    missed += result.missed;
    await session.settle();
  }
  return meter.finish(sharedKeys.length * 2, { latencyMs: summarize(latencies), floorMs: summarize(floorOf(session, probes)), expected, missed });
}

async function idle(session: Session): Promise<IdleResult> {
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
    return idleFigures({ requests: audit.between(0, toMs), fromMs: window.fromMs, toMs, serverWatchTimeoutSeconds: profile.serverWatchTimeoutSeconds, renewals: server?.renewals ?? {}, all });
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

async function restart(session: Session): Promise<RestartResult> {
  const stopFrom = session.now();
  await session.operator!.stop();
  const stopMs = session.now() - stopFrom;
  const window = await ServerWindow.open(session);
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
    settledMs,
    stopMs,
  };
}

/** The operator's memory (after a forced GC when `gc`), its open watches as the server sees them, and its caches. */
async function memoryAfterSync(session: Session, gc = true): Promise<{ memory: MemoryResult; openWatches: number; cachedObjects: Record<string, number> }> {
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
    memory: { heapUsedBytes: stats.heapUsedBytes, heapTotalBytes: stats.heapTotalBytes, rssBytes: stats.rssBytes, gcForced: stats.gcForced },
    openWatches,
    cachedObjects: stats.cachedObjects,
  };
}

/** Runs one participant at one size on a fresh API server; a failure ends the session with the phases done so far. */
export async function runSession(options: SessionOptions): Promise<SessionResult> {
  const session = new Session(options);
  const result: { -readonly [K in keyof SessionResult]: SessionResult[K] } = {
    participant: options.participant,
    size: options.size,
    namespaces: namespacesFor(options.size),
    target: options.target,
    serverVersion: '',
    requestSource: options.target === 'envtest' ? 'audit' : 'counters',
    missedTotal: 0,
    notes: session.notes,
  };
  const log = (line: string): void => options.progress.log(`${options.label} ${line}`);
  try {
    await session.start();
    result.serverVersion = session.server.version;
    result.coldStart = await coldStart(session);
    log(`cold start: ${result.coldStart.converged}/${options.size} converged${result.coldStart.convergedMs === undefined ? '' : ` in ${(result.coldStart.convergedMs / 1000).toFixed(1)} s`}`);
    result.afterSync = await memoryAfterSync(session);
    result.referenced = await referencedUpdates(session);
    log(`referenced updates: p99 ${result.referenced.latencyMs?.p99.toFixed(1) ?? '–'} ms, missed ${result.referenced.missed}/${result.referenced.expected}`);
    result.unrelated = await unrelatedUpdates(session);
    log(`unrelated updates: ${result.unrelated.reconciles} reconciles, ${totalRequests(result.unrelated.requests)} requests`);
    result.spec = await specUpdates(session);
    log(`spec updates: p99 ${result.spec.latencyMs?.p99.toFixed(1) ?? '–'} ms, missed ${result.spec.missed}/${result.spec.expected}`);
    result.shared = await sharedUpdates(session);
    log(`shared updates after handoff: missed ${result.shared.missed}/${result.shared.expected}`);
    result.idle = await idle(session);
    log(`idle: ${result.idle.renewals} renewals over ${result.idle.watchStreams} watch streams`);
    result.restart = await restart(session);
    log(`restart: settled ${result.restart.settledMs === undefined ? 'never' : `in ${(result.restart.settledMs / 1000).toFixed(1)} s`}, ${result.restart.deploymentChanges} Deployments rolled`);
    Object.assign(session.notes, (await session.stats()).notes ?? {});
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    log(`failed: ${result.error}`);
  } finally {
    await session.stop().catch((error: unknown) => log(`cleanup failed: ${String(error)}`));
  }
  result.missedTotal = [result.referenced, result.spec, result.shared].reduce((sum, phase) => sum + (phase?.missed ?? 0), 0);
  return result;
}
