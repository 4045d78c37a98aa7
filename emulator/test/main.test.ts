// The command line: prints its URL, writes a kubeconfig kubectl can use, and exits 0 on SIGTERM.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { kubectl } from './support.js';

const root = new URL('../../', import.meta.url).pathname;

test('npm run emulator prints one line with its URL, writes a usable kubeconfig, and exits 0 on SIGTERM', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'emulator-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  const child = spawn(
    join(root, 'node_modules/.bin/tsx'),
    ['emulator/main.ts', '--port', '0', '--kubeconfig-out', kubeconfig, '--log-level', 'warn'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => child.kill('SIGKILL'));
  let stdout = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (stdout.includes('\n')) resolve(stdout.split('\n')[0]);
    });
    child.once('exit', () => reject(new Error(`exited before printing its URL: ${stdout}`)));
  });
  t.regex(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const port = url.split(':')[2];
  t.regex(readFileSync(kubeconfig, 'utf8'), new RegExp(`server: https://127.0.0.1:${port}`));
  const namespaces = await kubectl(kubeconfig, ['get', 'namespaces', '-o', 'name']);
  t.is(namespaces.code, 0, namespaces.stderr);
  t.regex(namespaces.stdout, /namespace\/default/);
  child.kill('SIGTERM');
  t.is(await exited, 0);
  t.is(stdout.trim().split('\n').length, 1);
});
