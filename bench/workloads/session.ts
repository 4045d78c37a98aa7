// One workload session: a fresh API server, annotated Deployments and the ConfigMaps they use, one workload participant, its phases.
import { join } from 'node:path';
import { DEPLOYMENTS } from '../../operator/kube/resources.js';
import { type CpuSeconds, sessionCpu } from '../cpu.js';
import { isWorkloadParticipant, type WorkloadParticipant } from '../options.js';
import { awaitMet, type DeliveryProbe, deliveryFigures, floorOf, paced, spread, updateConfigMap, writeOwnConfigMaps } from '../phases.js';
import type { ColdStartResult, PhaseResult, RestartResult, SessionResult } from '../results.js';
import {
  PhaseSpan,
  referencedLine,
  restartLine,
  runPhases,
  ServerWindow,
  SessionBase,
  sleep,
  type ServerCounts,
  type SessionOptions,
  untilQuiet,
} from '../session-state.js';
import { addCounts, summarize, totalRequests } from '../stats.js';
import { workloadObject } from './load.js';
import { TemplateObserver } from './observer.js';
import { startWorkloadProcess, type WorkloadProcess } from './process.js';

/** A write the harness made, and the Deployment whose template it should change. */
interface Expectation {
  readonly deployment: string;
  readonly sentAt: number;
}

/** The state of one workload session: beside the base, the templates' watcher and the participant's process. */
export class WorkloadSession extends SessionBase {
  templates!: TemplateObserver;
  process: WorkloadProcess | undefined;
  readonly participant: WorkloadParticipant;

  constructor(options: SessionOptions) {
    super(options);
    if (!isWorkloadParticipant(options.participant)) throw new Error(`${options.participant} is not a workload participant`);
    this.participant = options.participant;
  }

  /** The server, the ConfigMaps, one annotated Deployment per planned app, and the raw watchers. */
  async start(): Promise<void> {
    await this.open(
      async (app) => {
        await this.client.create(DEPLOYMENTS, app.namespace, workloadObject(app));
      },
      () => (this.templates = new TemplateObserver(this.client, this.now)),
    );
  }

  async launch(): Promise<WorkloadProcess> {
    const { participant } = this;
    this.process = await startWorkloadProcess({
      participant,
      kubeconfigPath: this.server.operatorKubeconfigPath,
      reloaderBinary: this.options.reloaderBinary,
      memoryLimitMiB: this.options.memoryLimitMiB,
      logPath: join(this.options.logDir, `${participant}-${this.options.size}.log`),
    });
    return this.process;
  }

  /** CPU seconds used so far by the participant (0 before it is spawned), kube-apiserver and etcd. */
  cpu(): CpuSeconds {
    return sessionCpu({ participant: this.process, server: this.server.pids });
  }

  /** The participant's requests other than watches so far, as the server counts them (-1 when it counts none). */
  private async workSoFar(): Promise<number> {
    const { audit, counters } = this.server;
    if (audit) {
      await audit.refresh();
      const { watch: _watches, ...work } = audit.counts(0, Date.now()).work;
      return totalRequests(work);
    }
    if (counters) {
      const { watch: _watches, ...work } = (await counters()).requests;
      return totalRequests(work);
    }
    return -1;
  }

  /** The participant's watch streams open on the server now. */
  async openWatches(): Promise<number> {
    const { audit, counters } = this.server;
    if (audit) {
      await audit.refresh();
      return audit.openWatchesAt(Date.now()).length;
    }
    return counters ? (await counters()).openWatches : -1;
  }

  /**
   * Waits until the participant watches ConfigMaps (its informers listed and started watching) and then is quiet: no
   * request but watches and no template change for the profile's settle time. Rejects when the process exits.
   * Answers false when that did not happen within `timeoutMs`.
   */
  async settle(timeoutMs = Math.max(120_000, this.options.size * 60)): Promise<boolean> {
    const exited = this.process!.exited.then(() => {
      throw new Error(`${this.participant} stopped while settling`);
    });
    // Only a race below reads it: once the wait is over, a later stop must not surface as an unhandled rejection.
    exited.catch(() => undefined);
    return untilQuiet(this.now, this.options.profile.settleMs, timeoutMs, async () => {
      const watching = await Promise.race([this.openWatches(), exited]);
      return { signature: `${await this.workSoFar()}|${this.templates.changeCount}`, ready: watching > 0 };
    });
  }

  async stop(): Promise<void> {
    await this.close(this.process);
  }
}

/** A phase's requests (server-counted), template changes and CPU, from its start to {@link finish}. */
class WorkloadMeter {
  private readonly span: PhaseSpan;

  private constructor(
    session: WorkloadSession,
    private readonly window: ServerWindow,
  ) {
    this.span = new PhaseSpan(session, session.templates);
  }

  static async start(session: WorkloadSession): Promise<WorkloadMeter> {
    return new WorkloadMeter(session, await ServerWindow.open(session));
  }

  /** The phase's figures; `withRenewals` counts the watch renewals as work (a new process's first watches are not renewals). */
  async finish(operations: number, extra: Partial<PhaseResult> = {}, withRenewals = false): Promise<PhaseResult> {
    const server: ServerCounts | undefined = await this.window.close();
    const requests = server ? (withRenewals ? addCounts(server.requests, server.renewals ?? {}) : server.requests) : {};
    const { durationMs, deploymentChanges, cpuSeconds } = this.span.moved();
    return {
      operations,
      durationMs,
      requests,
      renewals: withRenewals ? undefined : server?.renewals,
      // The participant's own client counts are not read (Reloader's /metrics has them, ours too): the server's are the figure.
      selfRequests: {},
      reconciles: 0,
      deploymentChanges,
      cpuSeconds,
      ...extra,
    };
  }
}

/** Waits (see {@link awaitMet}) until each expectation's Deployment changed its template after the write. */
async function awaitRollouts(
  session: WorkloadSession,
  expectations: readonly Expectation[],
  what: string,
): Promise<{ latencies: number[]; missed: number }> {
  const met = ({ deployment, sentAt }: Expectation): number | undefined => {
    const at = session.templates.changesSince(deployment, sentAt)[0];
    return at === undefined ? undefined : at - sentAt;
  };
  const latencies = (await awaitMet(session, expectations, met, what)).filter((latency): latency is number => latency !== undefined);
  return { latencies, missed: expectations.length - latencies.length };
}

/**
 * Spawns the participant and waits until it settles (its settle time not counted); then waits the miss window and
 * settles again, so that rollouts that begin late are counted too: the server cannot tell when a participant's caches
 * are synced (client-go lists by a watch stream now), so a start may look settled before the participant has handled
 * its initial objects. Answers spawn → settled, undefined when it never settled.
 */
async function launchAndSettle(session: WorkloadSession): Promise<number | undefined> {
  const spawnedAt = session.now();
  await session.launch();
  const settled = await session.settle();
  const settledMs = settled ? session.now() - spawnedAt - session.options.profile.settleMs : undefined;
  await sleep(session.options.profile.missAfterMs);
  await session.settle();
  return settledMs;
}

/** Spawns the participant on the full load and waits until it settles: nothing should roll (every Deployment is new to it). */
async function coldStart(session: WorkloadSession): Promise<ColdStartResult> {
  const meter = await WorkloadMeter.start(session);
  const settledMs = await launchAndSettle(session);
  const phase = await meter.finish(session.options.size);
  // Nothing to converge to (opting in rolls nothing): "converged" is settled, every Deployment as it should be.
  return { ...phase, converged: settledMs === undefined ? 0 : session.options.size, convergedMs: settledMs };
}

/** Writes distinct own ConfigMaps at a steady pace; each one's Deployment must roll. */
async function referencedUpdates(session: WorkloadSession): Promise<PhaseResult> {
  const meter = await WorkloadMeter.start(session);
  const { writes, probes, expectations } = await writeOwnConfigMaps(session, (app, probe) => ({
    deployment: `${app.namespace}/${app.name}`,
    sentAt: probe.sentAt,
  }));
  const { latencies, missed } = await awaitRollouts(session, expectations, 'referenced updates');
  await session.settle();
  return meter.finish(writes, deliveryFigures(session, probes, latencies, expectations.length, missed));
}

/** Writes ConfigMaps no Deployment uses: nothing should roll. */
async function unrelatedUpdates(session: WorkloadSession): Promise<PhaseResult> {
  const { profile } = session.options;
  const targets = spread(
    session.plan.configMaps.filter((configMap) => configMap.role === 'unrelated'),
    profile.unrelatedUpdates,
  );
  const meter = await WorkloadMeter.start(session);
  const probes: DeliveryProbe[] = [];
  await paced(targets, profile.writesPerSecond, async (configMap) => {
    probes.push(await updateConfigMap(session, `${configMap.namespace}/${configMap.name}`));
  });
  await sleep(profile.settleMs);
  await session.settle();
  return meter.finish(targets.length, { floorMs: summarize(floorOf(session, probes)) });
}

/** Two rounds of updates to each namespace's shared ConfigMap: every Deployment using it must roll (the fan-out). */
async function sharedUpdates(session: WorkloadSession): Promise<PhaseResult> {
  const meter = await WorkloadMeter.start(session);
  const latencies: number[] = [];
  const probes: DeliveryProbe[] = [];
  let expected = 0;
  let missed = 0;
  const shared = session.plan.configMaps.filter((configMap) => configMap.role === 'shared');
  for (let round = 1; round <= 2; round += 1) {
    const expectations: Expectation[] = [];
    for (const configMap of shared) {
      const probe = await updateConfigMap(session, `${configMap.namespace}/${configMap.name}`);
      probes.push(probe);
      for (const app of session.plan.apps) {
        if (app.namespace === configMap.namespace && app.configMapName === configMap.name)
          expectations.push({ deployment: `${app.namespace}/${app.name}`, sentAt: probe.sentAt });
      }
    }
    const result = await awaitRollouts(session, expectations, `shared updates, round ${round}`);
    latencies.push(...result.latencies);
    expected += expectations.length;
    missed += result.missed;
    await session.settle();
  }
  return meter.finish(shared.length * 2, {
    latencyMs: summarize(latencies),
    floorMs: summarize(floorOf(session, probes)),
    expected,
    missed,
  });
}

/** SIGTERM, then a new process on the same cluster: how long until it settles, and how many Deployments it rolls. */
async function restart(session: WorkloadSession): Promise<RestartResult> {
  const stopFrom = session.now();
  await session.process!.stop();
  const stopMs = session.now() - stopFrom;
  const meter = await WorkloadMeter.start(session);
  const settledMs = await launchAndSettle(session);
  const phase = await meter.finish(1, {}, true);
  return { ...phase, settledMs, stopMs };
}

/** The participant's RSS (from /proc) and heap (from its /metrics, when it serves one), after the cold start. */
async function memoryAfterSync(session: WorkloadSession): Promise<NonNullable<SessionResult['afterSync']>> {
  const process = session.process!;
  const rssBytes = process.rssBytes();
  if (rssBytes === undefined) throw new Error(`${session.participant}: its RSS could not be read (the process is gone)`);
  return {
    // An unknown heap stays undefined (left out of the JSON, '–' in the tables), never a number that reads as measured.
    memory: { heapUsedBytes: await process.heapBytes(), rssBytes, gcForced: false },
    openWatches: await session.openWatches(),
    cachedObjects: {},
  };
}

/** Runs one workload participant at one size on a fresh API server; a failure ends the session with the phases done so far. */
export async function runWorkloadSession(options: SessionOptions): Promise<SessionResult> {
  const session = new WorkloadSession(options);
  const result = await runPhases(options, session, async (result, log) => {
    result.coldStart = await coldStart(session);
    log(
      `cold start: settled ${result.coldStart.convergedMs === undefined ? 'never' : `in ${(result.coldStart.convergedMs / 1000).toFixed(1)} s`}, ${result.coldStart.deploymentChanges} Deployments rolled`,
    );
    result.afterSync = await memoryAfterSync(session);
    if (result.coldStart.convergedMs === undefined)
      throw new Error(
        `did not settle from cold within ${(result.coldStart.durationMs / 1000).toFixed(0)} s; the later phases were not run`,
      );
    if (options.coldStartOnly) return;
    result.referenced = await referencedUpdates(session);
    log(referencedLine(result.referenced));
    result.unrelated = await unrelatedUpdates(session);
    log(
      `unrelated updates: ${result.unrelated.deploymentChanges} Deployments rolled, ${totalRequests(result.unrelated.requests)} requests`,
    );
    result.shared = await sharedUpdates(session);
    log(
      `shared updates: p99 ${result.shared.latencyMs?.p99.toFixed(1) ?? '–'} ms, missed ${result.shared.missed}/${result.shared.expected}`,
    );
    result.restart = await restart(session);
    log(restartLine(result.restart));
  });
  result.missedTotal = [result.referenced, result.shared].reduce((sum, phase) => sum + (phase?.missed ?? 0), 0);
  return result;
}
