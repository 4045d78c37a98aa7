// The phase profiler writes what was sampled between two cuts, drops the samples of an unnamed cut, refuses a bad label.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { callTree, type CpuProfile, withoutIdle } from './flame.js';
import { PhaseProfiler } from './phase-profile.js';

/** Spins for `cpuMs` of this process's own CPU time, so that a loaded machine still yields samples of it. */
function spinForProfile(cpuMs: number): number {
  const until = process.cpuUsage().user + cpuMs * 1000;
  let sum = 0;
  while (process.cpuUsage().user < until) sum += Math.sqrt(sum + 1);
  return sum;
}

/** A started profiler writing into a fresh directory; both are stopped and removed when the test ends. */
async function startedProfiler(t: ExecutionContext): Promise<{ dir: string; profiler: PhaseProfiler }> {
  const dir = mkdtempSync(join(tmpdir(), 'phase-profile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const profiler = new PhaseProfiler(dir);
  await profiler.start();
  t.teardown(() => profiler.stop());
  return { dir, profiler };
}

test.serial('cut(label) writes the samples since the last cut as <label>.cpuprofile; cut() writes nothing', async (t) => {
  const { dir, profiler } = await startedProfiler(t);

  spinForProfile(100);
  t.is(await profiler.cut(), undefined);
  t.deepEqual(readdirSync(dir), []);

  spinForProfile(100);
  const path = await profiler.cut('ours-1000-updates');
  t.is(path, join(dir, 'ours-1000-updates.cpuprofile'));
  const profile = JSON.parse(readFileSync(path!, 'utf8')) as CpuProfile;
  t.true(profile.endTime > profile.startTime);
  // About 100 busy samples at 1 ms; V8 may inline the spin into its caller, so its name is not asserted.
  t.true(withoutIdle(callTree(profile)).tree.total >= 20);
});

test.serial('a label that could leave the directory is refused, and the profiler keeps working', async (t) => {
  const { dir, profiler } = await startedProfiler(t);
  await t.throwsAsync(profiler.cut('../escape'), { message: /label "\.\.\/escape"/ });
  t.is(await profiler.cut('restart'), join(dir, 'restart.cpuprofile'));
  t.deepEqual(readdirSync(dir), ['restart.cpuprofile']);
});
