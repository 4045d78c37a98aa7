// Every test file in the repository is one that `npm test` runs (ava's globs in ava.config.mjs cover them all), and the files said to take longest start first.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');

interface AvaConfig {
  readonly files: string[];
  readonly sortTestFiles: (a: string, b: string) => number;
}
const avaConfigModule = (await import(pathToFileURL(resolve(ROOT, 'ava.config.mjs')).href)) as {
  default: AvaConfig;
  LONGEST_FIRST: string[];
};
const trackedTestFiles = (): string[] =>
  execFileSync('git', ['ls-files', '*.test.ts'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);

test("every *.test.ts that git tracks lies under one of ava's globs", (t) => {
  const globs = avaConfigModule.default.files;
  // Each glob is `<folder>/**/*.test.ts`: a file is covered when it lies under one of those folders.
  const folders = globs.map((glob) => {
    const match = /^([\w.-]+)\/\*\*\/\*\.test\.ts$/.exec(glob);
    if (!match) t.fail(`ava glob ${glob} is not of the form <folder>/**/*.test.ts that this test reads`);
    return `${match?.[1]}/`;
  });
  const files = trackedTestFiles();
  t.true(files.length > 100, `git ls-files found only ${files.length} test files`);
  const uncovered = files.filter((file) => !folders.some((folder) => file.startsWith(folder)));
  t.deepEqual(uncovered, [], 'test files npm test never runs: add their folder to "files" in ava.config.mjs');
});

test('the files said to take longest exist and start first, longest first; the rest keep their order by name', (t) => {
  const { LONGEST_FIRST, default: config } = avaConfigModule;
  const tracked = trackedTestFiles();
  t.deepEqual(
    LONGEST_FIRST.filter((file) => !tracked.includes(file)),
    [],
    'LONGEST_FIRST in ava.config.mjs names files that are gone',
  );
  // ava hands the sorter absolute paths.
  const absolute = [...tracked].reverse().map((file) => resolve(ROOT, file));
  const sorted = absolute.sort(config.sortTestFiles).map((file) => file.slice(ROOT.length + 1));
  t.deepEqual(sorted.slice(0, LONGEST_FIRST.length), LONGEST_FIRST);
  const rest = sorted.slice(LONGEST_FIRST.length);
  t.deepEqual(
    rest,
    [...rest].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })),
  );
});
