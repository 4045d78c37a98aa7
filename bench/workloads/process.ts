// Starts a workload participant in its own process (Reloader's binary, or our operator with --workloads) and reads its RSS, heap and log.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort } from '../../envtest/ports.js';
import type { WorkloadParticipant } from '../options.js';
import {
  bundle,
  ParticipantHandle,
  type ParticipantProcess,
  RUNTIME_ENV,
  RUNTIME_FLAGS,
  rssBytesOf,
  runBuildScript,
} from '../operator-process.js';

const RELOADER_BUILD = resolve(import.meta.dirname, '../peers/reloader/build.sh');
const OPERATOR_MAIN = resolve(import.meta.dirname, '../../operator/main.ts');
/** Inside node_modules, so that the bundle's packages resolve from the project's node_modules (as the runner's). */
const OPERATOR_BUNDLE = resolve(import.meta.dirname, '../../node_modules/.cache/customapp-bench/operator-main.cjs');

/**
 * How our operator is started: bundled as the operator image runs it (see BUNDLE_FLAGS), so that its RSS compares
 * with Reloader's; under tsx when esbuild is missing (about 100 MB more RSS).
 */
async function operatorEntry(nodeFlags: readonly string[]): Promise<string[]> {
  try {
    return [...nodeFlags, ...(await bundle(OPERATOR_MAIN, OPERATOR_BUNDLE, { nodeFlags })).startArgs];
  } catch {
    return [...nodeFlags, '--import', 'tsx', OPERATOR_MAIN];
  }
}

/**
 * Where Reloader serves /metrics: its constants.DefaultHttpListenAddr, which no flag changes. It exits (logrus.Fatal)
 * when the port is taken, which {@link startWorkloadProcess} reports with its log.
 */
export const RELOADER_METRICS_PORT = 9090;

/** The flag our operator's workload mode is enabled by; an operator without it refuses it as an unknown flag. */
export const WORKLOADS_FLAG = '--workloads=deployments';

/** Builds Reloader from bench/peers/reloader's source archive (once; later calls find it in the cache) and answers the binary's path. */
export function buildReloader(): Promise<string> {
  return runBuildScript(RELOADER_BUILD, 'Reloader');
}

/** A workload participant's process; {@link ParticipantProcess.exited} rejects with the end of its log. */
export interface WorkloadProcess extends ParticipantProcess {
  readonly participant: WorkloadParticipant;
  /** Resident set size from /proc/<pid>/status, in bytes (undefined once the process is gone). */
  rssBytes(): number | undefined;
  /** The runtime's live heap from the process's /metrics (Go's heap_alloc, Node's heap used), if it serves it. */
  heapBytes(): Promise<number | undefined>;
}

export interface WorkloadProcessOptions {
  readonly participant: WorkloadParticipant;
  /** The participant's kubeconfig (the operator identity whose requests the audit log counts). */
  readonly kubeconfigPath: string;
  /** Reloader's binary, for the `reloader` participant (see {@link buildReloader}). */
  readonly reloaderBinary?: string;
  /** Where stdout and stderr go. */
  readonly logPath: string;
  /** Go's GOMEMLIMIT or Node's --max-old-space-size, as for the other participants. */
  readonly memoryLimitMiB?: number;
}

/** The command line of a participant, and where its /metrics answers. */
export async function workloadCommand(
  options: WorkloadProcessOptions,
): Promise<{ command: string; args: string[]; env: Record<string, string>; metricsPort: number }> {
  const limit = options.memoryLimitMiB;
  if (options.participant !== 'ours-workloads') {
    if (!options.reloaderBinary) throw new Error(`the ${options.participant} participant needs reloaderBinary (see buildReloader)`);
    // reload-on-create handles a ConfigMap's add events; sync-after-restart also those of its initial list.
    const onCreate = options.participant === 'reloader-on-create' ? ['--reload-on-create=true', '--sync-after-restart=true'] : [];
    return {
      command: options.reloaderBinary,
      // annotations: a reload writes the pod template's annotations (its default, env-vars, adds an env variable).
      args: ['--reload-strategy=annotations', ...onCreate, '--log-format=json', '--log-level=info'],
      env: { KUBECONFIG: options.kubeconfigPath, ...(limit === undefined ? {} : { GOMEMLIMIT: `${limit}MiB` }) },
      metricsPort: RELOADER_METRICS_PORT,
    };
  }
  const metricsPort = await freePort();
  return {
    command: process.execPath,
    args: [
      ...(await operatorEntry([...(limit === undefined ? [] : [`--max-old-space-size=${limit}`]), ...RUNTIME_FLAGS])),
      `--kubeconfig=${options.kubeconfigPath}`,
      WORKLOADS_FLAG,
      // No rollout ever completes on a server without controllers: the governance is off, as for the other participants.
      '--max-concurrent-rollouts=0',
      '--flap-threshold=0',
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      // Plain HTTP: the harness reads the heap from /metrics with no token (the default, HTTPS with authentication, refuses it).
      '--metrics-secure=false',
      '--health-probe-bind-address=0',
      '--log-level=info',
    ],
    env: RUNTIME_ENV,
    metricsPort,
  };
}

/** The live heap in a Prometheus exposition: Go's `go_memstats_heap_alloc_bytes`, or Node's `nodejs_heap_size_used_bytes`. */
export function heapFromMetrics(text: string): number | undefined {
  const match = /^(?:go_memstats_heap_alloc_bytes|nodejs_heap_size_used_bytes)(?:\{[^}]*\})? ([0-9.e+]+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The last lines of a log file, for an error message. */
function logTail(path: string, lines = 8): string {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Explains an early exit: an operator without the workload mode refuses `--workloads` as an unknown flag (exit 2),
 * which says that the participant cannot run on this code, rather than that it failed.
 */
export function earlyExitMessage(participant: WorkloadParticipant, code: number | null, signal: string | null, log: string): string {
  if (participant === 'ours-workloads' && /unknown flag "--workloads"/.test(log))
    return `ours-workloads: this operator has no workload mode (it refused ${WORKLOADS_FLAG}: ${log
      .split('\n')
      .find((line) => line.includes('--workloads'))
      ?.trim()})`;
  return `${participant} exited on its own (code ${code}, signal ${signal}); the end of its log:\n${log}`;
}

/** Spawns the participant; it is running (not necessarily synced) when this resolves. */
export async function startWorkloadProcess(options: WorkloadProcessOptions): Promise<WorkloadProcess> {
  const { command, args, env, metricsPort } = await workloadCommand(options);
  const log = createWriteStream(options.logPath, { flags: 'a' });
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  // Reloader does not watch its stdin as our runner does: it must not outlive the harness.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const handle = new ParticipantHandle(
    options.participant,
    child,
    (code, signal) =>
      new Promise<Error>((done) => {
        process.off('exit', killOnExit);
        log.end(() => done(new Error(earlyExitMessage(options.participant, code, signal, logTail(options.logPath)))));
      }),
  );
  await new Promise<void>((resolveSpawn, reject) => {
    child.once('spawn', resolveSpawn);
    child.once('error', (error) => reject(new Error(`${options.participant}: ${command} could not be started`, { cause: error })));
  });
  return Object.assign(handle, {
    rssBytes: (): number | undefined => rssBytesOf(handle.pid),
    async heapBytes(): Promise<number | undefined> {
      try {
        const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
        return response.ok ? heapFromMetrics(await response.text()) : undefined;
      } catch {
        return undefined;
      }
    },
  });
}
