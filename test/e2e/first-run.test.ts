// What a new user meets first: npm start with :8080 and :8081 taken, a busy address they chose, and logs on a terminal.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import test from 'ava';
import { KubeConfig } from '@kubernetes/client-node';
import { scrapeHttps } from '../support/metrics-scrape.js';
import { eventually } from '../support/operator-harness.js';
import { OperatorProcess, runOperatorOnce } from '../support/operator-process.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** No cluster configured anywhere: `npm start` runs the embedded emulator. */
function embeddedEnv(t: { teardown(fn: () => void): void }): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), 'first-run-home-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  return { HOME: home, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '' };
}

/**
 * Makes `port` busy the way the operator binds it (every interface, dual stack): by listening on it, or by finding
 * it already taken by another process, which is just as busy. Answers a close function (a no-op when not ours).
 */
async function occupy(port: number): Promise<{ close: () => Promise<void>; ours: boolean }> {
  const server: Server = createServer();
  const ours = await new Promise<boolean>((done, fail) => {
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? done(false) : fail(error)));
    server.listen(port, () => done(true));
  });
  return { ours, close: () => (ours ? new Promise<void>((done) => server.close(() => done())) : Promise.resolve()) };
}

/** A loopback port held by this test (an address a user could pass and find busy). */
async function heldLoopbackPort(t: { teardown(fn: () => Promise<void>): void }): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  t.teardown(() => new Promise<void>((done) => server.close(() => done())));
  return (server.address() as AddressInfo).port;
}

test.serial('with :8080 and :8081 taken, npm start (the embedded default) serves on free ports and prints where', async (t) => {
  const metrics = await occupy(8080);
  const probes = await occupy(8081);
  t.teardown(() => Promise.all([metrics.close(), probes.close()]).then(() => undefined));
  t.log(`8080 ${metrics.ours ? 'held by this test' : 'already taken'}, 8081 ${probes.ours ? 'held by this test' : 'already taken'}`);
  const operator = new OperatorProcess([], embeddedEnv(t));
  t.teardown(() => operator.dispose());
  await operator.waitFor('the endpoints are printed', () => operator.text.includes('/healthz, /readyz'), 60_000);
  // The logs are written asynchronously: the printed endpoints can come before the log lines.
  await operator.waitFor(
    'the fallbacks and the start are logged',
    () => operator.find('listen.fallback').length === 2 && operator.find('started').length === 1,
    10_000,
  );

  const metricsLine = /^ {2}\/metrics +(https:\/\/\S+)\/metrics {3}\(port 8080 is in use: a free port instead\)$/m.exec(operator.text);
  const probesLine =
    /^ {2}\/healthz, \/readyz +(http:\/\/\S+)\/healthz, \S+\/readyz {3}\(port 8081 is in use: a free port instead\)$/m.exec(operator.text);
  t.truthy(metricsLine, operator.text);
  t.truthy(probesLine, operator.text);
  const metricsUrl = metricsLine![1]!;
  const probesUrl = probesLine![1]!;
  t.false(['8080', '8081'].includes(new URL(metricsUrl).port));
  t.false(['8080', '8081'].includes(new URL(probesUrl).port));
  t.like(operator.find('listen.fallback', { endpoint: 'metrics' })[0], { level: 40, requested: ':8080', url: metricsUrl });
  t.like(operator.find('listen.fallback', { endpoint: 'probes' })[0], { level: 40, requested: ':8081', url: probesUrl });
  t.like(operator.find('started')[0], { metrics: metricsUrl, probes: probesUrl });

  await eventually('/readyz answers ready', async () => (await fetch(`${probesUrl}/readyz`)).status === 200, 30_000, 100);
  // Secure metrics: the printed curl uses the admin kubeconfig's token.
  t.regex(
    operator.text,
    /^ +curl -sk -H "Authorization: Bearer \$\(kubectl --kubeconfig \S+ config view --raw -o jsonpath='\{\.users\[0\]\.user\.token\}'\)" https:\/\/\S+\/metrics$/m,
  );
  const kubeconfig = new KubeConfig();
  kubeconfig.loadFromFile(/export KUBECONFIG=(\S+)/.exec(operator.text)![1]!);
  t.is((await scrapeHttps(`${metricsUrl}/metrics`)).status, 401, 'no token, no metrics');
  const served = (await scrapeHttps(`${metricsUrl}/metrics`, { token: kubeconfig.users[0]!.token })).body;
  t.regex(served, /^controller_runtime_reconcile_total\{controller="customapp",result="success"\} [1-9]/m);

  operator.kill('SIGTERM');
  t.deepEqual(await operator.exited, { code: 0, signal: null }, operator.stderr);
});

test('an address chosen with a flag and found busy exits 1 naming the flag, even in the embedded default', async (t) => {
  const port = await heldLoopbackPort(t);
  const operator = new OperatorProcess(
    [`--metrics-bind-address=127.0.0.1:${port}`, '--health-probe-bind-address=127.0.0.1:0'],
    embeddedEnv(t),
  );
  t.teardown(() => operator.dispose());
  const exit = await operator.exited;
  t.deepEqual(exit, { code: 1, signal: null });
  t.is(
    operator.stderr,
    `error: --metrics-bind-address: "127.0.0.1:${port}" is already in use by another process; pass a free address (for example --metrics-bind-address=127.0.0.1:0 for any free port) or "0" to disable it\n`,
  );
  t.is(operator.find('listen.fallback').length, 0, 'no fallback for an address the user chose');
});

test.serial('with a cluster configured, a busy default port exits 1 naming its flag: only the embedded default falls back', async (t) => {
  const metrics = await occupy(8080);
  const probes = await occupy(8081);
  t.teardown(() => Promise.all([metrics.close(), probes.close()]).then(() => undefined));
  const dir = mkdtempSync(join(tmpdir(), 'first-run-kubeconfig-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  // Never contacted: the endpoints are bound before the first request.
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n'),
  );
  const { code, stderr } = await runOperatorOnce([`--kubeconfig=${kubeconfig}`]);
  t.is(code, 1);
  t.regex(stderr, /^error: --health-probe-bind-address: ":8081" is already in use by another process; pass a free address/);
});

/** Runs main.ts with its stdout on a pseudo-terminal (util-linux `script`), and answers what the terminal showed. */
function onTerminal(args: readonly string[]): Promise<{ code: number; output: string }> {
  const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, '--import', 'tsx', 'operator/main.ts', ...args].map(quote).join(' ');
  return new Promise((done, fail) => {
    execFile(
      'script',
      ['--quiet', '--flush', '--return', '--command', command, '/dev/null'],
      { cwd: ROOT, env: { ...process.env, KUBECONFIG: '' }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          fail(new Error(`script (util-linux) could not run ${command}: ${error.message} ${stderr}`, { cause: error }));
          return;
        }
        done({ code: typeof error?.code === 'number' ? error.code : 0, output: stdout.replace(/\r\n/g, '\n') });
      },
    );
  });
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequences a terminal gets are what is stripped here
const ANSI = /\x1b\[[0-9;]*m/g;

test('logs are pretty on a terminal and JSON when piped, unless --log-format says otherwise', async (t) => {
  const missing = '--kubeconfig=/nonexistent/kubeconfig';
  const terminal = await onTerminal([missing]);
  t.is(terminal.code, 1);
  t.true(terminal.output.includes('\x1b['), 'coloured on a terminal');
  const line = terminal.output.replace(ANSI, '').trim();
  t.regex(line, /^\d\d:\d\d:\d\d\.\d{3} ERROR no usable kubeconfig +err="--kubeconfig: \\"\/nonexistent\/kubeconfig\\" does not exist"$/);

  const piped = new OperatorProcess([missing]);
  t.deepEqual(await piped.exited, { code: 1, signal: null });
  t.like(piped.find('no usable kubeconfig')[0], { level: 50 });
  t.is(piped.text, '', 'every line is JSON');

  const forced = await onTerminal([missing, '--log-format=json']);
  t.like(JSON.parse(forced.output.trim()) as object, { level: 50, msg: 'no usable kubeconfig' });
  const prettyPiped = await runOperatorOnce([missing, '--log-format=pretty']);
  t.regex(prettyPiped.stdout, /^\d\d:\d\d:\d\d\.\d{3} ERROR no usable kubeconfig /);
  t.false(prettyPiped.stdout.includes('\x1b['), 'no colours off a terminal');
});
