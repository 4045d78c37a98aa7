// Prints where a CI run's time went, from the log .ci/run writes with each line prefixed by the epoch second it was
// read: each phase (npm ci, lint, the builds of npm test's pretest, the type-check, the tests) and the test files whose
// results spanned longest. CI shows only the end of its output, so this goes just before the final count.
// Usage: node .ci/timings.mjs <stamped log> <epoch second the run started>
import { readFileSync } from 'node:fs';

const [file, startArg] = process.argv.slice(2);
const start = Number(startArg);
const lines = readFileSync(file, 'utf8')
  .split('\n')
  .map((line) => {
    const match = /^(\d+) (.*)$/.exec(line);
    return match ? { at: Number(match[1]), text: match[2] } : undefined;
  })
  .filter((line) => line !== undefined);

const firstAt = (pattern) => lines.find((line) => pattern.test(line.text))?.at;
const end = lines.at(-1)?.at ?? start;
const marks = [
  ['npm ci', start],
  ['lint', firstAt(/^> customapp-operator@[^ ]+ lint$/)],
  ['builds', firstAt(/^> customapp-operator@[^ ]+ pretest$/)],
  ['type-check', firstAt(/^> customapp-operator@[^ ]+ test$/)],
  ['tests', firstAt(/^TAP version/)],
].filter(([, at]) => at !== undefined);
const phases = marks.map(([name, at], index) => `${name} ${(marks[index + 1]?.[1] ?? end) - at} s`);
console.log(`timings: ${phases.join(', ')}; total ${end - start} s`);

// A result line names its file by the titles before the test's own: "ok 12 - test › e2e › file › [envtest] title".
const spans = new Map();
for (const { at, text } of lines) {
  const match = /^(?:not )?ok \d+ - (.*)$/.exec(text);
  if (!match) continue;
  const parts = match[1].split(' › ');
  const name = parts.slice(0, Math.max(1, parts.length - 1)).join(' › ');
  const span = spans.get(name) ?? { first: at, last: at, tests: 0 };
  span.last = at;
  span.tests += 1;
  spans.set(name, span);
}
const testsStart = firstAt(/^TAP version/) ?? start;
const slowest = [...spans.entries()].sort(([, a], [, b]) => b.last - b.first - (a.last - a.first)).slice(0, 8);
console.log('the test files whose results spanned longest (seconds after the tests began: first → last result, count):');
for (const [name, span] of slowest) {
  console.log(`  ${span.first - testsStart} → ${span.last - testsStart} s, ${span.tests}: ${name}`);
}
