// The operator's peak memory with one namespace full of large Secrets (Helm release history) and more refs than the collapse threshold.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isAlreadyExists } from '../operator/kube/errors.js';
import { SECRETS } from '../operator/kube/resources.js';
import { DEFAULT_COLLAPSE_THRESHOLD } from '../operator/dependencies/registry.js';
import type { DependencyRef } from '../operator/dependencies/source.js';
import { startCluster, type ApiTarget } from '../test/support/targets.js';
import {
  adminClient,
  type ConfigMapLike,
  createAll,
  createNamespace,
  installOperatorResources,
  objects,
} from '../test/support/operator-harness.js';
import { bundle, RUNTIME_ENV, RUNTIME_FLAGS } from './operator-process.js';
import type { ChildInput, ChildResult } from './namespace-memory-child.js';

const CHILD = resolve(import.meta.dirname, 'namespace-memory-child.ts');
const CHILD_BUNDLE = resolve(import.meta.dirname, '../node_modules/.cache/customapp-bench/namespace-memory-child.cjs');
const NAMESPACE = 'helm-history';
/** Room in etcd for 2,000 Secrets of 1 MiB (its default quota is 2 GiB). */
const ETCD_QUOTA_BYTES = 8 * 1024 ** 3;
/**
 * The API server's flags: no watch cache. With one, kube-apiserver holds the 2 GiB namespace itself, and serving the
 * "before" operator's pages of 500 (about 700 MB each, again at every retry) took it past 14 GiB on the shared
 * 24 GiB machine. Lists then come from etcd, page by page; what the operator receives is the same.
 */
const APISERVER_FLAGS = { 'watch-cache': 'false' };
/** The Go runtimes of etcd and kube-apiserver collect sooner than this instead of growing (inherited from this process). */
const GO_MEMORY_LIMIT = '2GiB';

const USAGE = `npx tsx bench/namespace-memory.ts [--target envtest|emulator] [--secrets 2000] [--bytes 1048576] [--refs 12]
    [--modes before,after] [--timeout-seconds 180] [--min-available-gib 6]

Creates --secrets Secrets of --bytes bytes of data each in one namespace (4 at a time, skipping those that exist;
the loop stops at the count), and --refs CustomApps that each reference one of them (more than the collapse
threshold, ${DEFAULT_COLLAPSE_THRESHOLD}: the namespace is listed whole). Then, for each mode, starts the operator in
its own process (the bundle, the image's Node flags) and waits until every ref is synced or the timeout; prints
the peak RSS (the kernel's VmHWM), the peak V8 heap and external memory (sampled every 10 ms) and the lists still
failing. "before" runs the namespace lists as they were (500 per page, no byte budget); "after" with the defaults.
An operator process is stopped early, and its row says so, when the machine's available memory falls below
--min-available-gib (the API server serving the "before" pages is the risk to a shared machine).`;

interface Options {
  readonly target: ApiTarget;
  readonly secrets: number;
  readonly bytes: number;
  readonly refs: number;
  readonly modes: readonly ChildInput['mode'][];
  readonly timeoutMs: number;
  readonly minAvailableBytes: number;
}

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      target: { type: 'string', default: 'envtest' },
      secrets: { type: 'string', default: '2000' },
      bytes: { type: 'string', default: String(1024 * 1024) },
      refs: { type: 'string', default: String(DEFAULT_COLLAPSE_THRESHOLD + 2) },
      modes: { type: 'string', default: 'before,after' },
      'timeout-seconds': { type: 'string', default: '180' },
      'min-available-gib': { type: 'string', default: '6' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const count = (name: string, text: string): number => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name}: "${text}" is not a positive whole number`);
    return value;
  };
  const modes = values.modes.split(',').map((mode) => {
    if (mode !== 'before' && mode !== 'after') throw new Error(`--modes: "${mode}" is neither before nor after`);
    return mode;
  });
  if (values.target !== 'envtest' && values.target !== 'emulator')
    throw new Error(`--target: "${values.target}" is neither envtest nor emulator`);
  return {
    target: values.target,
    secrets: count('secrets', values.secrets),
    bytes: count('bytes', values.bytes),
    refs: count('refs', values.refs),
    modes,
    timeoutMs: count('timeout-seconds', values['timeout-seconds']) * 1000,
    minAvailableBytes: count('min-available-gib', values['min-available-gib']) * 1024 ** 3,
  };
}

/** Runs `work` over 0..count-1 with at most `width` in flight, printing progress every 10 %. */
async function inParallel(count: number, width: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        await work(next++);
        done += 1;
        if (done % Math.max(1, Math.floor(count / 10)) === 0) process.stderr.write(`  ${done}/${count}\n`);
      }
    }),
  );
}

/** The machine's available memory (MemAvailable of /proc/meminfo), in bytes. */
function availableBytes(): number {
  const line = readFileSync('/proc/meminfo', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('MemAvailable:'));
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
}

/** A row for an operator process that was stopped or failed before it reported. */
function stoppedResult(input: ChildInput, startedAt: number, why: string): ChildResult {
  return {
    mode: input.mode,
    synced: 0,
    refs: input.refs.length,
    durationMs: Math.round(performance.now() - startedAt),
    peakRssMiB: Number.NaN,
    peakHeapUsedMiB: Number.NaN,
    peakExternalMiB: Number.NaN,
    failingLists: [why],
  };
}

/**
 * One operator process in `mode`, bundled as the operator image runs it. Its RSS is sampled too, so that a process
 * stopped for the machine's sake still shows how far it had grown.
 */
function runChild(startArgs: readonly string[], input: ChildInput, minAvailableBytes: number): Promise<ChildResult> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, [...RUNTIME_FLAGS, ...startArgs, JSON.stringify(input)], {
    env: { ...process.env, ...RUNTIME_ENV },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  let stopped: string | undefined;
  let peakRssMiB = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  const guard = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      peakRssMiB = Math.max(peakRssMiB, Math.round(rss));
    } catch {
      // The process has just exited.
    }
    const available = availableBytes();
    if (available < minAvailableBytes && stopped === undefined) {
      stopped = `stopped after ${Math.round((performance.now() - startedAt) / 1000)} s: the machine had ${(available / 1024 ** 3).toFixed(1)} GiB available; RSS seen up to ${peakRssMiB} MiB`;
      child.kill('SIGKILL');
    }
  }, 250);
  const timeout = setTimeout(() => child.kill('SIGKILL'), input.timeoutMs + 60_000);
  return new Promise((done) => {
    child.on('exit', (code) => {
      clearInterval(guard);
      clearTimeout(timeout);
      const last = stdout.trim().split('\n').pop();
      if (stopped !== undefined || code !== 0 || !last) {
        done(stoppedResult(input, startedAt, stopped ?? `exited with ${code}; RSS seen up to ${peakRssMiB} MiB`));
        return;
      }
      done(JSON.parse(last) as ChildResult);
    });
  });
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const { startArgs } = await bundle(CHILD, CHILD_BUNDLE);
  process.env.GOMEMLIMIT ??= GO_MEMORY_LIMIT;
  const cluster = await startCluster(options.target, {
    envtest: { etcdArgs: [`--quota-backend-bytes=${ETCD_QUOTA_BYTES}`], apiserverFlags: APISERVER_FLAGS },
  });
  const admin = await adminClient(cluster);
  try {
    await installOperatorResources(cluster);
    await createNamespace(admin, NAMESPACE);
    const release = Buffer.alloc(options.bytes, 'h').toString('base64');
    const createdAt = performance.now();
    process.stderr.write(`creating ${options.secrets} Secrets of ${options.bytes} bytes in ${NAMESPACE}\n`);
    await inParallel(options.secrets, 4, async (index) => {
      const secret: ConfigMapLike = { ...objects.secret(NAMESPACE, `sh.helm.release.v1.app.v${index}`, {}), data: { release } };
      try {
        await admin.create(SECRETS, NAMESPACE, secret);
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
    });
    process.stderr.write(`created in ${Math.round((performance.now() - createdAt) / 1000)} s\n`);
    const refs: DependencyRef[] = Array.from({ length: options.refs }, (_, index) => ({
      kind: 'Secret',
      namespace: NAMESPACE,
      name: `sh.helm.release.v1.app.v${index}`,
    }));
    for (const ref of refs) {
      try {
        await createAll(
          admin,
          objects.customApp(NAMESPACE, `app-${ref.name.split('.').pop()}`, { image: 'example/app:1', secretName: ref.name }),
        );
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
    }
    const results: ChildResult[] = [];
    for (const mode of options.modes) {
      process.stderr.write(`operator (${mode}): starting\n`);
      results.push(
        await runChild(
          startArgs,
          { kubeconfigPath: cluster.kubeconfigPath, refs, mode, timeoutMs: options.timeoutMs },
          options.minAvailableBytes,
        ),
      );
    }
    process.stdout.write(
      `${options.secrets} Secrets of ${options.bytes} bytes in one namespace, ${options.refs} refs, ${options.target}\n` +
        '| mode | refs synced | time (s) | peak RSS (MiB) | peak heap used (MiB) | peak external (MiB) | lists failing at the end |\n' +
        '| --- | --- | --- | --- | --- | --- | --- |\n' +
        results
          .map(
            (r) =>
              `| ${r.mode} | ${r.synced}/${r.refs} | ${(r.durationMs / 1000).toFixed(1)} | ${r.peakRssMiB} | ${r.peakHeapUsedMiB} | ${r.peakExternalMiB} | ${r.failingLists.join('; ') || 'none'} |`,
          )
          .join('\n') +
        '\n',
    );
  } finally {
    admin.close();
    await cluster.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
