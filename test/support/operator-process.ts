// Runs `operator/main.ts` as a child process (what `npm start` runs) and follows its JSON log lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { eventually } from './eventually.js';
import { JsonLineReader } from './json-lines.js';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The flags that turn the rollout governance off (no budget, no flap breaker). The API targets run no Deployment
 * controller (envtest) or none unless asked (the emulator), so no rollout ever completes there: with the default budget
 * of 10 every rollout past the tenth would wait forever. Tests of the governance itself run it on.
 */
export const UNGOVERNED_FLAGS: readonly string[] = ['--max-concurrent-rollouts=0', '--flap-threshold=0'];

/** Leases short enough that a takeover after a kill takes about 2 s instead of the defaults' 15. */
export const FAST_ELECTION_FLAGS: readonly string[] = [
  '--leader-elect-lease-duration=2s',
  '--leader-elect-renew-deadline=1500ms',
  '--leader-elect-retry-period=250ms',
];

/** Neither the metrics nor the probe server (`0` turns each off): a process whose endpoints the test never reads takes no port. */
export const NO_SERVER_FLAGS: readonly string[] = ['--metrics-bind-address=0', '--health-probe-bind-address=0'];

/**
 * Metrics on a free loopback port over plain HTTP, for a harness that scrapes them with a plain fetch: the numbers are
 * under test there, and authenticated metrics are tested in test/e2e/metrics-auth.test.ts.
 */
export const PLAIN_METRICS_FLAGS: readonly string[] = ['--metrics-bind-address=127.0.0.1:0', '--metrics-secure=false'];

/** A running operator process. */
export class OperatorProcess {
  readonly lines: Record<string, unknown>[] = [];
  /** Standard output that was not a JSON line (embedded-mode instructions). */
  text = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;

  /** `nodeArgs` go to node before the script (for example `--expose-gc`, or `--import` of a diagnostics probe). */
  constructor(args: readonly string[], env: NodeJS.ProcessEnv = {}, nodeArgs: readonly string[] = []) {
    this.child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, 'operator/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, KUBECONFIG: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const reader = new JsonLineReader<Record<string, unknown>>(
      (line) => this.lines.push(line),
      (line) => {
        this.text += `${line}\n`;
      },
    );
    this.child.stdout!.on('data', (chunk: Buffer) => reader.push(chunk));
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    this.exited = new Promise((done) => this.child.once('exit', (code, signal) => done({ code, signal })));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process has exited (by a signal or on its own). */
  get hasExited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** The log lines with this `msg` (and these fields). */
  find(msg: string, fields: Readonly<Record<string, unknown>> = {}): Record<string, unknown>[] {
    return this.lines.filter((line) => line.msg === msg && Object.entries(fields).every(([name, value]) => line[name] === value));
  }

  /** Resolves when `predicate` holds over the output so far; rejects after `timeoutMs` or when the process exits. */
  async waitFor(what: string, predicate: () => boolean, timeoutMs = 30_000): Promise<void> {
    const stderr = (): string => `stderr: ${this.stderr.slice(-2000)}`;
    const outcome = await eventually(what, () => (predicate() ? 'met' : this.hasExited ? 'exited' : undefined), timeoutMs, 25, stderr);
    if (outcome === 'exited')
      throw new Error(`${what}: the operator exited (${this.child.exitCode ?? this.child.signalCode}); ${stderr()}`);
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Kills it (SIGKILL) if it still runs, and waits for the exit. */
  async dispose(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** Runs main.ts to completion (for --help and bad flags). */
export async function runOperatorOnce(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = new OperatorProcess(args);
  const { code } = await child.exited;
  return { code, stdout: child.text, stderr: child.stderr };
}
