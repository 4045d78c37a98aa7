// The participant process outlives no harness: closing its stdin (what the harness's death does) stops it cleanly.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import test from 'ava';
import { BUNDLE_FLAGS, prepareRunner, RUNTIME_ENV, RUNTIME_FLAGS } from './operator-process.js';
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

test('the runner is bundled as the Dockerfile bundles the operator: every package bundled, the same require banner', (t) => {
  const dockerfile = readFileSync(resolve(import.meta.dirname, '../Dockerfile'), 'utf8');
  const esbuild = dockerfile.slice(dockerfile.indexOf('npx esbuild'), dockerfile.indexOf('--outfile=/out/operator.mjs'));
  for (const flag of BUNDLE_FLAGS) t.true(esbuild.includes(flag), flag);
  t.false(esbuild.includes('--packages=external'), 'client-node is bundled');
  t.deepEqual(esbuild.match(/--external:\S+/g), ['--external:../emulator/index.js'], 'every npm package is bundled; the emulator left out');
});

test("the runner runs with the operator image's Node flags and environment", (t) => {
  const dockerfile = readFileSync(resolve(import.meta.dirname, '../Dockerfile'), 'utf8');
  const entrypoint = dockerfile.split('\n').find((line) => line.startsWith('ENTRYPOINT'))!;
  t.deepEqual(JSON.parse(entrypoint.slice('ENTRYPOINT'.length)), ['node', ...RUNTIME_FLAGS, '/app/operator/operator.mjs']);
  for (const [name, value] of Object.entries(RUNTIME_ENV)) t.true(dockerfile.includes(`ENV ${name}=${value}`), name);
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

  first.dispose();

  t.false(existsSync(firstBundle));
  t.true(existsSync(secondBundle), 'the run still going keeps the bundle its sessions start from');
});
