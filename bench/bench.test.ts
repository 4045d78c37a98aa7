// The benchmark end to end, tiny: 20 CustomApps on the emulator, every participant converges and the report files appear.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import test from 'ava';
import { resultFiles, runBench } from './main.js';
import { CUSTOMAPP_PARTICIPANTS, QUICK, type BenchOptions, type Profile } from './options.js';
import { silentProgress } from './progress.js';
import type { BenchResults } from './results.js';
import type { CpuProfile } from './flame.js';

/** The quick profile scaled down to seconds per participant; no figure of it is asserted. */
const TINY: Profile = {
  ...QUICK,
  sizes: [20],
  unrelatedConfigMaps: 20,
  referencedUpdates: 5,
  unrelatedUpdates: 5,
  imageUpdates: 3,
  writesPerSecond: 50,
  missAfterMs: 2_000,
  settleMs: 500,
  idleSeconds: 1,
};

/** A tiny run's options: 20 CustomApps of the TINY profile into `outDir`, on the emulator unless `rest` says otherwise. */
function tinyRun(outDir: string, rest: Partial<BenchOptions> & Pick<BenchOptions, 'participants'>): BenchOptions {
  return { profile: TINY, target: 'emulator', sizes: [20], outDir, progress: false, ...rest };
}

// The workload participants (Reloader, built from source, and our workload mode) are the benchmark's alone: bench/workloads/.
test("a tiny run of every CustomApp participant on the emulator converges, shows the seed's and naive-get's misses, and writes the report, JSON and chart", async (t) => {
  t.timeout(900_000);
  const outDir = mkdtempSync(join(tmpdir(), 'bench-e2e-'));
  t.teardown(() => rmSync(outDir, { recursive: true, force: true }));
  const options = tinyRun(outDir, { participants: CUSTOMAPP_PARTICIPANTS });
  const results = await runBench(options, 'bench.test.ts', silentProgress);

  t.deepEqual(
    results.sessions.map((session) => session.participant),
    [...CUSTOMAPP_PARTICIPANTS],
  );
  for (const session of results.sessions) {
    t.is(session.error, undefined, `${session.participant}: ${session.error}`);
    t.is(session.coldStart?.converged, 20, `${session.participant} converges from cold`);
    // naive-get and the seed catch up on restart with the updates they missed; the others have nothing to roll.
    if (session.participant !== 'naive-get' && session.participant !== 'per-object')
      t.is(session.restart?.deploymentChanges, 0, `${session.participant} rolls nothing on restart`);
    t.true((session.afterSync?.memory.heapUsedBytes ?? 0) > 0, `${session.participant} reports its heap`);
  }
  const byName = Object.fromEntries(results.sessions.map((session) => [session.participant, session]));
  // naive-get never learns of a ConfigMap change; the seed loses the shared ConfigMap when one sharer switches away.
  t.is(byName['naive-get']!.referenced?.missed, byName['naive-get']!.referenced?.expected);
  t.true((byName['per-object']!.shared?.missed ?? 0) > 0);
  for (const participant of ['static-list-all', 'static-indexed', 'ours', 'peer']) {
    t.is(byName[participant]!.missedTotal, 0, `${participant} misses no update`);
  }
  // The Go peer writes the same hash as contentHash(): its Deployments matched the harness's expected hashes.
  t.is(byName.peer!.referenced?.missed, 0);

  const files = resultFiles(outDir, options);
  for (const file of Object.values(files)) t.true(existsSync(file), file);
  const written = JSON.parse(readFileSync(files.json, 'utf8')) as BenchResults;
  t.is(written.sessions.length, CUSTOMAPP_PARTICIPANTS.length);
  const report = readFileSync(files.markdown, 'utf8');
  for (const label of ['naive-get', 'static-list-all', 'static-indexed', 'per-object (seed)', '**ours**', 'peer (controller-runtime)'])
    t.true(report.includes(`| ${label} | 20 |`), label);
  t.regex(readFileSync(files.svg, 'utf8'), /^<svg [^>]*>[\s\S]*<\/svg>\s*$/);
});

test('--profile-phases profiles ours and the Go peer phase by phase through every phase', async (t) => {
  t.timeout(600_000);
  const outDir = mkdtempSync(join(tmpdir(), 'bench-phases-'));
  t.teardown(() => rmSync(outDir, { recursive: true, force: true }));
  const phaseProfileDir = join(outDir, 'profiles');
  const options = tinyRun(outDir, { participants: ['ours', 'peer'], phaseProfileDir });
  const results = await runBench(options, 'bench.test.ts', silentProgress);

  for (const session of results.sessions) {
    t.is(session.error, undefined, `${session.participant}: ${session.error}`);
    t.not(session.restart, undefined, `${session.participant} ran to its restart`);
  }
  t.deepEqual(readdirSync(phaseProfileDir).sort(), [
    'ours-20-cold-start.cpuprofile',
    'ours-20-other-updates.cpuprofile',
    'ours-20-referenced-updates.cpuprofile',
    'ours-20-restart.cpuprofile',
    'peer-20-cold-start.pprof',
    'peer-20-other-updates.pprof',
    'peer-20-referenced-updates.pprof',
    'peer-20-restart.pprof',
    'runner.cjs.map',
  ]);
  const map = JSON.parse(readFileSync(join(phaseProfileDir, 'runner.cjs.map'), 'utf8')) as { sources: string[] };
  t.true(
    map.sources.some((source) => source.endsWith('operator/reconcile/custom-app-reconciler.ts')),
    "the runner's source map names the operator's files",
  );
  for (const file of readdirSync(phaseProfileDir).filter((name) => name !== 'runner.cjs.map')) {
    const bytes = readFileSync(join(phaseProfileDir, file));
    if (file.endsWith('.pprof')) {
      // Go writes pprof's protobuf gzipped, its sample types and the mapping of the peer's binary named in its string
      // table whether or not a sample fell in the phase: at Go's 100 Hz a tiny run's phases are a handful of samples,
      // which may all fall in client-go or Go's runtime, so no frame of the peer's own code is certain to be there.
      const decoded = gunzipSync(bytes).toString('latin1');
      t.true(decoded.includes('nanoseconds'), `${file}: a CPU profile`);
      t.true(decoded.includes('controller-runtime-peer'), `${file}: of the peer's binary`);
      continue;
    }
    const profile = JSON.parse(bytes.toString('utf8')) as CpuProfile;
    t.true(profile.nodes.length > 1 && profile.endTime > profile.startTime, file);
  }
});

test("--apiserver-prof records kube-apiserver's CPU over each cold start on envtest and keeps the session's audit log", async (t) => {
  t.timeout(600_000);
  const outDir = mkdtempSync(join(tmpdir(), 'bench-apiserver-prof-'));
  t.teardown(() => rmSync(outDir, { recursive: true, force: true }));
  const apiserverProfileDir = join(outDir, 'apiserver');
  const options = tinyRun(outDir, { target: 'envtest', participants: ['ours'], coldStartOnly: true, apiserverProfileDir });
  const results = await runBench(options, 'bench.test.ts', silentProgress);

  t.is(results.sessions[0]!.error, undefined);
  const files = readdirSync(apiserverProfileDir).sort();
  const windows = files.filter((file) => /^ours-20-cold-start-\d{3}\.pb\.gz$/.test(file));
  t.true(windows.length >= 1, files.join(' '));
  // pprof's protobuf is gzipped: each window is a whole profile.
  for (const file of windows) t.deepEqual([...readFileSync(join(apiserverProfileDir, file)).subarray(0, 2)], [0x1f, 0x8b], file);
  const recorded = JSON.parse(readFileSync(join(apiserverProfileDir, 'ours-20-cold-start.windows.json'), 'utf8'));
  t.is(recorded.windows.length, windows.length);
  t.true(recorded.windows.every((window: { error?: string }) => window.error === undefined));
  const audit = readFileSync(join(apiserverProfileDir, 'ours-20-audit.log'), 'utf8');
  t.regex(audit, /"verb":"create".*"resource":"deployments"/);
});
