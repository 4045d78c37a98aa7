// `npm run bench`: runs every participant at every size, each on a fresh API server, and writes the report, JSON and chart.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { renderChart } from './chart.js';
import { buildPeer, prepareRunner, RECONCILE_WORKERS } from './operator-process.js';
import { PARTICIPANT_LABELS, parseOptions, sessionPlan, type BenchOptions } from './options.js';
import { createProgress, type Progress } from './progress.js';
import { renderReport, requestsTable, resourcesTable, sizeLabel } from './report.js';
import { type BenchResults, runHeader, type SessionResult } from './results.js';
import { runSession } from './session.js';
import { shardTable } from './shards/report.js';
import { runShardBench, shardResultFiles } from './shards/run.js';
import { buildReloader } from './workloads/process.js';

/** The files a run writes, named after its profile and target so that a quick run never overwrites a full one. */
export function resultFiles(
  outDir: string,
  options: Pick<BenchOptions, 'profile' | 'target'>,
): { markdown: string; json: string; svg: string } {
  const base = join(outDir, `${options.profile.name}-${options.target}`);
  return { markdown: `${base}.md`, json: `${base}.json`, svg: `${base}.svg` };
}

/** Writes the report, the raw figures and the chart of `results`. */
export function writeResults(
  outDir: string,
  options: Pick<BenchOptions, 'profile' | 'target'>,
  results: BenchResults,
): { markdown: string; json: string; svg: string } {
  mkdirSync(outDir, { recursive: true });
  const files = resultFiles(outDir, options);
  writeFileSync(files.json, `${JSON.stringify(results, null, 2)}\n`);
  writeReport(results, files);
  return files;
}

/** A run's report and chart as text; the report links the chart by `svgName`, its file name beside the report. */
export function renderRun(results: BenchResults, svgName: string): { markdown: string; svg: string } {
  return {
    markdown: renderReport(results, svgName),
    svg: renderChart(results.sessions, `customapp-operator benchmark (${results.profile}, ${results.target})`),
  };
}

/** Writes the chart and the report (which links the chart by its file name: both live in one directory). */
function writeReport(results: BenchResults, files: { markdown: string; svg: string }): void {
  const rendered = renderRun(results, basename(files.svg));
  writeFileSync(files.svg, rendered.svg);
  writeFileSync(files.markdown, rendered.markdown);
}

/** Runs the benchmark described by `options`; answers the results (also written to `options.outDir`). */
export async function runBench(options: BenchOptions, command: string, progress: Progress): Promise<BenchResults> {
  const startedAt = new Date().toISOString();
  const logDir = mkdtempSync(join(tmpdir(), 'customapp-bench-logs-'));
  progress.log(`logs of the operator processes: ${logDir}`);
  let peerBinary: string | undefined;
  if (options.participants.includes('peer') || options.participants.includes('peer-defaults')) {
    progress.status('building the controller-runtime peer (first time: a few minutes)');
    peerBinary = await buildPeer();
  }
  let reloaderBinary: string | undefined;
  if (options.participants.some((participant) => participant.startsWith('reloader'))) {
    progress.status('building stakater/Reloader from its source archive in bench/peers/reloader (first time: a few minutes)');
    reloaderBinary = await buildReloader();
  }
  const runner = await prepareRunner(options.cpuProfileDir, options.phaseProfileDir);
  if (runner.mode === 'tsx') progress.log('esbuild is missing: the TypeScript operators run under tsx (about 100 MB more RSS each)');
  const sessions: SessionResult[] = [];
  const plan = sessionPlan(options);
  const snapshot = (): BenchResults => ({
    ...runHeader(startedAt, command, options),
    settings: {
      ...options.profile,
      sizes: options.sizes,
      reconcileWorkers: RECONCILE_WORKERS,
      runner: runner.mode,
      ...(options.memoryLimitMiB ? { memoryLimitMiB: options.memoryLimitMiB } : {}),
    },
    sessions,
  });
  try {
    for (const [index, { size, participant }] of plan.entries()) {
      const label = `[${index + 1}/${plan.length} ${PARTICIPANT_LABELS[participant]} ${sizeLabel(size)}]`;
      sessions.push(
        await runSession({
          participant,
          size,
          profile: options.profile,
          target: options.target,
          logDir,
          peerBinary,
          reloaderBinary,
          runner,
          progress,
          label,
          coldStartOnly: options.coldStartOnly,
          memoryLimitMiB: options.memoryLimitMiB,
          apiserverProfileDir: options.apiserverProfileDir,
        }),
      );
      writeResults(options.outDir, options, snapshot());
    }
  } finally {
    runner.dispose();
  }
  progress.done();
  return snapshot();
}

/**
 * `npm run bench -- --render bench/results/full-envtest.json`: renders the report and the chart again from a run's
 * raw figures (after a change to the report or the chart), without running anything. Answers the files written.
 */
export function renderAgain(jsonPath: string): { markdown: string; svg: string } {
  const results = JSON.parse(readFileSync(jsonPath, 'utf8')) as BenchResults;
  const base = jsonPath.replace(/\.json$/, '');
  const files = { markdown: `${base}.md`, svg: `${base}.svg` };
  writeReport(results, files);
  return files;
}

async function main(): Promise<void> {
  const render = process.argv.indexOf('--render');
  if (render >= 0) {
    const files = renderAgain(resolve(process.argv[render + 1] ?? 'bench/results/full-envtest.json'));
    process.stdout.write(`report: ${files.markdown}\nchart: ${files.svg}\n`);
    return;
  }
  const outDir = resolve(import.meta.dirname, 'results');
  const options = parseOptions(process.argv.slice(2), { outDir, isTty: Boolean(process.stderr.isTTY) });
  const progress = createProgress(process.stderr, options.progress);
  const command = ['npm run bench --', ...process.argv.slice(2)].join(' ').replace(/ --$/, '');
  if (options.shards) {
    const shardResults = await runShardBench({ ...options, shards: options.shards }, command, progress);
    const files = shardResultFiles(options.outDir, options);
    process.stdout.write(`\n${shardTable(shardResults.sessions)}\n\nreport: ${files.markdown}\nraw figures: ${files.json}\n`);
    if (shardResults.sessions.some((session) => session.error)) process.exitCode = 1;
    return;
  }
  const results = await runBench(options, command, progress);
  const files = resultFiles(options.outDir, options);
  process.stdout.write(`\n${requestsTable(results.sessions)}\n\n${resourcesTable(results.sessions)}\n\n`);
  process.stdout.write(`report: ${files.markdown}\nraw figures: ${files.json}\nchart: ${files.svg}\n`);
  if (results.sessions.some((session) => session.error)) process.exitCode = 1;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  });
}
