// Tests of starting a CommonJS bundle from V8's code cache: the cache written, used, and refused without harm.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { codeCachePath, runBundle } from './code-cache.js';

interface Ran {
  runs: number;
  dirname: string;
  filename: string;
  joined: string;
  isMain: boolean;
}

const ran = (): Ran | undefined => (globalThis as { codeCacheTest?: Ran }).codeCacheTest;

/** A bundle that records how it ran: CommonJS's `__dirname`, `__filename`, `require` and `module`, as Node gives them. */
function bundleFile(t: { teardown: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'code-cache-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'bundle.cjs');
  writeFileSync(
    file,
    [
      "const { join } = require('node:path');",
      'const seen = globalThis.codeCacheTest;',
      'function work(n) { let sum = 0; for (let i = 0; i < n; i++) sum += i; return sum; }',
      'work(1000);',
      "globalThis.codeCacheTest = { runs: (seen?.runs ?? 0) + 1, dirname: __dirname, filename: __filename, joined: join('a', 'b'), isMain: module.id === '.' };",
    ].join('\n'),
  );
  return file;
}

test.serial('the first start writes the cache, the next uses it; each runs the bundle as CommonJS with its own paths', (t) => {
  delete (globalThis as { codeCacheTest?: Ran }).codeCacheTest;
  const file = bundleFile(t);

  t.deepEqual(runBundle(file, true), { cache: 'written' });
  t.true(existsSync(codeCachePath(file)));
  t.deepEqual(runBundle(file, false), { cache: 'used' });

  t.deepEqual(ran(), { runs: 2, dirname: join(file, '..'), filename: file, joined: join('a', 'b'), isMain: true });
});

test.serial('with no cache the bundle is compiled from its source', (t) => {
  delete (globalThis as { codeCacheTest?: Ran }).codeCacheTest;
  const file = bundleFile(t);

  t.deepEqual(runBundle(file, false), { cache: 'none' });
  t.is(ran()?.runs, 1);
});

test.serial('a cache that does not match (another bundle, another Node, other flags) is refused and the bundle still runs', (t) => {
  delete (globalThis as { codeCacheTest?: Ran }).codeCacheTest;
  const file = bundleFile(t);
  writeFileSync(codeCachePath(file), Buffer.from('not a cache of this bundle'));

  t.deepEqual(runBundle(file, false), { cache: 'rejected' });
  t.is(ran()?.runs, 1);
});
