// Starts one participant's operator in its own process (the TypeScript runner or the Go peer) and reads its /stats.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync, rmSync } from 'node:fs';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import type { Participant } from './options.js';
import { statsAddressOf, type OperatorStats } from './operator-stats.js';
import { codeCachePath } from '../operator/code-cache.js';

const execFileAsync = promisify(execFile);
const RUNNER = resolve(import.meta.dirname, 'runner.ts');
const PEER_BUILD = resolve(import.meta.dirname, 'peers/controller-runtime/build.sh');
const ESBUILD = resolve(import.meta.dirname, '../node_modules/.bin/esbuild');
const CODE_CACHE_ENTRY = resolve(import.meta.dirname, '../operator/start.ts');
/**
 * Where a run's runner bundle goes: inside node_modules, so that the bundle's packages resolve from the project's
 * node_modules; a name of its own for each run, because every worktree shares one node_modules (a run of another tree,
 * started meanwhile, must not replace the bundle this run's later sessions start from) and one process may hold
 * several runs at once (a test file's concurrent tests), each removing its own bundle when it ends.
 */
function runnerBundlePath(): string {
  return resolve(import.meta.dirname, `../node_modules/.cache/customapp-bench/runner-${process.pid}-${randomUUID()}.cjs`);
}

/** A /stats answer may take this long from a saturated process. */
const STATS_TIMEOUT_MS = 60_000;
/** Attempts of one /stats read before the session gives up. */
const STATS_ATTEMPTS = 3;

/** Reconcile workers, the same for every participant (createOperator's default). */
export const RECONCILE_WORKERS = 4;

/** Builds the controller-runtime peer (once; later calls find it) and answers the binary's path. */
export function buildPeer(): Promise<string> {
  return runBuildScript(PEER_BUILD, 'the controller-runtime peer');
}

/** Runs a build script that prints the binary's path last; a failure says what was built and the end of its stderr. */
export async function runBuildScript(script: string, what: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [script], { maxBuffer: 16 << 20 });
    return stdout.trim().split('\n').pop()!;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`building ${what} failed: ${stderr.trim().split('\n').slice(-10).join('\n') || String(error)}`, { cause: error });
  }
}

/**
 * esbuild's flags for the runner, the same as the Dockerfile's for the operator image: every npm package is bundled,
 * so that a start reads one file instead of resolving and compiling hundreds (rxjs's CommonJS build alone is about 400
 * files): 0.19 instead of 0.25 CPU-s to load the operator. @kubernetes/client-node is bundled so that only the parts the
 * operator uses are loaded (its KubeConfig and auth, not its generated API clients: about 11 MiB of heap instead of 32
 * MiB). CommonJS, so that `operator/code-cache.ts` can start it from V8's code cache (`import.meta.dirname`, which
 * the operator reads to find the manifests beside it, is CommonJS's `__dirname`).
 */
export const BUNDLE_FLAGS: readonly string[] = [
  '--bundle',
  '--platform=node',
  '--format=cjs',
  '--target=node20',
  '--define:import.meta.dirname=__dirname',
];

/**
 * Added to {@link BUNDLE_FLAGS} for a runner that profiles itself: the packages the profile names by their path
 * (`bench/flame.ts` tells `npm:rxjs` from ours by `node_modules/` in a function's URL) stay files of their own, so that
 * a flame graph does not count them as ours. Only the modules' loading differs, before the phase profiler starts.
 */
const PROFILED_EXTERNALS: readonly string[] = ['pino', 'prom-client', 'rxjs', 'yaml'].map((name) => `--external:${name}`);

/** Node's flags in the operator image (the Dockerfile's ENTRYPOINT), given to the runner too. */
export const RUNTIME_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--interrupt-budget=262144'];
/**
 * Debian's libjemalloc2 on this machine, the allocator the operator image preloads (its `LD_PRELOAD` names a link to
 * it); undefined when it is not installed (`envtest/node/install-deps.sh` installs it), and the TypeScript operators
 * then run on glibc's malloc, as the run's report says.
 */
export const JEMALLOC: string | undefined = [
  '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
  '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2',
].find((path) => existsSync(path));
/** Where the operator image links jemalloc, for its `ENV LD_PRELOAD`. */
export const IMAGE_JEMALLOC = '/usr/local/lib/libjemalloc.so.2';
/**
 * The environment the operator image sets for the process (the Dockerfile's ENV), given to the runner too: jemalloc
 * with 2 arenas and its background thread returning freed pages after 1 s, and 2 arenas for glibc's malloc should the
 * preload be missing.
 */
export const RUNTIME_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_CONF: 'narenas:2,background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0',
  ...(JEMALLOC === undefined ? {} : { LD_PRELOAD: JEMALLOC }),
};

/** operator/start.ts, bundled as the image bundles it, beside the bundles it starts. */
const CODE_CACHE_LOADER = resolve(import.meta.dirname, '../node_modules/.cache/customapp-bench/start.cjs');

/** A bundle ready to start: Node's arguments after its flags, the bundle last. */
export interface Bundled {
  readonly startArgs: readonly string[];
  /** Removes the bundle and its code cache. */
  dispose(): void;
}

/**
 * Bundles the TypeScript entry point `entry` into `outfile` with {@link BUNDLE_FLAGS} and writes its code cache as the
 * operator image does, by loading it once under `nodeFlags` (the flags it will run with: V8 refuses a cache made
 * under others); rejects when esbuild is missing or fails. esbuild writes a file of this process's own, renamed over
 * `outfile` once whole: another process (a concurrent test, another benchmark) that starts node on `outfile`
 * meanwhile runs the previous bundle, never a half-written one (which node runs as an empty module, exiting 0 with no
 * output); its cache then no longer matches the bundle, which V8 detects (the bundle is compiled without it).
 */
export async function bundle(
  entry: string,
  outfile: string,
  { extraFlags = [], nodeFlags = RUNTIME_FLAGS }: { extraFlags?: readonly string[]; nodeFlags?: readonly string[] } = {},
): Promise<Bundled> {
  await esbuild(CODE_CACHE_ENTRY, CODE_CACHE_LOADER, ['--bundle', '--platform=node', '--format=cjs', '--target=node20']);
  await esbuild(entry, outfile, [...BUNDLE_FLAGS, ...extraFlags]);
  await execFileAsync(process.execPath, [...nodeFlags, CODE_CACHE_LOADER, outfile], {
    env: { ...process.env, CODE_CACHE: 'write' },
    maxBuffer: 16 << 20,
  });
  return {
    startArgs: [CODE_CACHE_LOADER, outfile],
    dispose: () => {
      rmSync(outfile, { force: true });
      rmSync(codeCachePath(outfile), { force: true });
      rmSync(`${outfile}.map`, { force: true });
    },
  };
}

/** The name of the runner bundle's source map in a phase profile directory. */
export const RUNNER_SOURCE_MAP = 'runner.cjs.map';

/** esbuild's flags for a bundle's source map beside it (`<outfile>.map`), with no comment in the bundle naming it. */
const SOURCE_MAP_FLAGS: readonly string[] = ['--sourcemap=external', '--sources-content=false'];

async function esbuild(entry: string, outfile: string, flags: readonly string[]): Promise<void> {
  const partial = `${outfile}.${process.pid}-${randomUUID()}.partial`;
  try {
    await execFileAsync(ESBUILD, [entry, ...flags, `--outfile=${partial}`, '--log-level=warning']);
    await rename(partial, outfile);
    if (flags.includes(SOURCE_MAP_FLAGS[0]!)) await rename(`${partial}.map`, `${outfile}.map`);
  } finally {
    await rm(partial, { force: true });
  }
}

/** How the TypeScript runner is started: a plain-JavaScript bundle, or tsx when the bundle could not be built. */
export interface RunnerCommand {
  readonly mode: 'bundle' | 'tsx';
  /** Node arguments before the runner's own. */
  readonly nodeArgs: readonly string[];
  /** The runner profiles itself, cut at the phase boundaries, into this directory (`--profile-dir`). */
  readonly phaseProfileDir?: string;
  /** Variables set over {@link RUNTIME_ENV} for the runner's process (a lever's trial). @default none */
  readonly env?: Readonly<Record<string, string>>;
  /** Removes the bundle (at the end of the run). */
  dispose(): void;
}

/**
 * Bundles bench/runner.ts (and the operator it imports) into one JavaScript file with esbuild (tsx's own
 * compiler), so that the operator process runs plain JavaScript as the operator image does (see
 * {@link BUNDLE_FLAGS}): under tsx, its loader thread adds about 100 MB of RSS and 10 MB of heap to every
 * TypeScript participant. Falls back to tsx when esbuild is missing.
 */
export async function prepareRunner(cpuProfileDir?: string, phaseProfileDir?: string): Promise<RunnerCommand> {
  const profile = cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(cpuProfileDir)}`] : [];
  const phases = phaseProfileDir ? { phaseProfileDir: resolve(phaseProfileDir) } : {};
  // node --cpu-prof makes its directory; the runner's phase profiler writes into this one.
  if (phaseProfileDir) await mkdir(resolve(phaseProfileDir), { recursive: true });
  const bundlePath = runnerBundlePath();
  try {
    const nodeFlags = [...RUNTIME_FLAGS, '--expose-gc'];
    const bundled = await bundle(RUNNER, bundlePath, {
      extraFlags: [...(cpuProfileDir || phaseProfileDir ? PROFILED_EXTERNALS : []), ...(phaseProfileDir ? SOURCE_MAP_FLAGS : [])],
      nodeFlags,
    });
    // The phase profiles' source map, for bench/phase-breakdown.ts to name each sampled function's source file.
    if (phaseProfileDir) await copyFile(`${bundlePath}.map`, join(resolve(phaseProfileDir), RUNNER_SOURCE_MAP));
    return { mode: 'bundle', nodeArgs: [...profile, ...nodeFlags, ...bundled.startArgs], ...phases, dispose: bundled.dispose };
  } catch {
    return {
      mode: 'tsx',
      nodeArgs: [...profile, ...RUNTIME_FLAGS, '--import', 'tsx', '--expose-gc', RUNNER],
      ...phases,
      dispose: () => undefined,
    };
  }
}

/** A participant's process: the harness's handle on it. */
export interface ParticipantProcess {
  readonly participant: Participant;
  readonly pid: number;
  /** False once the process exited. */
  readonly alive: boolean;
  /** SIGTERM, then waits for the exit (SIGKILL after 30 s). Safe to call twice. */
  stop(): Promise<void>;
  /** Rejects if the process exits before {@link stop}. */
  readonly exited: Promise<void>;
}

/**
 * A spawned participant's lifetime. `exited` settles on its exit: resolved once it was told to stop, else rejected
 * with the error `onExit` answers (after its own cleanup, such as its log closed).
 */
export class ParticipantHandle<P extends Participant = Participant> implements ParticipantProcess {
  readonly pid: number;
  readonly exited: Promise<void>;
  private stopping = false;
  private stopped: Promise<void> | undefined;

  constructor(
    readonly participant: P,
    private readonly child: ChildProcess,
    onExit: (code: number | null, signal: NodeJS.Signals | null) => Promise<Error>,
  ) {
    this.pid = child.pid!;
    this.exited = new Promise<void>((resolveExit, reject) => {
      child.once('exit', (code, signal) => {
        void onExit(code, signal).then((error) => (this.stopping ? resolveExit() : reject(error)));
      });
    });
    this.exited.catch(() => undefined);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  stop(): Promise<void> {
    this.stopping = true;
    this.stopped ??= terminate(this.child, this.exited);
    return this.stopped;
  }

  /** SIGKILL at once (its start failed); its exit is no failure. Waits for it. */
  async kill(): Promise<void> {
    this.stopping = true;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** A process's resident set size from /proc/<pid>/status, in bytes (undefined once the process is gone). */
export function rssBytesOf(pid: number): number | undefined {
  try {
    const kib = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

/** A participant's operator, running in its own process. */
export interface OperatorProcess extends ParticipantProcess {
  /** Its /stats; `gc` runs a garbage collection first, so that the heap figure is what is live. */
  stats(gc?: boolean): Promise<OperatorStats>;
  /**
   * Cuts its phase profile (a process started with {@link RunnerCommand.phaseProfileDir}): the samples since the last
   * cut are written as `<label>.cpuprofile` (V8's, the TypeScript runner) or `<label>.pprof` (Go's, the peer), or
   * dropped without a label. Does nothing for a process that profiles nothing.
   */
  cutProfile(label?: string): Promise<void>;
}

export interface OperatorProcessOptions {
  readonly participant: Participant;
  /** The operator's kubeconfig (its own identity). */
  readonly kubeconfigPath: string;
  /** The Go peer's binary, for the `peer` participant. */
  readonly peerBinary?: string;
  /** How to start the TypeScript runner (see {@link prepareRunner}). @default tsx */
  readonly runner?: RunnerCommand;
  /** Where stdout and stderr go. */
  readonly logPath: string;
  /** How long to wait for /stats to listen. @default 60_000 */
  readonly startTimeoutMs?: number;
  /**
   * The same memory budget for every participant, as each runtime takes one: Node's `--max-old-space-size` (what it
   * derives by itself from a container's memory limit) and Go's `GOMEMLIMIT` (which a Go operator must be given). A
   * soft limit the runtime collects garbage to stay under, not a cgroup limit.
   */
  readonly memoryLimitMiB?: number;
}

function commandOf(options: OperatorProcessOptions): { command: string; args: string[] } {
  const common = [
    '--kubeconfig',
    options.kubeconfigPath,
    '--stats-bind-address',
    '127.0.0.1:0',
    '--max-concurrent-reconciles',
    String(RECONCILE_WORKERS),
  ];
  // BENCH_OPERATOR_LOG_LEVEL=info or debug keeps every operator's trace lines (trigger, enqueue, reconcile, write) in
  // the session's log, for a diagnosis; the figures of a run with it include the logging's cost.
  const logLevel = process.env.BENCH_OPERATOR_LOG_LEVEL;
  const profileDir = options.runner?.phaseProfileDir;
  if (options.participant === 'peer' || options.participant === 'peer-defaults') {
    if (!options.peerBinary) throw new Error('the peer participant needs peerBinary (see buildPeer)');
    // peer-defaults: controller-runtime's own default of 1 worker (MaxConcurrentReconciles); its client rate limiter is
    // off in both, as controller-runtime's GetConfig leaves it (QPS -1: API Priority and Fairness limits instead).
    const args = options.participant === 'peer' ? common : common.slice(0, 4);
    const trace = logLevel === 'info' || logLevel === 'debug' ? ['--trace'] : [];
    return { command: options.peerBinary, args: [...args, ...trace, ...(profileDir ? ['--profile-dir', profileDir] : [])] };
  }
  const nodeArgs = options.runner?.nodeArgs ?? ['--import', 'tsx', '--expose-gc', RUNNER];
  const limit = options.memoryLimitMiB === undefined ? [] : [`--max-old-space-size=${options.memoryLimitMiB}`];
  return {
    command: process.execPath,
    args: [
      ...limit,
      ...nodeArgs,
      '--strategy',
      options.participant,
      ...common,
      ...(logLevel ? ['--log-level', logLevel] : []),
      ...(profileDir ? ['--profile-dir', profileDir] : []),
    ],
  };
}

/** SIGTERM, then waits for `exited` (SIGKILL after 30 s); nothing to do when the child has exited already. */
export async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  child.kill('SIGTERM');
  await exited;
  clearTimeout(timer);
}

/**
 * GET /stats of a participant's process (`gc`: after a full garbage collection). A busy process may drop a connection
 * (a reused keep-alive socket): it is tried again, up to {@link STATS_ATTEMPTS} times, while the process is alive.
 */
async function fetchStats(participant: string, address: string, gc: boolean, alive: () => boolean): Promise<OperatorStats> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const response = await fetch(`http://${address}/stats${gc ? '?gc=1' : ''}`, { signal: AbortSignal.timeout(STATS_TIMEOUT_MS) });
      if (!response.ok) throw new Error(`${participant} /stats answered ${response.status}: ${await response.text()}`);
      return (await response.json()) as OperatorStats;
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      const reason = `${(error as Error).message}${cause ? ` (${String((cause as Error).message ?? cause)})` : ''}`;
      if (attempt >= STATS_ATTEMPTS || !alive()) {
        throw new Error(`${participant} /stats failed after ${attempt} attempts: ${reason}`, { cause: error });
      }
      await new Promise((done) => setTimeout(done, 500));
    }
  }
}

/** POST /profile of a runner that profiles its phases; rejects with the runner's answer when it is not 200. */
async function postProfileCut(participant: string, address: string, label: string | undefined): Promise<void> {
  const query = label === undefined ? '' : `?save=${encodeURIComponent(label)}`;
  const response = await fetch(`http://${address}/profile${query}`, { method: 'POST', signal: AbortSignal.timeout(STATS_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`${participant} /profile answered ${response.status}: ${await response.text()}`);
}

/** Spawns the participant's operator and resolves once its /stats listens. */
export async function startOperatorProcess(options: OperatorProcessOptions): Promise<OperatorProcess> {
  const { command, args } = commandOf(options);
  const log = createWriteStream(options.logPath, { flags: 'a' });
  // stdin is a pipe that only our death closes: the TypeScript runner stops when it ends (see runner.ts).
  const env = {
    ...process.env,
    ...(options.participant.startsWith('peer') ? {} : { ...RUNTIME_ENV, ...options.runner?.env }),
    ...(options.memoryLimitMiB === undefined ? {} : { GOMEMLIMIT: `${options.memoryLimitMiB}MiB` }),
  };
  const child: ChildProcess = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
  child.stderr!.pipe(log, { end: false });
  const handle = new ParticipantHandle(options.participant, child, async (code, signal) => {
    log.end();
    return new Error(`${options.participant} operator exited on its own (code ${code}, signal ${signal}); see ${options.logPath}`);
  });
  const address = await new Promise<string>((resolveAddress, reject) => {
    const lines = createInterface(child.stdout!);
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `${options.participant} operator: /stats did not listen within ${options.startTimeoutMs ?? 60_000} ms; see ${options.logPath}`,
          ),
        ),
      options.startTimeoutMs ?? 60_000,
    );
    lines.on('line', (line) => {
      log.write(`${line}\n`);
      const found = statsAddressOf(line);
      if (found) {
        clearTimeout(timer);
        resolveAddress(found);
      }
    });
    handle.exited.catch((error: unknown) => {
      clearTimeout(timer);
      reject(error);
    });
  }).catch(async (error: unknown) => {
    await handle.kill();
    throw error;
  });

  const profiles = options.runner?.phaseProfileDir !== undefined;
  return Object.assign(handle, {
    stats: (gc = false): Promise<OperatorStats> => fetchStats(options.participant, address, gc, () => handle.alive),
    cutProfile: (label?: string): Promise<void> => (profiles ? postProfileCut(options.participant, address, label) : Promise.resolve()),
  });
}
