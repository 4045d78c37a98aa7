// bench/README.md's goals table says what the committed final runs' raw figures say: each cell's numbers are the goal
// values goals.ts computes from results/final-*, so that neither can change without the other.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { GOALS, goalValues } from './goals.js';
import type { BenchResults } from './results.js';
import { percentile } from './stats.js';

const BENCH = import.meta.dirname;
const run = (path: string): BenchResults => JSON.parse(readFileSync(join(BENCH, 'results', path), 'utf8')) as BenchResults;

/** The goal values of one size of a run. */
function at(results: BenchResults, size: number): (number | undefined)[] {
  const found = goalValues(results).find((each) => each.size === size);
  if (!found) throw new Error(`no session of ours and the peer at ${size}`);
  return found.values;
}

const quick = [1, 2, 3].map((n) => at(run(`final-quick-${n}/quick-envtest.json`), 1000));
const full = run('final-full/full-envtest.json');
/**
 * The table's columns after the goal, each its size and its runs' goal values: the three quick runs (and their median),
 * the full run at 1k, at 10k, and 25k.
 */
const columns = [
  { size: 1000, runs: quick },
  { size: 1000, runs: [at(full, 1000)] },
  { size: 10_000, runs: [at(full, 10_000)] },
  { size: 25_000, runs: [at(run('final-25k/full-envtest.json'), 25_000)] },
];

/** The median of a column's values of one goal (the value itself for a single run). */
const median = (values: readonly number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** The rows of the table under "the goals", each as its cells. */
function readmeRows(): string[][] {
  const readme = readFileSync(join(BENCH, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Ours against the controller-runtime peer: the goals'));
  const table = section.slice(section.indexOf('| goal |')).split('\n\n')[0]!;
  return table
    .split('\n')
    .slice(2)
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

/** The numbers a cell states, in order (a `+` sign kept off; `×`, `MiB` and words ignored). */
const numbersOf = (cell: string): number[] => [...cell.matchAll(/-?\d+\.\d+/g)].map((match) => Number(match[0]));

const rows = readmeRows();

test('the goals table has a row for every goal goals.ts computes', (t) => {
  for (const goal of GOALS)
    t.truthy(
      rows.find((cells) => cells[0]!.startsWith(goal.row)),
      goal.row,
    );
});

GOALS.forEach((goal, index) => {
  test(`goals table: ${goal.row}`, (t) => {
    const cells = rows.find((each) => each[0]!.startsWith(goal.row))!;
    const rounded = (value: number | undefined): number | undefined =>
      value === undefined ? undefined : Number(value.toFixed(goal.digits));
    columns.forEach(({ runs }, column) => {
      const stated = numbersOf(cells[column + 1]!);
      const values = runs.map((values) => rounded(values[index]));
      if (values.every((value) => value === undefined)) {
        t.deepEqual(stated, [], `${goal.row}, column ${column + 1}: no figure, none stated`);
        return;
      }
      t.deepEqual(stated.slice(0, values.length), values, `${goal.row}, column ${column + 1}`);
      // Three runs may be followed by their median.
      if (stated.length > values.length)
        t.deepEqual(stated.slice(values.length), [rounded(median(runs.map((values) => values[index]!)))], `${goal.row}: the median`);
    });
  });
});

// The last cell's verdict is the limit's: a goal is met when the median of the quick runs and every full run at the
// sizes it is judged at are within it (unrounded), and a goal missed at any of them says **missed**.
GOALS.forEach((goal, index) => {
  test(`goals table's verdict: ${goal.row}`, (t) => {
    const cells = rows.find((each) => each[0]!.startsWith(goal.row))!;
    const verdict = cells[columns.length + 1]!;
    const over = columns.flatMap(({ size, runs }, column) => {
      const values = runs.map((values) => values[index]).filter((value) => value !== undefined);
      if (values.length === 0 || (goal.sizes && !goal.sizes.includes(size))) return [];
      const judged = median(values);
      return judged > goal.limit ? [`column ${column + 1}: ${judged} > ${goal.limit}`] : [];
    });
    if (over.length > 0) t.true(verdict.includes('**missed**'), `${goal.row} says "${verdict}", but ${over.join('; ')}`);
    else t.regex(verdict, /^met\b/, `${goal.row}: every judged figure is within ${goal.limit}`);
  });
});
