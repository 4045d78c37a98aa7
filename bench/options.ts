// The benchmark's command line: which participants, sizes and target, and the knobs of each run profile.
import { STRATEGY_NAMES, type StrategyName } from './strategies/strategy.js';

/**
 * The participants whose load is annotated Deployments (no CustomApp): stakater/Reloader as installed by default,
 * Reloader with `--reload-on-create --sync-after-restart` (what its users turn on to catch ConfigMaps created after a
 * workload, and what its restart issues are about), and our operator's workload mode (`--workloads=deployments`);
 * bench/workloads/ runs their sessions.
 */
export const WORKLOAD_PARTICIPANTS = ['reloader', 'reloader-on-create', 'ours-workloads'] as const;
export type WorkloadParticipant = (typeof WORKLOAD_PARTICIPANTS)[number];

/** The participants whose load is CustomApps: the five TypeScript strategies and the controller-runtime peer. */
export const CUSTOMAPP_PARTICIPANTS = [...STRATEGY_NAMES, 'peer', 'peer-defaults'] as const;

/** Everything the benchmark compares. */
export const PARTICIPANTS = [...CUSTOMAPP_PARTICIPANTS, ...WORKLOAD_PARTICIPANTS] as const;
export type Participant = StrategyName | 'peer' | 'peer-defaults' | WorkloadParticipant;

/** What a run without `--strategies` compares: all but reloader-on-create, a variant of Reloader's settings. */
export const DEFAULT_PARTICIPANTS: readonly Participant[] = PARTICIPANTS.filter((participant) => participant !== 'reloader-on-create');

/** True for a participant whose load is annotated Deployments. */
export function isWorkloadParticipant(participant: Participant): participant is WorkloadParticipant {
  return (WORKLOAD_PARTICIPANTS as readonly string[]).includes(participant);
}

/** How tables and the chart name each participant. */
export const PARTICIPANT_LABELS: Readonly<Record<Participant, string>> = {
  'naive-get': 'naive-get',
  'static-list-all': 'static-list-all',
  'static-indexed': 'static-indexed',
  'per-object': 'per-object (seed)',
  ours: 'ours',
  peer: 'peer (controller-runtime)',
  'peer-defaults': 'peer, 1 worker (its default)',
  reloader: 'Reloader (annotated Deployments)',
  'reloader-on-create': 'Reloader --reload-on-create --sync-after-restart',
  'ours-workloads': 'ours, workload mode (annotated Deployments)',
};

/** Where the API server comes from. */
export type BenchTarget = 'envtest' | 'emulator';

/** The knobs of one run; `--quick` and the full run differ only here. */
export interface Profile {
  readonly name: 'quick' | 'full';
  /** CustomApps per run, one run per size. */
  readonly sizes: readonly number[];
  /** ConfigMaps that no CustomApp references, spread over the CustomApps' namespaces. */
  readonly unrelatedConfigMaps: number;
  /** Writes of referenced ConfigMaps (each to a different ConfigMap) in the referenced-update phase. */
  readonly referencedUpdates: number;
  /** Writes of unrelated ConfigMaps in the unrelated-update phase. */
  readonly unrelatedUpdates: number;
  /** Image changes in the spec-update phase (plus the configMapName handoffs). */
  readonly imageUpdates: number;
  /** Share of the CustomApps sharing a ConfigMap that switch to their own in the spec-update phase. */
  readonly handoffShare: number;
  /** Writes per second during the update phases (writes are paced, not awaited one by one). */
  readonly writesPerSecond: number;
  /** An expected Deployment change not seen when this long passed with no progress after the phase's last write counts as missed. */
  readonly missAfterMs: number;
  /** The operator is settled when neither it nor the Deployments moved for this long. */
  readonly settleMs: number;
  /** The idle phase's length, in seconds. */
  readonly idleSeconds: number;
  /** kube-apiserver `--min-request-timeout`: a watch without timeoutSeconds ends after [T, 2T) s. */
  readonly serverWatchTimeoutSeconds: number;
  /**
   * The largest size at which a participant runs, when it is run at all (an explicit `--sizes` runs it everywhere).
   * The full profile runs the seed and static-list-all at 1k only: at 10k the seed never converges (6,402 informers,
   * 632 s until it gave up) and static-list-all's latency is minutes (one LIST of every CustomApp per ConfigMap
   * event), so their sessions took half of the run's hour and taught nothing new.
   */
  readonly maxSize?: Partial<Record<Participant, number>>;
}

export const QUICK: Profile = {
  name: 'quick',
  sizes: [1000],
  unrelatedConfigMaps: 5000,
  referencedUpdates: 100,
  unrelatedUpdates: 100,
  imageUpdates: 50,
  handoffShare: 0.2,
  writesPerSecond: 20,
  missAfterMs: 5_000,
  settleMs: 1_500,
  idleSeconds: 35,
  serverWatchTimeoutSeconds: 60,
};

export const FULL: Profile = {
  name: 'full',
  sizes: [1000, 10_000],
  unrelatedConfigMaps: 5000,
  referencedUpdates: 200,
  unrelatedUpdates: 200,
  imageUpdates: 100,
  handoffShare: 0.2,
  writesPerSecond: 20,
  missAfterMs: 10_000,
  settleMs: 2_000,
  idleSeconds: 120,
  serverWatchTimeoutSeconds: 60,
  maxSize: { 'per-object': 1000, 'static-list-all': 1000 },
};

export interface BenchOptions {
  readonly profile: Profile;
  readonly target: BenchTarget;
  readonly participants: readonly Participant[];
  /** The sizes to run (the profile's unless `--sizes`). */
  readonly sizes: readonly number[];
  /** True when `--sizes` chose them: every participant then runs at every size (no `maxSize`). */
  readonly sizesGiven?: boolean;
  /** Where the report, JSON and SVG go. */
  readonly outDir: string;
  /** Redraw a progress line on the terminal. */
  readonly progress: boolean;
  /**
   * Profile the TypeScript operators' CPU (`node --cpu-prof`) into this directory and end each session after its
   * cold start: the profile (written when the process exits) then covers the cold start alone. `bench/flame.ts`
   * renders it to SVG.
   */
  readonly cpuProfileDir?: string;
  /**
   * Profile the TypeScript operators' CPU phase by phase into this directory, without ending the sessions early:
   * `<participant>-<size>-cold-start`, `-referenced-updates`, `-other-updates` (the unrelated, spec and shared ones)
   * and `-restart` (the new process until it settled) `.cpuprofile` files, cut by the harness at the phase boundaries (bench/phase-profile.ts).
   */
  readonly phaseProfileDir?: string;
  /**
   * Profile kube-apiserver's CPU over each session's cold start into this directory (envtest only): the server runs
   * with `--profiling=true`, and the harness records back-to-back `/debug/pprof/profile` windows
   * (bench/apiserver-profile.ts) from the operator's spawn until the cold start settled,
   * `<participant>-<size>-cold-start-<n>.pb.gz` (`go tool pprof -top` merges them), their times in
   * `<participant>-<size>-cold-start.windows.json`, and keeps the session's audit log as `<participant>-<size>-audit.log`.
   */
  readonly apiserverProfileDir?: string;
  /** End each session after its cold start and memory figures (implied by `cpuProfileDir`). */
  readonly coldStartOnly?: boolean;
  /** The same memory budget for every participant (see OperatorProcessOptions.memoryLimitMiB). */
  readonly memoryLimitMiB?: number;
  /**
   * `--shards 1,2,4`: run the shard benchmark instead of the participants: for each size, that many `--sharding`
   * processes side by side (bench/shards/), at 1k with `--quick` and at 10k and 25k in the full profile.
   */
  readonly shards?: readonly number[];
}

/** The sizes of the shard benchmark when `--sizes` is not given: the quick profile's 1k, else 10k and 25k. */
export function shardSizes(profile: Profile): readonly number[] {
  return profile.name === 'quick' ? profile.sizes : [10_000, 25_000];
}

export const USAGE = `Usage: npm run bench -- [--quick] [--target envtest|emulator] [--strategies a,b,c] [--sizes 1000,10000] [--out dir] [--no-progress]
  --quick         1k CustomApps only, shorter phases (a few minutes)
  --target        the API server: envtest (a real kube-apiserver, default) or emulator
  --strategies    a subset of: ${PARTICIPANTS.join(', ')} (default: all but ${PARTICIPANTS.filter((participant) => !DEFAULT_PARTICIPANTS.includes(participant)).join(' and ')})
  --sizes         CustomApps per run (default: 1000 with --quick, else 1000,10000)
  --out           the results directory (default: bench/results)
  --no-progress   no progress line (log lines only)
  --cold-start-only  end each session after its cold start and memory figures
  --memory-limit MIB  the same memory budget for every participant: Node's --max-old-space-size, Go's GOMEMLIMIT
  --cpu-prof DIR  profile the TypeScript operators (node --cpu-prof) into DIR, each session ending after its cold start
  --profile-phases DIR  profile the operators into DIR phase by phase (cold start, updates, restart): V8's
                  .cpuprofile of the TypeScript ones, Go's .pprof of the peer
  --apiserver-prof DIR  profile kube-apiserver's CPU over each cold start into DIR (envtest), and keep the audit logs there
  --render FILE   render the report and chart again from a run's JSON (runs nothing)
  --shards 1,2,4  the shard benchmark instead: that many --sharding processes per size (1k with --quick, else 10k,25k),
                  RSS per shard, the cold start and the failovers, into shards-<profile>-<target>.md`;

/** `1,2,4` → the numbers, in the order given; `expand` rewrites each before it is read (`10k` → `10000`). */
function positiveWholeNumbers(flag: string, text: string, expand: (item: string) => string = (item) => item): number[] {
  return text.split(',').map((item) => {
    const number = Number(expand(item.trim()));
    if (!Number.isInteger(number) || number < 1) throw new Error(`${flag}: "${item}" is not a positive whole number`);
    return number;
  });
}

/** A memory budget in MiB: a whole number of at least 16. */
function mebibytesAtLeast16(flag: string, value: string): number {
  const mebibytes = Number(value);
  if (!Number.isInteger(mebibytes) || mebibytes < 16) throw new Error(`${flag}: "${value}" is not a whole number of MiB ≥ 16`);
  return mebibytes;
}

/** Parses the command line (without `node` and the script). Throws an Error quoting the offending argument. */
export function parseOptions(argv: readonly string[], defaults: { outDir: string; isTty: boolean }): BenchOptions {
  let profile: Profile = FULL;
  let target: BenchTarget = 'envtest';
  let participants: Participant[] = [...DEFAULT_PARTICIPANTS];
  let sizes: number[] | undefined;
  let outDir = defaults.outDir;
  let progress = defaults.isTty;
  let cpuProfileDir: string | undefined;
  let phaseProfileDir: string | undefined;
  let apiserverProfileDir: string | undefined;
  let memoryLimitMiB: number | undefined;
  let coldStartOnly = false;
  let shards: number[] | undefined;
  const args = [...argv];
  const flagValue = (flag: string, inline: string | undefined): string => {
    const value = inline ?? args.shift();
    if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a value\n${USAGE}`);
    return value;
  };
  while (args.length > 0) {
    const arg = args.shift()!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    switch (flag) {
      case '--quick':
        profile = QUICK;
        break;
      case '--target': {
        const value = flagValue(flag, inline);
        if (value !== 'envtest' && value !== 'emulator') throw new Error(`--target "${value}": expected envtest or emulator`);
        target = value;
        break;
      }
      case '--strategies':
        participants = parseParticipants(flagValue(flag, inline));
        break;
      case '--sizes':
        sizes = positiveWholeNumbers(flag, flagValue(flag, inline), (text) => text.replace(/k$/i, '000'));
        break;
      case '--out':
        outDir = flagValue(flag, inline);
        break;
      case '--no-progress':
        progress = false;
        break;
      case '--cpu-prof':
        cpuProfileDir = flagValue(flag, inline);
        break;
      case '--profile-phases':
        phaseProfileDir = flagValue(flag, inline);
        break;
      case '--apiserver-prof':
        apiserverProfileDir = flagValue(flag, inline);
        break;
      case '--cold-start-only':
        coldStartOnly = true;
        break;
      case '--memory-limit':
        memoryLimitMiB = mebibytesAtLeast16(flag, flagValue(flag, inline));
        break;
      case '--shards':
        shards = [...new Set(positiveWholeNumbers(flag, flagValue(flag, inline)))].sort((a, b) => a - b);
        break;
      case '--help':
      case '-h':
        throw new Error(USAGE);
      default:
        throw new Error(`unknown argument "${arg}"\n${USAGE}`);
    }
  }
  const read = { profile, target, participants, sizes, outDir, progress, cpuProfileDir, phaseProfileDir, apiserverProfileDir };
  return assembled({ ...read, memoryLimitMiB, coldStartOnly, shards });
}

/** What {@link parseOptions} read, before the defaults that depend on other flags. */
interface ReadOptions extends Omit<BenchOptions, 'sizes' | 'sizesGiven' | 'shards' | 'coldStartOnly'> {
  readonly sizes: readonly number[] | undefined;
  readonly shards: readonly number[] | undefined;
  readonly coldStartOnly: boolean;
}

/** The options from the flags read: the defaults that depend on other flags, and the combinations refused. */
function assembled(read: ReadOptions): BenchOptions {
  const { profile, target, sizes, shards, cpuProfileDir, phaseProfileDir, apiserverProfileDir, memoryLimitMiB } = read;
  if (apiserverProfileDir && target !== 'envtest')
    throw new Error(`--apiserver-prof profiles kube-apiserver: it needs --target envtest, not "${target}"`);
  if (apiserverProfileDir && shards) throw new Error("--apiserver-prof profiles the participants' sessions: it does not apply to --shards");
  return {
    profile,
    target,
    participants: read.participants,
    sizes: sizes ?? (shards ? shardSizes(profile) : profile.sizes),
    sizesGiven: sizes !== undefined,
    outDir: read.outDir,
    progress: read.progress,
    ...(cpuProfileDir ? { cpuProfileDir } : {}),
    ...(phaseProfileDir ? { phaseProfileDir } : {}),
    ...(apiserverProfileDir ? { apiserverProfileDir } : {}),
    ...(memoryLimitMiB ? { memoryLimitMiB } : {}),
    ...(read.coldStartOnly || cpuProfileDir ? { coldStartOnly: true } : {}),
    ...(shards ? { shards } : {}),
  };
}

/** `a,b,c` → the participants, in the order given; each must be one of {@link PARTICIPANTS}. */
export function parseParticipants(text: string): Participant[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) throw new Error(`--strategies "${text}": name at least one of ${PARTICIPANTS.join(', ')}`);
  for (const name of names) {
    if (!(PARTICIPANTS as readonly string[]).includes(name))
      throw new Error(`--strategies: "${name}" is not one of ${PARTICIPANTS.join(', ')}`);
  }
  return [...new Set(names)] as Participant[];
}

/** The (size, participant) sessions of a run, size by size: the profile's `maxSize` applies unless `--sizes` was given. */
export function sessionPlan(options: Pick<BenchOptions, 'profile' | 'participants' | 'sizes' | 'sizesGiven'>): {
  size: number;
  participant: Participant;
}[] {
  return options.sizes.flatMap((size) =>
    options.participants
      .filter((participant) => options.sizesGiven || size <= (options.profile.maxSize?.[participant] ?? Number.POSITIVE_INFINITY))
      .map((participant) => ({ size, participant })),
  );
}

/** How many namespaces a run of `size` CustomApps spreads over: one at 1k (the watch-stream target's setting), 2k per namespace above. */
export function namespacesFor(size: number): number {
  return size <= 1000 ? 1 : Math.ceil(size / 2000);
}
