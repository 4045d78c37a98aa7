// restartOnFailure on real processes: a failing exit started again once, a second failure reported, a signal or a clean exit left alone.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Daemon } from './node-sandbox.js';
import { restartOnFailure } from './restart.js';

/** A daemon as the sandbox makes one: a shell script whose exit sets the reason. */
function scriptDaemon(logPath: string, script: string): Daemon {
  const child = spawn('bash', ['-c', script], { stdio: 'ignore' });
  let reason: string | undefined;
  child.once('exit', (code, signal) => {
    reason = `script exited (code ${code}, signal ${signal})`;
  });
  return { name: 'script', process: child, logPath, exitReason: () => reason };
}

/** A start function that runs the given scripts in turn, and what it was asked. */
function starts(scripts: string[]): { start: () => Daemon; count: () => number; logPath: string } {
  const logPath = join(mkdtempSync(join(tmpdir(), 'restart-test-')), 'script.log');
  let count = 0;
  return {
    start: () => scriptDaemon(logPath, scripts[Math.min(count++, scripts.length - 1)]!),
    count: () => count,
    logPath,
  };
}

/**
 * Resolves when the daemon's current process has exited: its listener runs after restartOnFailure's, registered at the
 * start, so a restart has been made by then.
 */
function exited(daemon: Daemon): Promise<void> {
  const process = daemon.process;
  return new Promise((done) => process.once('exit', () => done()));
}

test('a failing exit starts the daemon again, logged and marked in its log; the new process is the daemon', async (t) => {
  const { start, count, logPath } = starts(['exit 2', 'sleep 30']);
  const events: Array<{ event: string; fields: Record<string, unknown> }> = [];
  const daemon = restartOnFailure(start, { restarts: 1, log: (event, fields) => events.push({ event, fields }) });
  const first = daemon.process;
  await exited(daemon);
  t.is(count(), 2);
  t.not(daemon.process, first);
  t.is(daemon.exitReason(), undefined);
  t.deepEqual(
    events.map(({ event, fields }) => [event, fields.daemon, fields.code, fields.restartsLeft]),
    [['daemonRestarted', 'script', 2, 0]],
  );
  t.regex(readFileSync(logPath, 'utf8'), /started again by the node harness after: script exited \(code 2\)/);
  daemon.process.kill('SIGTERM');
  await exited(daemon);
  t.is(count(), 2, 'a stop by a signal is not undone');
  t.regex(daemon.exitReason() ?? '', /signal SIGTERM/);
});

test('a failure after the last restart is the exit reason', async (t) => {
  const { start, count } = starts(['exit 2', 'exit 3']);
  const daemon = restartOnFailure(start, { restarts: 1 });
  await exited(daemon);
  await exited(daemon);
  t.is(count(), 2);
  t.regex(daemon.exitReason() ?? '', /code 3/);
});

test('an exit by a signal or with code 0 is never undone', async (t) => {
  for (const script of ['kill -KILL $$', 'exit 0']) {
    const { start, count } = starts([script, 'sleep 30']);
    const daemon = restartOnFailure(start, { restarts: 3 });
    await exited(daemon);
    t.is(count(), 1, script);
    t.truthy(daemon.exitReason(), script);
  }
});

test('nothing is started again once the node is stopping', async (t) => {
  const { start, count } = starts(['exit 2', 'sleep 30']);
  const daemon = restartOnFailure(start, { restarts: 1, stopping: () => true });
  await exited(daemon);
  t.is(count(), 1);
  t.regex(daemon.exitReason() ?? '', /code 2/);
});
