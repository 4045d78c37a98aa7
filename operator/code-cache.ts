// Runs a CommonJS bundle from V8's code cache (`operator/start.ts` is the command).
//
// Compiling the operator's bundle (4 MB, every npm package in it) and the functions its modules run as they load is
// most of a start's CPU before the first request. V8 can skip both when handed the bytecode of a run before, but Node
// 20 offers that only to scripts compiled through `vm.Script` (its ES module loader and its compile cache, from Node
// 22, are out of reach), so the bundle is CommonJS and this file compiles it as Node's own CommonJS loader would, with
// `<bundle>.v8-cache` as its cached data. The image writes the cache at build time (`CODE_CACHE=write`: the bundle's
// modules are loaded, then the bytecode of all that ran is written and the process exits), with the same Node and the
// same flags as its entrypoint: V8 rejects a cache made by another version or with other flags, and then compiles the
// bundle as if there were no cache (said on stderr), so a stale or missing cache costs time, never correctness.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { constants, Script } from 'node:vm';

/** The cache file of a bundle. */
export function codeCachePath(bundle: string): string {
  return `${bundle}.v8-cache`;
}

/**
 * Compiles `bundle` (with its cache, when there is one) and runs it as the main module (it reads its arguments from
 * process.argv, as `start.ts` leaves them). With `write`, writes the bytecode of what the bundle ran as it loaded to its cache file instead of
 * going on: the caller then exits.
 */
export function runBundle(bundle: string, write: boolean): { readonly cache: 'used' | 'rejected' | 'none' | 'written' } {
  const filename = resolve(bundle);
  const cacheFile = codeCachePath(filename);
  const cachedData = !write && existsSync(cacheFile) ? readFileSync(cacheFile) : undefined;
  const script = new Script(Module.wrap(readFileSync(filename, 'utf8')), {
    filename,
    cachedData,
    // The bundle's `import()` of what it leaves outside (the emulator, only ever run by `npm start`).
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const main = { exports: {}, filename, id: '.', loaded: false };
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: unknown,
    filename: string,
    dirname: string,
  ) => void;
  wrapper.call(main.exports, main.exports, createRequire(filename), main, filename, dirname(filename));
  if (write) {
    // Whole or not at all: a process starting meanwhile reads the previous cache, never half of this one.
    const partial = `${cacheFile}.${process.pid}`;
    writeFileSync(partial, script.createCachedData());
    renameSync(partial, cacheFile);
    return { cache: 'written' };
  }
  if (!cachedData) return { cache: 'none' };
  return { cache: script.cachedDataRejected ? 'rejected' : 'used' };
}
