// One shard under benchmark: operator/main.ts with --sharding, bundled as the image runs it, its RSS read from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bundle, RUNTIME_ENV, RUNTIME_FLAGS } from '../operator-process.js';
import { OPERATOR_NAMESPACE } from '../server.js';

const MAIN = resolve(import.meta.dirname, '../../operator/main.ts');
/**
 * Inside node_modules, so that the bundle's packages resolve from the project's node_modules; named after this run's
 * process, because every worktree shares one node_modules and another run's bundle of another tree (the workload
 * participants bundle operator/main.ts too) must not replace the one these shards start from.
 */
const MAIN_BUNDLE = resolve(import.meta.dirname, `../../node_modules/.cache/customapp-bench/shards-operator-main-${process.pid}.cjs`);

/** How a shard is started: the bundle of operator/main.ts (as the image runs it), or tsx when esbuild is missing. */
export interface ShardCommand {
  readonly mode: 'bundle' | 'tsx';
  readonly nodeArgs: readonly string[];
  /** Removes the bundle (at the end of the run). */
  dispose(): void;
}

/** Bundles operator/main.ts with the image's esbuild flags; falls back to tsx (about 100 MB more RSS per process). */
export async function prepareShardCommand(): Promise<ShardCommand> {
  try {
    const bundled = await bundle(MAIN, MAIN_BUNDLE);
    return { mode: 'bundle', nodeArgs: [...RUNTIME_FLAGS, ...bundled.startArgs], dispose: bundled.dispose };
  } catch {
    return { mode: 'tsx', nodeArgs: [...RUNTIME_FLAGS, '--import', 'tsx', MAIN], dispose: () => undefined };
  }
}

/** A running shard. */
export interface ShardProcess {
  /** Its `--shard-identity`. */
  readonly identity: string;
  readonly pid: number;
  readonly alive: boolean;
  /** Resident set size now, in bytes (undefined once it exited). */
  rssBytes(): number | undefined;
  /** Sends `signal` and waits for the exit (SIGKILL after 30 s for a SIGTERM that does not end it). */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

/**
 * The flags of every shard: the bench identity's kubeconfig (cluster-admin, so Leases too), its namespace for the
 * Leases, no endpoints (nothing scrapes them), the rollout governance off as for every participant (no Deployment
 * ever completes on the API targets), and warn-level logs (their cost is not the subject).
 */
function shardArgs(kubeconfigPath: string, identity: string): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    '--sharding',
    `--shard-identity=${identity}`,
    `--leader-election-namespace=${OPERATOR_NAMESPACE}`,
    '--metrics-bind-address=0',
    '--health-probe-bind-address=0',
    '--max-concurrent-rollouts=0',
    '--flap-threshold=0',
    '--log-format=json',
    `--log-level=${process.env.BENCH_OPERATOR_LOG_LEVEL ?? 'warn'}`,
  ];
}

/** Starts shard `identity`; its output goes to `logPath`. */
export function startShard(command: ShardCommand, kubeconfigPath: string, identity: string, logPath: string): ShardProcess {
  const log = createWriteStream(logPath, { flags: 'a' });
  const child: ChildProcess = spawn(process.execPath, [...command.nodeArgs, ...shardArgs(kubeconfigPath, identity)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...RUNTIME_ENV },
  });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const exited = new Promise<void>((done) =>
    child.once('exit', () => {
      log.end();
      done();
    }),
  );
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    identity,
    pid: child.pid!,
    get alive() {
      return alive();
    },
    rssBytes() {
      if (!alive()) return undefined;
      const kib = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
      return kib === undefined ? undefined : Number(kib) * 1024;
    },
    async stop(signal) {
      if (!alive()) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.kill(signal);
      await exited;
      clearTimeout(timer);
    },
  };
}
