// A node daemon started again when it fails of itself, as systemd's `Restart=on-failure` does on a real node.
import { appendFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import type { Daemon } from './node-sandbox.js';

/** Options of {@link restartOnFailure}. */
export interface RestartOptions {
  /** How many times the daemon is started again; the failure after the last is its exit reason. */
  readonly restarts: number;
  /** Told of each restart, with the exit that caused it. */
  readonly log?: (event: string, fields: Record<string, unknown>) => void;
  /** True once the node is being torn down: nothing is started then. */
  readonly stopping?: () => boolean;
}

/**
 * Runs `start()` and starts it again when its process exits with a failure code and no signal: kubelet v1.34 can die
 * of a fatal error of its own start (exit code 2: the DRA manager and the status setter both building the node
 * object), which its unit's restart policy hides on a real node and a test run must not fail of. An exit by a signal
 * is someone stopping it (a test, the teardown's kill of the cgroup) and is never undone. The returned daemon stands
 * for the process running now; its exit reason is set only once no restart follows. Each restart is written to the
 * daemon's log, between the two runs' lines.
 */
export function restartOnFailure(start: () => Daemon, options: RestartOptions): Daemon {
  let current = start();
  let left = options.restarts;
  const watch = (daemon: Daemon): void => {
    daemon.process.once('exit', (code, signal) => {
      if (signal !== null || code === 0 || left <= 0 || options.stopping?.()) return;
      left -= 1;
      const reason = daemon.exitReason() ?? `${daemon.name} exited (code ${code})`;
      appendFileSync(daemon.logPath, `\n--- started again by the node harness after: ${daemon.name} exited (code ${code}) ---\n`);
      options.log?.('daemonRestarted', { daemon: daemon.name, code, restartsLeft: left, reason });
      current = start();
      watch(current);
    });
  };
  watch(current);
  return {
    get name(): string {
      return current.name;
    },
    get process(): ChildProcess {
      return current.process;
    },
    get logPath(): string {
      return current.logPath;
    },
    exitReason: () => current.exitReason(),
  };
}
