// Starts a CommonJS bundle from V8's code cache (`code-cache.ts` says why): `node start.cjs <bundle.cjs> [args…]`;
// with CODE_CACHE=write, loads the bundle, writes its cache and exits.
import { resolve } from 'node:path';
import { codeCachePath, runBundle } from './code-cache.js';

function start(argv: readonly string[]): void {
  const [bundle] = argv;
  if (!bundle) {
    process.stderr.write('usage: node start.cjs <bundle.cjs> [args…]\n');
    process.exit(2);
  }
  // The bundle reads its arguments from process.argv.slice(2), as if Node had started it.
  process.argv.splice(1, 2, resolve(bundle));
  const write = process.env.CODE_CACHE === 'write';
  const { cache } = runBundle(bundle, write);
  if (write) process.exit(0);
  if (cache === 'rejected')
    process.stderr.write(`code cache ${codeCachePath(bundle)} rejected (another Node or other flags): compiled without it\n`);
}

start(process.argv.slice(2));
