// The committed runs under bench/results/ render again from their JSON byte for byte, so that each report says what its raw figures say.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import test from 'ava';
import { renderRun } from './main.js';
import type { BenchResults } from './results.js';
import { renderShardReport, type ShardBenchResults } from './shards/report.js';

const RESULTS = join(import.meta.dirname, 'results');

/**
 * A run's raw figures end with its target's name (`resultFiles`, `shardResultFiles`: `full-envtest.json`, a copy may
 * add a prefix such as `memory-limit-512-`); other files beside them are not runs.
 */
const RUN_JSON = /-(envtest|emulator)\.json$/;

/** Every run's `.json` under `dir`, at any depth. */
function runFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return runFiles(path);
    return RUN_JSON.test(entry.name) ? [path] : [];
  });
}

const runs = runFiles(RESULTS);

test('bench/results/ holds committed runs', (t) => {
  t.true(runs.length > 0);
});

for (const json of runs) {
  const name = relative(RESULTS, json);
  const base = json.replace(/\.json$/, '');
  // A `--shards` run writes a report and no chart (bench/shards/run.ts).
  if (basename(json).startsWith('shards-')) {
    test(`${name}: the report renders again byte for byte`, (t) => {
      const results = JSON.parse(readFileSync(json, 'utf8')) as ShardBenchResults;
      t.is(renderShardReport(results), readFileSync(`${base}.md`, 'utf8'));
    });
    continue;
  }
  test(`${name}: the report and the chart render again byte for byte`, (t) => {
    const results = JSON.parse(readFileSync(json, 'utf8')) as BenchResults;
    const rendered = renderRun(results, `${basename(base)}.svg`);
    t.is(rendered.markdown, readFileSync(`${base}.md`, 'utf8'));
    t.is(rendered.svg, readFileSync(`${base}.svg`, 'utf8'));
  });
}
