// The state of one benchmark session: its API server, clients, raw watchers, operator process and load, and the meters of its phases.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { contentHash } from '../operator/dependencies/content-hash.js';
import { KubeClient } from '../operator/kube/client.js';
import type { RequestSample } from '../operator/kube/options.js';
import { CONFIGMAPS, NAMESPACES } from '../operator/kube/resources.js';
import { CUSTOM_APPS } from '../operator/customapp/custom-app.js';
import { type ProfileRecording, recordCpuProfiles } from './apiserver-profile.js';
import { type CpuSeconds, diffCpu, sessionCpu } from './cpu.js';
import { configMapObject, customAppObject, forEachConcurrent, namespaceObject, planLoad, type LoadPlan, type PlannedApp } from './load.js';
import { ConfigMapDeliveries, DeploymentObserver, type Clock } from './observers.js';
import { startOperatorProcess, type OperatorProcess, type RunnerCommand } from './operator-process.js';
import type { OperatorStats } from './operator-stats.js';
import { namespacesFor, type BenchTarget, type Participant, type Profile } from './options.js';
import type { Progress } from './progress.js';
import type { PhaseResult, ReconcileSteps, RestartResult, SessionResult } from './results.js';
import { startBenchServer, type BenchServer, type BenchServerOptions } from './server.js';
import { countRequest, diffCounts, totalRequests, type RequestCounts } from './stats.js';

/** What a session needs. */
export interface SessionOptions {
  readonly participant: Participant;
  readonly size: number;
  readonly profile: Profile;
  readonly target: BenchTarget;
  /** Where the operator's log goes. */
  readonly logDir: string;
  readonly peerBinary?: string;
  /** Reloader's binary, for the `reloader` participant. */
  readonly reloaderBinary?: string;
  readonly runner?: RunnerCommand;
  readonly progress: Progress;
  /** A short name for progress lines, e.g. `[2/12 ours 1k]`. */
  readonly label: string;
  /** End the session after the cold start and the memory figures (a CPU profile of the cold start alone). */
  readonly coldStartOnly?: boolean;
  /** The same memory budget for every participant (see OperatorProcessOptions.memoryLimitMiB). */
  readonly memoryLimitMiB?: number;
  /** Record kube-apiserver's CPU profile over the cold start, and keep the audit log, into this directory (see BenchOptions.apiserverProfileDir). */
  readonly apiserverProfileDir?: string;
}

/** Concurrent writes while creating the load. */
const LOAD_CONCURRENCY = 32;
/** How often waits look at the observer and the operator. */
export const POLL_MS = 100;

export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/**
 * What every benchmark session keeps, whoever the participant: its options and clock, the API server and the
 * harness's client to it, the load's plan and its ConfigMaps' contents, and the raw watcher of ConfigMap deliveries.
 */
export abstract class SessionBase {
  readonly now: Clock = () => performance.now();
  readonly harnessRequests: RequestCounts = {};
  server!: BenchServer;
  client!: KubeClient;
  plan!: LoadPlan;
  deliveries!: ConfigMapDeliveries;
  /** `namespace/name` of each ConfigMap → its current version and hash. */
  readonly configMaps = new Map<string, { version: number; hash: string }>();
  readonly notes: Record<string, number> = {};
  /** The participant's raw watcher, once {@link open} made it. */
  private watcher: { stop(): Promise<void> } | undefined;

  constructor(readonly options: SessionOptions) {}

  status(text: string): void {
    this.options.progress.status(`${this.options.label} ${text}`);
  }

  /**
   * Opens the API server and the client, creates the load (each planned app with `createApp`), then starts the raw
   * watchers: the participant's `observer`, made once the load exists, and the ConfigMap deliveries.
   */
  protected async open(
    createApp: (app: PlannedApp) => Promise<void>,
    observer: () => { start(): Promise<void>; stop(): Promise<void> },
  ): Promise<void> {
    ({
      server: this.server,
      client: this.client,
      plan: this.plan,
    } = await openSession(this.options, this.harnessRequests, { profiling: this.options.apiserverProfileDir !== undefined }));
    await createLoad(this, createApp);
    const watcher = observer();
    this.watcher = watcher;
    this.deliveries = new ConfigMapDeliveries(this.client, this.now);
    await watcher.start();
    await this.deliveries.start();
  }

  /**
   * Stops the participant's `process`, then the raw watchers, the client and the API server, each as far as it
   * started. The server stops whatever fails before it: a live envtest would keep the run from exiting.
   */
  protected async close(process: { stop(): Promise<void> } | undefined): Promise<void> {
    try {
      await process?.stop().catch(() => undefined);
      await this.watcher?.stop().catch(() => undefined);
      await this.deliveries?.stop().catch(() => undefined);
      this.client?.close();
      this.keepAuditLog();
    } finally {
      await this.server?.stop();
    }
  }

  /** Copies the audit log into the profile directory before the server removes it (sessions that record a profile). */
  private keepAuditLog(): void {
    const { apiserverProfileDir, participant, size } = this.options;
    const from = this.server?.auditLogPath;
    if (apiserverProfileDir === undefined || from === undefined) return;
    try {
      mkdirSync(apiserverProfileDir, { recursive: true });
      copyFileSync(from, join(apiserverProfileDir, `${participant}-${size}-audit.log`));
    } catch (error) {
      this.options.progress.log(`${this.options.label} the audit log was not kept: ${String(error)}`);
    }
  }
}

/** Everything the harness keeps while a CustomApp session runs: beside the base, the Deployments' watcher and the operator process. */
export class Session extends SessionBase {
  deployments!: DeploymentObserver;
  operator: OperatorProcess | undefined;
  /** `namespace/name` of each CustomApp → the ConfigMap it names now. */
  readonly appConfigMap = new Map<string, string>();

  async start(): Promise<void> {
    await this.open(
      async (app) => {
        await this.client.create(CUSTOM_APPS, app.namespace, customAppObject(app));
        this.appConfigMap.set(`${app.namespace}/${app.name}`, app.configMapName);
      },
      () => (this.deployments = new DeploymentObserver(this.client, this.now)),
    );
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
      memoryLimitMiB: this.options.memoryLimitMiB,
      logPath: join(this.options.logDir, `${this.options.participant}-${this.options.size}.log`),
    });
    return this.operator;
  }

  /**
   * CPU seconds used so far by the operator process (0 before it is spawned: a phase that spawns it counts from
   * there), kube-apiserver and etcd.
   */
  cpu(): CpuSeconds {
    return sessionCpu({ participant: this.operator, server: this.server.pids });
  }

  /**
   * Cuts the operator's phase profile (when the runner profiles its phases): what it sampled since the last cut is
   * written as `<participant>-<size>-<phase>.cpuprofile`, or dropped when no phase is named.
   */
  async cutProfile(phase?: string): Promise<void> {
    await this.operator?.cutProfile(phase === undefined ? undefined : `${this.options.participant}-${this.options.size}-${phase}`);
  }

  /** Throws when the operator process has exited. */
  assertAlive(): void {
    if (!this.operator?.alive) throw new Error(`${this.options.participant} operator exited; see its log in ${this.options.logDir}`);
  }

  /** Reads the operator's stats, failing fast when its process has died. */
  async stats(gc = false): Promise<OperatorStats> {
    const operator = this.operator!;
    return Promise.race([
      operator.stats(gc),
      operator.exited.then(() => {
        throw new Error(`${operator.participant} operator stopped`);
      }),
    ]);
  }

  /**
   * Waits until the operator is quiet: no request but watches (a watch is reported when it ends, and some
   * strategies renew watches all the time), no reconcile and no Deployment change for `settleMs`. Answers false
   * when that did not happen within `timeoutMs`.
   */
  async settle(timeoutMs = Math.max(120_000, this.options.size * 60)): Promise<boolean> {
    return untilQuiet(this.now, this.options.profile.settleMs, timeoutMs, async () => {
      const stats = await this.stats();
      const { watch: _watches, ...work } = stats.requests;
      return { signature: `${totalRequests(work)}|${stats.reconciles}|${this.deployments.changeCount}`, ready: stats.ready };
    });
  }

  /**
   * Starts recording kube-apiserver's CPU profile into the session's profile directory as
   * `<participant>-<size>-<stretch>-<n>.pb.gz`; undefined when the session records none.
   */
  recordApiserverProfile(stretch: string): ProfileRecording | undefined {
    const { apiserverProfileDir, participant, size } = this.options;
    if (apiserverProfileDir === undefined || !this.server.cpuProfile) return undefined;
    return recordCpuProfiles(this.server.cpuProfile, { dir: apiserverProfileDir, name: `${participant}-${size}-${stretch}` });
  }

  async stop(): Promise<void> {
    await this.close(this.operator);
  }
}

/**
 * Polls `look` until it says ready and its signature (what moved: requests, reconciles, Deployment changes) stayed
 * the same for `settleMs`. Answers false when that did not happen within `timeoutMs`.
 */
export async function untilQuiet(
  now: Clock,
  settleMs: number,
  timeoutMs: number,
  look: () => Promise<{ signature: string; ready: boolean }>,
): Promise<boolean> {
  const deadline = now() + timeoutMs;
  let signature = '';
  let quietSince = now();
  while (now() < deadline) {
    const seen = await look();
    if (seen.signature !== signature || !seen.ready) {
      signature = seen.signature;
      quietSince = now();
    } else if (now() - quietSince >= settleMs) {
      return true;
    }
    await sleep(POLL_MS * 2);
  }
  return false;
}

/** A session's result before its phases: who, at what size, on what, and nothing measured yet. */
export function emptyResult(
  options: SessionOptions,
  notes: Record<string, number>,
): { -readonly [K in keyof SessionResult]: SessionResult[K] } {
  return {
    participant: options.participant,
    size: options.size,
    namespaces: namespacesFor(options.size),
    target: options.target,
    serverVersion: '',
    requestSource: options.target === 'envtest' ? 'audit' : 'counters',
    missedTotal: 0,
    notes,
  };
}

/** A session's result while its phases fill it in. */
export type ResultInProgress = ReturnType<typeof emptyResult>;

/** What {@link runPhases} needs of a session: its notes, its API server, and how it starts and stops. */
export interface PhasedSession {
  readonly notes: Record<string, number>;
  readonly server: BenchServer;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the session and runs its phases, which fill in the result and log their figures; a failure ends the session
 * with the phases done so far (its message in `error`), and the session is stopped however the phases end.
 */
export async function runPhases(
  options: SessionOptions,
  session: PhasedSession,
  phases: (result: ResultInProgress, log: (line: string) => void) => Promise<void>,
): Promise<ResultInProgress> {
  const result = emptyResult(options, session.notes);
  const log = (line: string): void => options.progress.log(`${options.label} ${line}`);
  try {
    await session.start();
    result.serverVersion = session.server.version;
    await phases(result, log);
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    log(`failed: ${result.error}`);
  } finally {
    await session.stop().catch((error: unknown) => log(`cleanup failed: ${String(error)}`));
  }
  return result;
}

/** The log line of the referenced updates' phase. */
export function referencedLine(phase: PhaseResult): string {
  return `referenced updates: p99 ${phase.latencyMs?.p99.toFixed(1) ?? '–'} ms, missed ${phase.missed}/${phase.expected}`;
}

/** The log line of the restart phase. */
export function restartLine(phase: RestartResult): string {
  return `restart: settled ${phase.settledMs === undefined ? 'never' : `in ${(phase.settledMs / 1000).toFixed(1)} s`}, ${phase.deploymentChanges} Deployments rolled`;
}

/**
 * A fresh API server for a session, the harness's client to it (its requests counted in `harnessRequests`), and the
 * plan of the load.
 */
export async function openSession(
  options: Pick<SessionOptions, 'profile' | 'target' | 'size' | 'progress' | 'label'>,
  harnessRequests: RequestCounts,
  serverOptions: Pick<BenchServerOptions, 'profiling'> = {},
): Promise<{ server: BenchServer; client: KubeClient; plan: LoadPlan }> {
  const { profile, target } = options;
  options.progress.status(`${options.label} starting the API server`);
  const server = await startBenchServer(target, { watchTimeoutSeconds: profile.serverWatchTimeoutSeconds, ...serverOptions });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(server.adminKubeconfigPath);
  const client = await KubeClient.fromKubeConfig(kubeConfig, {
    userAgent: 'customapp-bench',
    onRequest: (sample: RequestSample) => countRequest(harnessRequests, sample.verb, sample.resource),
  });
  const plan = planLoad({
    size: options.size,
    namespaces: namespacesFor(options.size),
    unrelatedConfigMaps: profile.unrelatedConfigMaps,
    handoffShare: profile.handoffShare,
  });
  return { server, client, plan };
}

/**
 * Creates the plan's namespaces, its ConfigMaps (recording each one's version and hash), then each planned app with
 * `createApp` (a CustomApp, or a workload).
 */
export async function createLoad(
  session: Pick<SessionBase, 'client' | 'plan' | 'configMaps' | 'status'>,
  createApp: (app: PlannedApp) => Promise<void>,
): Promise<void> {
  const { plan, client } = session;
  await forEachConcurrent(plan.namespaces, LOAD_CONCURRENCY, async (name) => {
    await client.create(NAMESPACES, undefined, namespaceObject(name));
  });
  let created = 0;
  const total = plan.configMaps.length + plan.apps.length;
  const progress = (): void => {
    if (++created % 500 === 0) session.status(`creating the load: ${created}/${total} objects`);
  };
  await forEachConcurrent(plan.configMaps, LOAD_CONCURRENCY, async (configMap) => {
    const object = configMapObject(configMap);
    await client.create(CONFIGMAPS, configMap.namespace, object);
    session.configMaps.set(`${configMap.namespace}/${configMap.name}`, { version: 0, hash: contentHash(object) });
    progress();
  });
  await forEachConcurrent(plan.apps, LOAD_CONCURRENCY, async (app) => {
    await createApp(app);
    progress();
  });
}

/** The operator's requests in a window as the server counted them, renewals apart when the server can tell. */
export interface ServerCounts {
  readonly requests: RequestCounts;
  readonly renewals?: RequestCounts;
}

/**
 * A window of time over which the server counts the operator's requests: the audit log (envtest: renewals told
 * apart), or the emulator's per-user counters (a difference of two snapshots); undefined on `close` when the server
 * counts nothing, and the operator's own count stands in.
 */
export class ServerWindow {
  private constructor(
    private readonly session: Pick<Session, 'server'>,
    readonly fromMs: number,
    private readonly countersBefore: RequestCounts | undefined,
  ) {}

  static async open(session: Pick<Session, 'server'>): Promise<ServerWindow> {
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

/**
 * What any participant's phase moves, read at its start and again when asked: the time, the changes of the Deployment
 * templates the session observes, and the CPU of the participant's process.
 */
export class PhaseSpan {
  private readonly fromClock: number;
  private readonly changesBefore: number;
  private readonly cpuBefore: CpuSeconds;

  constructor(
    private readonly session: Pick<Session, 'now' | 'cpu'>,
    private readonly changes: { readonly changeCount: number },
  ) {
    this.fromClock = session.now();
    this.changesBefore = changes.changeCount;
    this.cpuBefore = session.cpu();
  }

  /** The phase's duration, template changes and CPU since its start. */
  moved(): Pick<PhaseResult, 'durationMs' | 'deploymentChanges' | 'cpuSeconds'> {
    return {
      durationMs: this.session.now() - this.fromClock,
      deploymentChanges: this.changes.changeCount - this.changesBefore,
      cpuSeconds: diffCpu(this.session.cpu(), this.cpuBefore),
    };
  }
}

/** Server-side and self-counted requests of a phase, and what else moved during it. */
export class PhaseMeter {
  private readonly span: PhaseSpan;

  private constructor(
    private readonly session: Session,
    private readonly window: ServerWindow,
    private readonly before: OperatorStats,
  ) {
    this.span = new PhaseSpan(session, session.deployments);
  }

  static async start(session: Session): Promise<PhaseMeter> {
    const before = await session.stats();
    return new PhaseMeter(session, await ServerWindow.open(session), before);
  }

  async finish(operations: number, extra: Partial<PhaseResult> = {}): Promise<PhaseResult> {
    const server = await this.window.close();
    const after = await this.session.stats();
    const { durationMs, deploymentChanges, cpuSeconds } = this.span.moved();
    const selfRequests = diffCounts(after.requests, this.before.requests);
    return {
      operations,
      durationMs,
      requests: server?.requests ?? selfRequests,
      renewals: server?.renewals,
      selfRequests,
      reconciles: after.reconciles - this.before.reconciles,
      deploymentChanges,
      cpuSeconds,
      reconcileSteps: diffSteps(after.reconcileSteps, this.before.reconcileSteps),
      ...extra,
    };
  }
}

/** The reconcile steps of a window: `after - before`, step by step; undefined when the process does not report them. */
export function diffSteps(after: ReconcileSteps | undefined, before: ReconcileSteps | undefined): ReconcileSteps | undefined {
  if (!after) return undefined;
  const diff: ReconcileSteps = {};
  for (const [step, { count, seconds }] of Object.entries(after)) {
    const earlier = before?.[step] ?? { count: 0, seconds: 0 };
    if (count - earlier.count > 0) diff[step] = { count: count - earlier.count, seconds: seconds - earlier.seconds };
  }
  return diff;
}
