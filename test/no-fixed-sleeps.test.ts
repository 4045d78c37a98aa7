// The operator's tests and testing/ helpers, and the tests named beside them, wait on an injected clock or an awaited
// condition, never a fixed sleep: on a loaded machine a sleep is too short (a flake) or needlessly long.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import test from 'ava';

const ROOT = resolve(import.meta.dirname, '..');

/** The files the rule covers: every test and testing/ helper under operator/, and these. */
const NAMED = ['emulator/test/deployment-status.test.ts', 'test/e2e/api-access.test.ts'];

/**
 * Sleeps that are part of a scenario rather than a wait for its result, with why. A wait for something to happen
 * never belongs here: await it (test/support/eventually.ts) or drive the injected scheduler (test/support/virtual-time.ts).
 */
const PACING: Readonly<Record<string, string>> = {
  'operator/dependencies/registry.cluster.test.ts': 'references arrive in small groups spread over time, as reconciles bring them',
};

/** A promise resolved by a real timer (`new Promise((done) => setTimeout(done, …))`); a sleep on a virtual clock is fine. */
const SLEEP = /new Promise(?:<void>)?\(\s*\(?(\w+)\)?\s*=>\s*(?:\{\s*)?setTimeout\(\s*\1\s*,/;

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (entry.name.endsWith('.ts')) yield relative(ROOT, path);
  }
}

test('no fixed sleep in the operator tests, their testing/ helpers, the emulator Deployment status test or the API access test', (t) => {
  const covered = [...files(join(ROOT, 'operator'))].filter((path) => path.endsWith('.test.ts') || path.includes('/testing/'));
  t.true(covered.length > 50, `the operator's tests are found (${covered.length})`);
  const sleeps = [...covered, ...NAMED].flatMap((path) =>
    readFileSync(join(ROOT, path), 'utf8')
      .split('\n')
      .flatMap((line, index) => (SLEEP.test(line) && PACING[path] === undefined ? [`${path}:${index + 1}: ${line.trim()}`] : [])),
  );
  t.deepEqual(sleeps, [], `fixed sleeps:\n${sleeps.join('\n')}`);
});

test('the rule sees a sleep in each form it names', (t) => {
  for (const line of [
    'await new Promise((done) => setTimeout(done, 500));',
    'await new Promise((resolve) => setTimeout(resolve, 3_000));',
    'await new Promise<void>((r) => { setTimeout(r, 20); });',
    'const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));',
  ])
    t.regex(line, SLEEP, line);
  t.notRegex('timer = setTimeout(() => reject(new Error(`late`)), ms);', SLEEP, 'a deadline is not a sleep');
  t.notRegex('new Promise((resolve) => clock.schedule(() => resolve(), ms))', SLEEP, 'a sleep on the virtual clock is not a real one');
});
