// Tests of the Markdown report, the target checks and the SVG chart, on hand-made figures.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { renderAgain } from './main.js';
import { escapeXml, renderChart } from './chart.js';
import type { Participant } from './options.js';
import {
  checkTargets,
  cpuTable,
  peerRatioChecks,
  formatNumber,
  formatVerbs,
  renderReport,
  requestsTable,
  resourcesTable,
  sizeLabel,
  stepsCell,
  workloadsTable,
} from './report.js';
import type { BenchResults, PhaseResult, SessionResult } from './results.js';

function phase(overrides: Partial<PhaseResult> = {}): PhaseResult {
  return { operations: 100, durationMs: 5000, requests: {}, selfRequests: {}, reconciles: 0, deploymentChanges: 0, ...overrides };
}

function session(participant: Participant, size: number, overrides: Partial<SessionResult> = {}): SessionResult {
  return {
    participant,
    size,
    namespaces: size <= 1000 ? 1 : 5,
    target: 'envtest',
    serverVersion: 'v1.34.4',
    requestSource: 'audit',
    coldStart: {
      ...phase({ requests: { list: { configmaps: 3 }, create: { 'deployments.apps': size } } }),
      converged: size,
      convergedMs: 12_345,
    },
    afterSync: {
      memory: { heapUsedBytes: 64 * 2 ** 20, heapTotalBytes: 80 * 2 ** 20, rssBytes: 128 * 2 ** 20, gcForced: true },
      openWatches: 4,
      cachedObjects: { configmaps: 900, 'deployments.apps': size },
    },
    referenced: phase({
      requests: { patch: { 'deployments.apps': 100 } },
      latencyMs: { count: 100, p50: 5, p95: 9, p99: 12.34, max: 20, mean: 6 },
      floorMs: { count: 100, p50: 1, p95: 2, p99: 3, max: 4, mean: 1 },
      expected: 100,
      missed: 0,
    }),
    unrelated: phase(),
    spec: phase({ requests: { patch: { 'deployments.apps': 50 } }, expected: 50, missed: 0 }),
    shared: phase({
      operations: 2,
      expected: 160,
      missed: 0,
      latencyMs: { count: 160, p50: 8, p95: 15, p99: 18, max: 20, mean: 9 },
      statusLatencyMs: { count: 160, p50: 12, p95: 21, p99: 24, max: 30, mean: 13 },
    }),
    idle: {
      windowSeconds: 45,
      serverWatchTimeoutSeconds: 60,
      watchStreams: 4,
      renewals: 0,
      measuredPerWatchHour: 0,
      extrapolatedPerWatchHour: 8,
      periods: { clientTimeout: 4, clientClosed: 0, serverDefault: 0 },
      requestsPerRenewal: 1,
      requests: {},
    },
    restart: { ...phase({ operations: 1, requests: { list: { configmaps: 1 } } }), settledMs: 2500, stopMs: 300 },
    missedTotal: 0,
    notes: {},
    ...overrides,
  };
}

const results = (sessions: SessionResult[]): BenchResults => ({
  startedAt: '2026-01-01T00:00:00Z',
  finishedAt: '2026-01-01T00:10:00Z',
  command: 'npm run bench -- --quick',
  profile: 'quick',
  target: 'envtest',
  machine: { cpus: 2, memoryGiB: 24, node: 'v20.20.2', platform: 'linux' },
  settings: {},
  sessions,
});

test('numbers read well in a table cell', (t) => {
  t.is(formatNumber(3), '3');
  t.is(formatNumber(12_345), '12.3k');
  t.is(formatNumber(20_000), '20k');
  t.is(formatNumber(245_911.7), '245.9k');
  t.is(formatNumber(2.5), '2.5');
  t.is(formatNumber(1), '1');
  t.is(formatNumber(0.04), '0.04');
  t.is(formatNumber(Number.NaN), '–');
  t.is(sizeLabel(1000), '1k');
  t.is(sizeLabel(10_000), '10k');
  t.is(sizeLabel(20), '20');
});

test('verbs are listed in API order, divided per operation, and an empty count reads 0', (t) => {
  t.is(
    formatVerbs({ patch: { 'deployments.apps': 200, 'customapps.app.example.com/status': 100 }, get: { configmaps: 100 } }, 100),
    'get 1 · patch 3',
  );
  t.is(formatVerbs({}), '0');
  t.is(formatVerbs(undefined), '–');
});

test('the tables have a row per session with its figures', (t) => {
  const sessions = [session('static-indexed', 1000), session('ours', 1000)];
  const requests = requestsTable(sessions).split('\n');
  t.is(requests.length, 4);
  t.is(requests[3], '| **ours** | 1k | list 3 · create 1000 | patch 1 | 0 | 0 | patch 0.5 | list 1 | 8 (0 measured at 60 s) |');
  const resources = resourcesTable(sessions).split('\n');
  t.is(resources[3], '| **ours** | 1k | 12.3 | 2.5 | 4 | 1900 (900 cm) | 64.0 | 128.0 | 5 / 9 / 12.3 | 3 | 18 | 24 | 0/310 |');
});

test('latencies from 10 s up read in whole seconds', (t) => {
  const slow = session('static-list-all', 10_000, {
    referenced: phase({ latencyMs: { count: 200, p50: 112_000, p95: 234_131, p99: 245_912, max: 250_000, mean: 120_000 } }),
  });
  t.true(resourcesTable([slow]).includes('| 112 s / 234 s / 246 s |'));
});

test('a session that never converged says so instead of a time', (t) => {
  const stuck = session('per-object', 1000, { coldStart: { ...phase(), converged: 640, convergedMs: undefined } });
  t.regex(resourcesTable([stuck]), /not converged \(640\/1000\)/);
});

test('the targets are checked against ours, and a miss is reported as a miss', (t) => {
  const ours10k = session('ours', 10_000, {
    referenced: phase({ latencyMs: { count: 100, p50: 50, p95: 150, p99: 250, max: 300, mean: 60 }, requests: { get: { configmaps: 2 } } }),
    unrelated: phase({ reconciles: 3 }),
    coldStart: { ...phase(), converged: 10_000, convergedMs: 45_000 },
    afterSync: {
      memory: { heapUsedBytes: 40 * 2 ** 20, heapTotalBytes: 0, rssBytes: 0, gcForced: true },
      openWatches: 8,
      cachedObjects: {},
    },
  });
  const static10k = session('static-indexed', 10_000, {
    afterSync: {
      memory: { heapUsedBytes: 100 * 2 ** 20, heapTotalBytes: 0, rssBytes: 0, gcForced: true },
      openWatches: 4,
      cachedObjects: {},
    },
  });
  const naive10k = session('naive-get', 10_000, {
    afterSync: {
      memory: { heapUsedBytes: 30 * 2 ** 20, heapTotalBytes: 0, rssBytes: 0, gcForced: true },
      openWatches: 3,
      cachedObjects: {},
    },
  });
  const checks = checkTargets([session('ours', 1000), ours10k, static10k, naive10k]);
  const met = Object.fromEntries(checks.map((check) => [check.target, check.met]));
  t.true(met['0 GETs at steady state (1k)']);
  t.true(met['≤ 10 watch streams at 1k CustomApps in one namespace']);
  t.true(met['p99 propagation ≤ 50 ms (1k)']);
  t.false(met['0 GETs at steady state (10k)']);
  t.false(met['0 reconciles per unrelated update (10k)']);
  t.false(met['p99 propagation ≤ 200 ms (10k)']);
  t.true(met['converged from cold ≤ 60 s (10k)']);
  t.true(met['heap ≤ 0.5× static-indexed (10k)']);
  t.true(met['≤ 12 re-requests per idle watch per hour (10k)']);
  const context = checks.find((check) => check.target.startsWith('(context)'));
  t.is(context?.measured, '10.0 MiB vs 70.0 MiB = 0.14×', "the heap over naive-get's, as context");
  t.is(context?.met, undefined, 'context is not a target');
});

test('the report holds both tables, the targets, the chart link and the failed sessions', (t) => {
  const failed = session('peer', 1000, { error: 'peer operator exited on its own (code 1)', referenced: undefined });
  const report = renderReport(results([session('ours', 1000), failed]), 'quick-envtest.svg');
  t.regex(report, /^# Benchmark results \(quick, envtest\)/);
  t.regex(report, /## API requests\n/);
  t.regex(report, /## Resources and latency\n/);
  t.regex(report, /## Targets for ours\n/);
  t.regex(report, /!\[requests, memory and latency\]\(quick-envtest\.svg\)/);
  t.regex(report, /- peer at 1k: peer operator exited on its own \(code 1\)/);
});

test('the chart is one SVG with a column per size and a labelled bar per figure', (t) => {
  const svg = renderChart([session('static-indexed', 1000), session('ours', 1000), session('ours', 10_000)], 'bench <quick> & co');
  t.regex(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  t.true(svg.trimEnd().endsWith('</svg>'));
  t.regex(svg, /bench &lt;quick&gt; &amp; co/);
  t.regex(svg, />1k CustomApps</);
  t.regex(svg, />10k CustomApps</);
  for (const title of ['API requests', 'API requests per update', 'Memory after sync', 'Propagation latency'])
    t.true(svg.includes(`>${title}`), title);
  t.regex(svg, /<title>ours, p99: 12\.34<\/title>/);
  t.regex(svg, /<title>static-indexed, heap: 64<\/title>/);
  t.regex(svg, /<title>ours, API floor p99 \(same run\): 3<\/title>/);
  // static-indexed did not run at 10k: its bars there read n/a.
  t.true(svg.includes('>n/a<'));
});

test('escapeXml escapes the XML special characters', (t) => {
  t.is(escapeXml('a<b & "c">'), 'a&lt;b &amp; &quot;c&quot;&gt;');
});

test("--render writes the report and the chart again from a run's JSON, next to it", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-render-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const json = join(dir, 'full-envtest.json');
  writeFileSync(json, JSON.stringify(results([session('ours', 1000), session('static-indexed', 1000)])));
  const files = renderAgain(json);
  t.deepEqual(files, { markdown: join(dir, 'full-envtest.md'), svg: join(dir, 'full-envtest.svg') });
  t.regex(readFileSync(files.markdown, 'utf8'), /!\[requests, memory and latency\]\(full-envtest\.svg\)/);
  t.regex(readFileSync(files.svg, 'utf8'), /^<svg/);
});

test('the CPU table sums the update phases and divides the cold start by its reconciles', (t) => {
  const ours = session('ours', 1000, {
    coldStart: {
      ...phase({ reconciles: 2000, cpuSeconds: { operator: 5, apiserver: 12.5, etcd: 1.25 } }),
      converged: 1000,
      convergedMs: 6000,
    },
    referenced: phase({ cpuSeconds: { operator: 0.5, apiserver: 2 } }),
    shared: phase({ cpuSeconds: { operator: 1, apiserver: 3 } }),
    restart: { ...phase({ cpuSeconds: { operator: 1.5 } }), settledMs: 1000, stopMs: 100 },
  });
  const rows = cpuTable([ours, session('peer', 1000)]).split('\n');
  t.is(rows[2], '| **ours** | 1k | 5.0 | 1.5 | 1.5 | 2.50 | 12.5 | 1.3 | 5.0 |');
  t.is(rows[3], '| peer (controller-runtime) | 1k | – | – | – | – | – | – | – |');
});

test('a steps cell lists the costliest step first, with its mean and count', (t) => {
  t.is(
    stepsCell({ dependencies: { count: 10, seconds: 0.001 }, 'write create deployments.apps': { count: 5, seconds: 0.05 } }),
    'write create deployments.apps 10 ms × 5 · dependencies 0.1 ms × 10',
  );
  t.is(stepsCell(undefined), '–');
});

test('the goals against the peer are ratios of the same run, met at or under their limit', (t) => {
  const ours = session('ours', 1000);
  const peer = session('peer', 1000, {
    referenced: phase({ latencyMs: { count: 100, p50: 5, p95: 9, p99: 10, max: 20, mean: 6 } }),
    coldStart: { ...phase(), converged: 1000, convergedMs: 8000 },
  });
  const checks = Object.fromEntries(peerRatioChecks(ours, peer, '1k').map((check) => [check.target, check]));
  t.like(checks['p99 propagation ≤ 1.0× the peer (1k)'], { measured: '12.3 vs 10 ms = 1.23×', met: false });
  t.like(checks['p99 propagation ≤ 1.5× the API floor (1k)'], { met: false });
  t.like(checks['RSS after sync ≤ 1.0× the peer (1k)'], { measured: '128.0 vs 128.0 MiB = 1.00×', met: true });
  t.like(checks['cold start ≤ 1.5× the peer (1k)'], { measured: '12.3 vs 8.0 s = 1.54×', met: false });
  t.like(peerRatioChecks(ours, undefined, '1k')[0], { measured: 'no figure', met: undefined });
});

test('the workload participants get their own table, with what each rolled unasked, and it is left out of a run without them', (t) => {
  const reloader = session('reloader', 1000, {
    restart: { ...phase({ deploymentChanges: 3 }), stopMs: 10, settledMs: 500 },
    unrelated: phase({ deploymentChanges: 2 }),
    afterSync: { memory: { rssBytes: 100 * 2 ** 20, gcForced: false }, openWatches: 2, cachedObjects: {} },
  });
  const rows = workloadsTable([session('peer', 1000), reloader])
    .split('\n')
    .slice(2);
  t.deepEqual(rows, ['| Reloader (annotated Deployments) | 1k | 0 | 2 | 3 | 5 / 9 / 12.3 | 18 | 0/310 | 100.0 | patch 1 |']);
  // Reloader does not tell its caches or its heap here: unknown, not zero.
  t.true(resourcesTable([reloader]).includes('| Reloader (annotated Deployments) | 1k | 12.3 | 0.5 | 2 | – | – | 100.0 |'));
  const results = (sessions: SessionResult[]): BenchResults => ({
    startedAt: 'a',
    finishedAt: 'b',
    command: 'c',
    profile: 'quick',
    target: 'envtest',
    machine: { cpus: 2, memoryGiB: 24, node: 'v20', platform: 'linux' },
    settings: {},
    sessions,
  });
  t.true(renderReport(results([reloader])).includes('## Workload participants (annotated Deployments)'));
  t.false(renderReport(results([session('peer', 1000)])).includes('## Workload participants'));
});
