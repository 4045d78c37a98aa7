// Tests of the envtest harness: it starts a real API server, stops without orphans, and fails loudly without assets.
import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { envtestAssets, startEnvtest } from './harness.js';

/** Processes whose command line mentions `needle` (the envtest temp dir is unique per start). */
function processesMentioning(needle: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', needle], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter((line) => line && !line.includes('pgrep'));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

async function eventually(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((done) => setTimeout(done, 200));
  }
  return check();
}

test('startEnvtest serves a real kube-apiserver with an admin identity, and stop() leaves no process or file', async (t) => {
  const env = await startEnvtest();
  t.teardown(() => env.stop());
  t.log(`envtest ${env.version} ready in ${env.startMs} ms`);
  t.regex(env.version, /^v1\.\d+\.\d+/);
  const namespaces = await env.request('GET', '/api/v1/namespaces');
  t.is(namespaces.status, 200);
  t.true(namespaces.body.items.some((ns: { metadata: { name: string } }) => ns.metadata.name === 'default'));
  const binaries = processesMentioning(env.dir).filter((line) => !/^\d+ bash /.test(line));
  t.is(binaries.length, 2, 'etcd and kube-apiserver run (each under its watchdog)');
  await env.stop();
  t.true(await eventually(() => processesMentioning(env.dir).length === 0, 15_000), processesMentioning(env.dir).join('\n'));
  t.throws(() => execFileSync('test', ['-e', env.dir]));
});

test('etcd and kube-apiserver stopped and started again serve the same data, and stop() still leaves no process', async (t) => {
  const env = await startEnvtest();
  t.teardown(() => env.stop());
  const created = await env.request('POST', '/api/v1/namespaces/default/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kept' },
    data: { A: '1' },
  });
  t.is(created.status, 201);
  // kube-apiserver first: the last one started again is etcd, which stop() must still stop after kube-apiserver.
  for (const component of ['kube-apiserver', 'etcd'] as const) {
    await env.stopComponent(component);
    t.not((await env.request('GET', '/readyz').catch(() => ({ status: 0 }))).status, 200, `not ready while ${component} is stopped`);
    await env.startComponent(component);
    t.is((await env.request('GET', '/api/v1/namespaces/default/configmaps/kept')).body.data?.A, '1', `the data outlived ${component}`);
  }
  await env.stop();
  t.deepEqual(processesMentioning(env.dir), [], 'no etcd or kube-apiserver is left running, the restarted ones included');
});

test('a ServiceAccount kubeconfig carries a TokenRequest token that authenticates as that ServiceAccount', async (t) => {
  const env = await startEnvtest();
  t.teardown(() => env.stop());
  const { kubeconfig } = await env.serviceAccountKubeconfig('default', 'reviewer');
  const token = /token: (\S+)/.exec(kubeconfig)![1]!;
  const review = await env.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token },
  });
  t.is(review.status, 201);
  t.true(review.body.status.authenticated);
  t.is(review.body.status.user.username, 'system:serviceaccount:default:reviewer');
});

test('killing the test process with SIGKILL does not orphan etcd or kube-apiserver', async (t) => {
  const script = `import { startEnvtest } from ${JSON.stringify(resolve(import.meta.dirname, 'harness.ts'))};
const env = await startEnvtest();
console.log(env.dir);
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const dir = await new Promise<string>((done, fail) => {
    child.stdout!.once('data', (chunk: Buffer) => done(chunk.toString().trim()));
    child.once('exit', (code) => fail(new Error(`child exited early with ${code}`)));
  });
  t.true(processesMentioning(dir).length >= 2);
  child.kill('SIGKILL');
  t.true(await eventually(() => processesMentioning(dir).length === 0, 20_000), processesMentioning(dir).join('\n'));
  rmSync(dir, { recursive: true, force: true });
});

test('KUBEBUILDER_ASSETS without the binaries fails with a message naming it', async (t) => {
  const empty = mkdtempSync(join(tmpdir(), 'no-assets-'));
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  const error = await t.throwsAsync(envtestAssets({ ...process.env, KUBEBUILDER_ASSETS: empty }));
  t.regex(error!.message, /KUBEBUILDER_ASSETS=.*has no executable 'kube-apiserver'/);
});

test('with neither Go nor KUBEBUILDER_ASSETS the build says exactly what to install', async (t) => {
  const cache = mkdtempSync(join(tmpdir(), 'empty-cache-'));
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
  const { KUBEBUILDER_ASSETS: _ignored, ...rest } = process.env;
  const pathWithoutGo = (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => !existsSync(join(dir, 'go')))
    .join(':');
  const error = await t.throwsAsync(envtestAssets({ ...rest, PATH: pathWithoutGo, CUSTOMAPP_ENVTEST_CACHE: cache }));
  t.regex(error!.message, /neither KUBEBUILDER_ASSETS nor Go is available/);
  t.regex(error!.message, /Install Go/);
});
