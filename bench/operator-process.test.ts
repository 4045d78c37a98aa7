// The participant process outlives no harness: closing its stdin (what the harness's death does) stops it cleanly.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import test from 'ava';
import { codeCachePath } from '../operator/code-cache.js';
import { BUNDLE_FLAGS, bundle, IMAGE_JEMALLOC, JEMALLOC, prepareRunner, RUNTIME_ENV, RUNTIME_FLAGS } from './operator-process.js';
import { startBenchServer } from './server.js';

const RUNNER = resolve(import.meta.dirname, 'runner.ts');

test('the runner stops and exits 0 when its stdin ends, as when the harness dies without a word', async (t) => {
  t.timeout(120_000);
  const server = await startBenchServer('emulator', { watchTimeoutSeconds: 60 });
  t.teardown(() => server.stop());
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      RUNNER,
      '--strategy',
      'ours',
      '--kubeconfig',
      server.operatorKubeconfigPath,
      '--stats-bind-address',
      '127.0.0.1:0',
      '--log-level',
      'info',
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  t.teardown(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const lines = createInterface(child.stdout!);
  const listening = new Promise<void>((done) => lines.on('line', (line) => line.includes('stats listening') && done()));
  const first = await Promise.race([listening.then(() => 'listening'), exited.then(() => 'exited')]);
  t.is(first, 'listening', stderr);
  child.stdin!.end();
  const [code, signal] = await exited;
  t.deepEqual({ code, signal }, { code: 0, signal: null }, stderr);
  t.regex(stderr, /"signal":"harness gone"[^\n]*"msg":"stopping"|"msg":"stopping"[^\n]*"signal":"harness gone"/);
});

test('the runner is bundled as the Dockerfile bundles the operator: every package bundled, as CommonJS', (t) => {
  const dockerfile = readFileSync(resolve(import.meta.dirname, '../Dockerfile'), 'utf8');
  const esbuild = dockerfile.slice(dockerfile.indexOf('npx esbuild'), dockerfile.indexOf('--outfile=/out/operator.cjs'));
  for (const flag of BUNDLE_FLAGS) t.true(esbuild.includes(flag), flag);
  t.false(esbuild.includes('--packages=external'), 'client-node is bundled');
  t.deepEqual(esbuild.match(/--external:\S+/g), ['--external:../emulator/index.js'], 'every npm package is bundled; the emulator left out');
});

test("the runner runs with the operator image's Node flags and environment", (t) => {
  const dockerfile = readFileSync(resolve(import.meta.dirname, '../Dockerfile'), 'utf8');
  const entrypoint = dockerfile.split('\n').find((line) => line.startsWith('ENTRYPOINT'))!;
  t.deepEqual(JSON.parse(entrypoint.slice('ENTRYPOINT'.length)), [
    'node',
    ...RUNTIME_FLAGS,
    '/app/operator/start.cjs',
    '/app/operator/operator.cjs',
  ]);
  // The code cache is written under the entrypoint's flags: V8 refuses it under any other.
  t.true(dockerfile.includes(`RUN CODE_CACHE=write node ${RUNTIME_FLAGS.join(' ')} /app/operator/start.cjs /app/operator/operator.cjs`));
  // The image preloads jemalloc from its own path, whether or not this machine has the library.
  for (const [name, value] of Object.entries({ ...RUNTIME_ENV, LD_PRELOAD: IMAGE_JEMALLOC }))
    t.true(dockerfile.includes(`ENV ${name}=${value}`), name);
});

test('the runtime environment preloads jemalloc when it is installed, as the image does', (t) => {
  const maps = spawnSync(process.execPath, ['-e', "process.stdout.write(require('node:fs').readFileSync('/proc/self/maps', 'utf8'))"], {
    encoding: 'utf8',
    env: { ...process.env, ...RUNTIME_ENV },
  });
  t.is(maps.status, 0, maps.stderr);
  // envtest/node/install-deps.sh installs libjemalloc2 with the cluster's packages; without it the runner uses glibc's.
  t.is(maps.stdout.includes('libjemalloc.so.2'), JEMALLOC !== undefined);
  t.is(maps.stderr, '', 'the preload loads without a warning');
});

test('two runs in one process bundle the runner into files of their own, and each removes only its own', async (t) => {
  t.timeout(120_000);
  const first = await prepareRunner();
  const second = await prepareRunner();
  t.teardown(() => {
    first.dispose();
    second.dispose();
  });
  if (first.mode === 'tsx') return t.pass('esbuild is missing: nothing is bundled');
  const [firstBundle, secondBundle] = [first.nodeArgs.at(-1)!, second.nodeArgs.at(-1)!];
  t.not(firstBundle, secondBundle);

  t.true(existsSync(codeCachePath(firstBundle)));
  first.dispose();

  t.false(existsSync(firstBundle));
  t.false(existsSync(codeCachePath(firstBundle)));
  t.true(existsSync(secondBundle), 'the run still going keeps the bundle its sessions start from');
  t.true(existsSync(codeCachePath(secondBundle)));
});

test("the operator's bundle starts from its code cache as the image starts it, its arguments its own; under other flags the cache is refused and it still runs", async (t) => {
  t.timeout(120_000);
  const outfile = resolve(import.meta.dirname, `../node_modules/.cache/customapp-bench/code-cache-test-${process.pid}.cjs`);
  const bundled = await bundle(resolve(import.meta.dirname, '../operator/main.ts'), outfile);
  t.teardown(() => bundled.dispose());
  const start = (flags: readonly string[], args: readonly string[]) =>
    spawnSync(process.execPath, [...flags, ...bundled.startArgs, ...args], { encoding: 'utf8', env: { ...process.env, ...RUNTIME_ENV } });

  const help = start(RUNTIME_FLAGS, ['--help']);
  t.is(help.status, 0, help.stderr);
  t.regex(help.stdout, /^Usage: npm start/);
  t.is(help.stderr, '', 'the cache made under these flags is used');

  const missing = start(RUNTIME_FLAGS, ['--kubeconfig=/nonexistent/kubeconfig']);
  t.is(missing.status, 1);
  t.regex(missing.stdout + missing.stderr, /--kubeconfig: \\"\/nonexistent\/kubeconfig\\" does not exist/);

  const otherFlags = start(['--max-semi-space-size=4'], ['--help']);
  t.is(otherFlags.status, 0, otherFlags.stderr);
  t.regex(otherFlags.stdout, /^Usage: npm start/);
  t.regex(otherFlags.stderr, /code cache .* rejected/);
});
