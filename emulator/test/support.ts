// Test support for the emulator's suites: one emulator per test file, raw HTTP calls, watch readers, and kubectl runs.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { JsonLineReader } from '../../test/support/json-lines.js';
import { type Emulator, type EmulatorOptions, startEmulator } from '../index.js';

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

/** Sends one request to a server and parses the JSON answer. */
export async function call(
  base: string,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
  accept?: string,
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = contentType;
  if (accept !== undefined) headers.Accept = accept;
  const res = await fetch(new URL(path, base), {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export interface WatchEvent {
  readonly type: string;
  readonly object: any;
}

/** A watch read line by line; `next()` resolves the next event (or undefined when the stream ended). */
export interface WatchReader {
  readonly status: number;
  next(timeoutMs?: number): Promise<WatchEvent | undefined>;
  /** Events until `predicate` holds for one (included), or throws after the timeout. */
  until(predicate: (e: WatchEvent) => boolean, timeoutMs?: number): Promise<WatchEvent[]>;
  close(): void;
}

export async function openWatch(base: string, token: string | undefined, path: string): Promise<WatchReader> {
  const controller = new AbortController();
  const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  const res = await fetch(new URL(path, base), { headers, signal: controller.signal });
  const reader = res.body!.getReader();
  let ended = false;
  const queue: WatchEvent[] = [];
  const lines = new JsonLineReader<WatchEvent>((event) => queue.push(event));
  // A read outlives a timed-out wait; it is reused by the next wait, and its rejection on close is expected.
  let inFlight: ReturnType<typeof reader.read> | undefined;
  const pump = async (timeoutMs: number): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      while (queue.length === 0 && !ended) {
        if (inFlight === undefined) {
          inFlight = reader.read();
          inFlight.catch(() => undefined);
        }
        const chunk = await Promise.race([inFlight, timeout]);
        if (chunk === 'timeout') throw new Error(`no watch event within ${timeoutMs} ms on ${path}`);
        inFlight = undefined;
        if (chunk.done) {
          ended = true;
          break;
        }
        lines.push(chunk.value);
      }
    } finally {
      clearTimeout(timer);
    }
  };
  const next = async (timeoutMs = 5000) => {
    if (queue.length === 0) await pump(timeoutMs);
    return queue.shift();
  };
  return {
    status: res.status,
    next,
    async until(predicate, timeoutMs = 5000) {
      const seen: WatchEvent[] = [];
      for (;;) {
        const e = await next(timeoutMs);
        if (e === undefined) throw new Error(`watch ended before the expected event; saw ${JSON.stringify(seen.map((s) => s.type))}`);
        seen.push(e);
        if (predicate(e)) return seen;
      }
    },
    close() {
      controller.abort();
      reader.cancel().catch(() => undefined);
    },
  };
}

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the real kubectl (the version dispatcher) with a fresh --cache-dir. */
export function kubectl(kubeconfigPath: string, args: readonly string[], input?: string, timeoutMs = 60_000): Promise<KubectlResult> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'emulator-kubectl-'));
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfigPath, '--cache-dir', cacheDir, ...args],
      { timeout: timeoutMs, maxBuffer: 32 << 20, env: { ...process.env, KUBECONFIG: '' } },
      (error, stdout, stderr) => {
        rmSync(cacheDir, { recursive: true, force: true });
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    child.stdin!.end(input ?? '');
  });
}

/** Runs kubectl in the background until `stop()` (for `kubectl get -w`); resolves with what it printed. */
export function kubectlBackground(
  kubeconfigPath: string,
  args: readonly string[],
): { output: () => string; stop: () => Promise<KubectlResult> } {
  const cacheDir = mkdtempSync(join(tmpdir(), 'emulator-kubectl-'));
  let stdout = '';
  let stderr = '';
  let settle: (r: KubectlResult) => void = () => undefined;
  const done = new Promise<KubectlResult>((resolve) => {
    settle = resolve;
  });
  const child = execFile(
    'kubectl',
    ['--kubeconfig', kubeconfigPath, '--cache-dir', cacheDir, ...args],
    { env: { ...process.env, KUBECONFIG: '' } },
    (error) => {
      rmSync(cacheDir, { recursive: true, force: true });
      settle({ code: error ? 1 : 0, stdout, stderr });
    },
  );
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return {
    output: () => stdout,
    stop: () => {
      child.kill('SIGTERM');
      return done;
    },
  };
}

export interface EmulatorFixture {
  readonly emulator: Emulator;
  /** The admin kubeconfig file (https, for kubectl). */
  readonly kubeconfigPath: string;
  readonly dir: string;
  /** An admin request over plain http. */
  admin(method: string, path: string, body?: unknown, contentType?: string, accept?: string): Promise<Answer>;
  kubeConfig(): KubeConfig;
  kubectl(args: readonly string[], input?: string): Promise<KubectlResult>;
  /** `kubectl apply -f` of each path in order (what a file's tests need installed); throws with the command and stderr when one fails. */
  apply(...paths: readonly string[]): Promise<void>;
  /** Writes a file in the fixture's temporary directory and returns its path. */
  file(name: string, content: string): string;
  close(): Promise<void>;
}

/** Starts an emulator on a free port with a temporary directory for kubeconfigs. */
export async function emulatorFixture(options: EmulatorOptions = {}): Promise<EmulatorFixture> {
  const emulator = await startEmulator({ port: 0, ...options });
  const dir = mkdtempSync(join(tmpdir(), 'emulator-test-'));
  const kubeconfigPath = join(dir, 'admin.kubeconfig');
  await emulator.writeAdminKubeconfig(kubeconfigPath);
  return {
    emulator,
    kubeconfigPath,
    dir,
    admin: (method, path, body, contentType, accept) => call(emulator.url, emulator.adminToken, method, path, body, contentType, accept),
    kubeConfig: () => {
      const kc = new KubeConfig();
      kc.loadFromString(emulator.adminKubeconfig());
      return kc;
    },
    kubectl: (args, input) => kubectl(kubeconfigPath, args, input),
    apply: async (...paths) => {
      for (const path of paths) {
        const applied = await kubectl(kubeconfigPath, ['apply', '-f', path]);
        if (applied.code !== 0) throw new Error(`kubectl apply -f ${path} exited ${applied.code}: ${applied.stderr}`);
      }
    },
    file: (name, content) => {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    close: async () => {
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const distDir = new URL('../../dist/', import.meta.url).pathname;
