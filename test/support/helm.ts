// Runs the helm binary that envtest/build-helm.sh builds (once, cached), with its own configuration and cache directories.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { KubectlResult } from './targets.js';

const BUILD = resolve(import.meta.dirname, '../../envtest/build-helm.sh');

let built: Promise<string> | undefined;

/** The helm binary's path: built from the Go module proxy on first use, then taken from the cache. */
export function helmBinary(): Promise<string> {
  built ??= new Promise((done, fail) => {
    execFile('bash', [BUILD], { maxBuffer: 16 << 20, timeout: 1_800_000 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`envtest/build-helm.sh failed: ${stderr.trim().split('\n').slice(-5).join('\n')}`, { cause: error }));
      else done(stdout.trim().split('\n').at(-1)!);
    });
  });
  return built;
}

/**
 * Runs `helm <args>` (against `kubeconfig` when given), with HELM_CONFIG_HOME, HELM_CACHE_HOME and HELM_DATA_HOME in a
 * temporary directory of its own, so that nothing of the user's helm setup is read or written.
 */
export async function runHelm(args: readonly string[], kubeconfig?: string): Promise<KubectlResult> {
  const helm = await helmBinary();
  const home = mkdtempSync(join(tmpdir(), 'customapp-helm-home-'));
  return new Promise((done) => {
    execFile(
      helm,
      [...(kubeconfig ? ['--kubeconfig', kubeconfig] : []), ...args],
      {
        timeout: 120_000,
        maxBuffer: 64 << 20,
        env: {
          ...process.env,
          KUBECONFIG: '',
          HELM_CONFIG_HOME: join(home, 'config'),
          HELM_CACHE_HOME: join(home, 'cache'),
          HELM_DATA_HOME: join(home, 'data'),
        },
      },
      (error, stdout, stderr) => {
        rmSync(home, { recursive: true, force: true });
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}
