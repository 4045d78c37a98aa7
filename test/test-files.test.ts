// Every test file in the repository is one that `npm test` runs: ava's globs in package.json cover them all.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

test("every *.test.ts that git tracks lies under one of ava's globs", (t) => {
  const globs = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { ava: { files: string[] } }).ava.files;
  // Each glob is `<folder>/**/*.test.ts`: a file is covered when it lies under one of those folders.
  const folders = globs.map((glob) => {
    const match = /^([\w.-]+)\/\*\*\/\*\.test\.ts$/.exec(glob);
    if (!match) t.fail(`ava glob ${glob} is not of the form <folder>/**/*.test.ts that this test reads`);
    return `${match?.[1]}/`;
  });
  const files = execFileSync('git', ['ls-files', '*.test.ts'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
  t.true(files.length > 100, `git ls-files found only ${files.length} test files`);
  const uncovered = files.filter((file) => !folders.some((folder) => file.startsWith(folder)));
  t.deepEqual(uncovered, [], 'test files npm test never runs: add their folder to "ava.files" in package.json');
});
