// The operator's restart under several sets of Node flags or environment, in turns on one session: its CPU, on which
// threads, its settle time and its RSS.
//
//   npx tsx bench/restart-flags.ts [--size 1000] [--rounds 3] [--variant name=--flag,--flag]… [--env name=VAR=value]…
//
// One envtest session with the quick profile's load and ours' cold start, then `rounds` rounds of one restart per
// variant (the benchmark's restart phase: SIGTERM, a new process, settled), each variant's runner bundled with its own
// code cache under the image's flags plus its own (V8 refuses a cache made under other flags). A variant's later flag
// overrides the image's. For each restart: the operator's CPU from /proc, its main thread's and the other threads' (V8's
// compiler and collector workers, libuv's pool) from /proc/<pid>/task, and the settle time. Without `--variant`, the
// image's flags alone and with V8's default interrupt budget. `--env` sets a variable for one variant's process over
// the image's environment (MALLOC_CONF, say). The RSS is read a second after the restart settled, after a forced GC.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { QUICK } from './options.js';
import { bundle, RUNTIME_FLAGS, type RunnerCommand } from './operator-process.js';
import { coldStart, restart } from './phases.js';
import { Session } from './session-state.js';
import { percentile } from './stats.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    variant: { type: 'string', multiple: true, default: ['image=', 'default-budget=--interrupt-budget=67584'] },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const variants = values.variant.map((spec) => {
  const [name, flags = ''] = spec.split(/=(.*)/s);
  const env = Object.fromEntries(
    values.env.flatMap((each) => {
      const [variant, setting = ''] = each.split(/=(.*)/s);
      const [key, value = ''] = setting.split(/=(.*)/s);
      return variant === name && key ? [[key, value]] : [];
    }),
  );
  return { name: name!, flags: flags.split(',').filter(Boolean), env };
});

/** User + system CPU seconds of each thread of `pid`, the main thread first. */
function threadSeconds(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`)
    .sort((a, b) => Number(a) - Number(b))
    .map((tid) => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    });
}

const runners = new Map<string, RunnerCommand>();
const out = mkdtempSync(join(tmpdir(), 'restart-flags-'));
for (const { name, flags, env } of variants) {
  const nodeFlags = [...RUNTIME_FLAGS, ...flags, '--expose-gc'];
  const bundled = await bundle(resolve(import.meta.dirname, 'runner.ts'), join(out, `runner-${name}.cjs`), { nodeFlags });
  runners.set(name, { mode: 'bundle', nodeArgs: [...nodeFlags, ...bundled.startArgs], env, dispose: bundled.dispose });
}
const progress = { log: (line: string) => process.stderr.write(`${line}\n`), status: () => undefined, done: () => undefined };
const options = {
  participant: 'ours' as const,
  size: Number(values.size),
  profile: QUICK,
  target: 'envtest' as const,
  logDir: out,
  runner: runners.get(variants[0]!.name),
  progress,
  label: '[restart-flags]',
};
const session = new Session(options);
const measured = new Map<string, { cpu: number[]; main: number[]; others: number[]; settledMs: number[]; rssMiB: number[] }>();
try {
  await session.start();
  const cold = await coldStart(session);
  progress.log(`cold start: ${cold.converged}/${options.size} converged, operator ${cold.cpuSeconds?.operator} CPU-s`);
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const { name } of variants) {
      // The session reads its runner at each launch: the next restart starts this variant.
      (options as { runner?: RunnerCommand }).runner = runners.get(name);
      const result = await restart(session);
      const [main = 0, ...others] = threadSeconds(session.operator!.pid);
      const other = others.reduce((sum, seconds) => sum + seconds, 0);
      await new Promise((done) => setTimeout(done, 1_000));
      const rssMiB = (await session.stats(true)).rssBytes / 2 ** 20;
      const entry = measured.get(name) ?? { cpu: [], main: [], others: [], settledMs: [], rssMiB: [] };
      measured.set(name, entry);
      entry.cpu.push(result.cpuSeconds?.operator ?? Number.NaN);
      entry.main.push(main);
      entry.others.push(other);
      entry.settledMs.push(result.settledMs ?? Number.NaN);
      entry.rssMiB.push(rssMiB);
      progress.log(
        `round ${round} ${name}: ${result.cpuSeconds?.operator} CPU-s (main thread ${main.toFixed(2)}, others ${other.toFixed(2)}), settled in ${result.settledMs?.toFixed(0)} ms, ${result.reconciles} reconciles, RSS ${rssMiB.toFixed(1)} MiB`,
      );
    }
  }
} finally {
  await session.stop();
  for (const runner of runners.values()) runner.dispose();
}
const median = (xs: number[]): string =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  ).toFixed(2);
process.stdout.write(
  '| variant | flags, environment | restart CPU-s (median; each) | main thread | other threads | settled (s) | RSS (MiB; each) |\n| --- | --- | --- | --- | --- | --- | --- |\n',
);
for (const { name, flags, env } of variants) {
  const entry = measured.get(name);
  if (!entry) continue;
  const settings = [...RUNTIME_FLAGS, ...flags, ...Object.entries(env).map(([key, value]) => `${key}=${value}`)].join(' ');
  process.stdout.write(
    `| ${name} | ${settings} | ${median(entry.cpu)} (${entry.cpu.join(' / ')}) | ${median(entry.main)} | ${median(entry.others)} | ${median(entry.settledMs.map((ms) => ms / 1000))} | ${entry.rssMiB.map((mib) => mib.toFixed(1)).join(' / ')} |\n`,
  );
}
