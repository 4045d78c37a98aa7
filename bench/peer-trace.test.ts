// One update's stages, ours beside the Go peer's: both operators' trace lines line up with the harness's writes.
// A file of its own: the trace is switched on through the environment, for every session this process starts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runBench } from './main.js';
import { QUICK, type Profile } from './options.js';
import { type DumpLine, updateStages } from './update-trace.js';

const TINY: Profile = {
  ...QUICK,
  sizes: [20],
  unrelatedConfigMaps: 20,
  referencedUpdates: 5,
  unrelatedUpdates: 2,
  imageUpdates: 2,
  writesPerSecond: 20,
  missAfterMs: 2_000,
  settleMs: 500,
  idleSeconds: 1,
};

test("with BENCH_OPERATOR_LOG_LEVEL=info the peer traces enqueue, reconcile and write as ours does, so each update's stages line up for both", async (t) => {
  t.timeout(600_000);
  const outDir = mkdtempSync(join(tmpdir(), 'bench-trace-'));
  t.teardown(() => rmSync(outDir, { recursive: true, force: true }));
  const dumpFile = join(outDir, 'latency.jsonl');
  process.env.BENCH_OPERATOR_LOG_LEVEL = 'info';
  process.env.BENCH_LATENCY_DUMP = dumpFile;
  let logDir = '';
  const progress = {
    log: (line: string) => {
      logDir = /logs of the operator processes: (\S+)/.exec(line)?.[1] ?? logDir;
    },
    status: () => undefined,
    done: () => undefined,
  };
  const results = await runBench(
    { profile: TINY, target: 'emulator', sizes: [20], outDir, progress: false, participants: ['ours', 'peer'] },
    'peer-trace.test.ts',
    progress,
  );
  t.teardown(() => rmSync(logDir, { recursive: true, force: true }));
  for (const session of results.sessions) t.is(session.error, undefined, `${session.participant}: ${session.error}`);

  const dump = readFileSync(dumpFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as DumpLine);
  for (const participant of ['ours', 'peer']) {
    const log = readFileSync(join(logDir, `${participant}-20.log`), 'utf8').split('\n');
    // The dump holds both sessions' updates; each log lines up with its own session's, by time.
    const stages = updateStages(log, dump);
    t.is(stages.length, TINY.referencedUpdates, `${participant}: every referenced update lined up`);
    for (const stage of stages) {
      t.true(stage.eventMs >= 0 && stage.queueMs >= 0 && stage.reconcileMs >= 0, `${participant}: ${JSON.stringify(stage)}`);
      // The harness's watcher may see the Deployment before the write's answer reaches the operator.
      t.true(stage.writeMs > 0 && stage.latencyMs > 0, `${participant}: ${JSON.stringify(stage)}`);
    }
  }
});
