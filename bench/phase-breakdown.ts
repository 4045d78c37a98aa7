// Where a phase's CPU went, ours beside the Go peer's: each participant's phase profile (`--profile-phases DIR`)
// with its samples put into the same few kinds of work.
//
// Usage: tsx bench/phase-breakdown.ts <profile dir> <size> <phase> [--per N]
//   reads `ours-<size>-<phase>.cpuprofile` (V8's; the runner bundle's functions named through the directory's
//   `runner.cjs.map`) and `peer-<size>-<phase>.pprof` (Go's, through `go tool pprof -traces`), and prints a Markdown
//   table: CPU ms by kind of work, in all or per operation with `--per N` (the phase's updates, say).
//
// A sample goes to the first kind whose rule matches any frame of its stack, so a JSON decode inside the reconcile
// counts as decoding and a socket write inside the watch as the HTTP client. A V8 sample is where the main thread
// was at the tick (its idle left out); its profiler does not see V8's worker threads, Go's sees every thread.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join, resolve } from 'node:path';
import type { CpuProfile } from './flame.js';
import { RUNNER_SOURCE_MAP } from './operator-process.js';

/** The kinds of work, in the order their rules are tried. */
export const KINDS = [
  'garbage collection',
  'hashing',
  'JSON and protobuf (decode, encode)',
  'HTTP client and sockets',
  'logging and metrics',
  'reconcile steps',
  'watch, caches, triggers, queue',
  'runtime and other',
] as const;
export type Kind = (typeof KINDS)[number];

/** One frame as the rules see it: the function's name and where it comes from (a source path, a URL or a package). */
export interface NamedFrame {
  readonly name: string;
  readonly source: string;
}

type Rule = (frame: NamedFrame) => boolean;
const bySource =
  (pattern: RegExp): Rule =>
  (frame) =>
    pattern.test(frame.source);
const byName =
  (pattern: RegExp): Rule =>
  (frame) =>
    pattern.test(frame.name);

/**
 * The rules for the TypeScript operator. V8's profile has no frame for a builtin such as JSON.parse: its time is
 * the self time of the function that called it, so the functions that do little but parse are named here.
 */
export const OURS_RULES: Readonly<Record<Exclude<Kind, 'runtime and other'>, readonly Rule[]>> = {
  'garbage collection': [byName(/^\(garbage collector\)$/)],
  hashing: [bySource(/operator\/dependencies\/(content-hash|keyed-hash|key-digests)\.ts$|^node:(internal\/)?crypto/)],
  'JSON and protobuf (decode, encode)': [
    bySource(/operator\/kube\/protobuf\.ts$/),
    (frame) =>
      /operator\/kube\/(client|wire)\.ts$/.test(frame.source) && /^(json|parseWatchLine|parseJson|encode\w*|body\w*)$/.test(frame.name),
  ],
  'HTTP client and sockets': [
    bySource(/operator\/kube\/(transport|wire|client|connection)\.ts$|node_modules\/undici\//),
    bySource(
      /^node:(net|tls|_tls_wrap|http|https|_http_\w+|stream|internal\/(stream_base_commons|streams|net|tls|http|js_stream_socket|webstreams))/,
    ),
    byName(/^(writev|writeBuffer|writeUtf8String|onStreamRead|TLSWrap|Socket)$/),
  ],
  'logging and metrics': [bySource(/node_modules\/(pino|prom-client|thread-stream|sonic-boom)\/|operator\/log\.ts$|metrics\.ts$/)],
  'reconcile steps': [bySource(/operator\/(reconcile|controller|customapp|podtemplate|governance|events|workload)\//)],
  'watch, caches, triggers, queue': [bySource(/operator\/(cache|dependencies|watch|queue|manager|shard)\/|node_modules\/rxjs\//)],
};

/** The rules for the Go peer, by package path in the function's name. */
export const PEER_RULES: Readonly<Record<Exclude<Kind, 'runtime and other'>, readonly Rule[]>> = {
  'garbage collection': [byName(/^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge|gcAssistAlloc|gcDrain|markroot|scanobject)/)],
  hashing: [byName(/^crypto\/sha256|^main\.contentHash/)],
  'JSON and protobuf (decode, encode)': [
    byName(
      /^encoding\/json|^sigs\.k8s\.io\/json|^sigs\.k8s\.io\/structured-merge-diff|^k8s\.io\/apimachinery\/pkg\/(runtime\/serializer|util\/json)/,
    ),
    byName(/^google\.golang\.org\/protobuf|^github\.com\/gogo\/protobuf|\.(Unmarshal|Marshal|MarshalToSizedBuffer|Size)$/),
    byName(/^sigs\.k8s\.io\/controller-runtime\/pkg\/client\.\(\*mergeFromPatch\)|jsonpatch|json-patch/),
  ],
  'HTTP client and sockets': [
    byName(/^net\/http|^net\.|^crypto\/tls|^internal\/poll|^syscall\.|^golang\.org\/x\/net\/http2|^k8s\.io\/client-go\/(rest|transport)/),
  ],
  'logging and metrics': [byName(/^github\.com\/go-logr|^github\.com\/prometheus|^main\.\(\*tracer\)/)],
  'reconcile steps': [byName(/^main\.\(\*reconciler\)|^main\.desiredDeployment|^main\.statusEqual/)],
  'watch, caches, triggers, queue': [
    byName(
      /^k8s\.io\/client-go\/(tools\/cache|util\/workqueue)|^sigs\.k8s\.io\/controller-runtime\/pkg\/(cache|internal|handler|source|predicate)/,
    ),
  ],
};

/** The kind of one sample's stack under `rules`. */
export function kindOf(stack: readonly NamedFrame[], rules: typeof OURS_RULES): Kind {
  for (const kind of KINDS) {
    if (kind === 'runtime and other') break;
    if (rules[kind].some((rule) => stack.some(rule))) return kind;
  }
  return 'runtime and other';
}

/** CPU ms by kind; idle samples (V8's `(idle)`) are left out. */
export type Breakdown = Record<Kind, number>;

const emptyBreakdown = (): Breakdown => Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Breakdown;

/** V8's profile node, with the column its source map needs. */
interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber?: number };
  readonly hitCount?: number;
  readonly children?: readonly number[];
}

/**
 * The breakdown of a V8 profile: each node's self samples, by its stack from the root. Frames of a bundle are named
 * by their source file through `map` (the bundle's source map) when given, else by their URL.
 */
export function v8Breakdown(profile: CpuProfile, map?: SourceMap): Breakdown {
  const nodes = profile.nodes as readonly ProfileNode[];
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const ms =
    (profile.endTime - profile.startTime) /
    1000 /
    Math.max(
      1,
      nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0),
    );
  const frameOf = ({ callFrame }: ProfileNode): NamedFrame => {
    const { functionName, url, lineNumber, columnNumber = 0 } = callFrame;
    const name = functionName || '(anonymous)';
    if (map && url.endsWith('.cjs') && !url.endsWith('start.cjs') && lineNumber >= 0) {
      const entry = map.findEntry(lineNumber, columnNumber) as { originalSource?: string };
      if (entry.originalSource) return { name, source: entry.originalSource };
    }
    return { name, source: url };
  };
  const breakdown = emptyBreakdown();
  for (const node of nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0 || node.callFrame.functionName === '(idle)') continue;
    const stack: NamedFrame[] = [];
    for (let id: number | undefined = node.id; id !== undefined; id = parentOf.get(id)) stack.push(frameOf(byId.get(id)!));
    breakdown[kindOf(stack, OURS_RULES)] += hits * ms;
  }
  return breakdown;
}

/** The samples of `go tool pprof -traces`: each a value in ms and its frames, leaf first. */
export function parsePprofTraces(text: string): { ms: number; frames: string[] }[] {
  const unit: Record<string, number> = { s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };
  const samples: { ms: number; frames: string[] }[] = [];
  for (const block of text.split(/^-+\+-+$/m).slice(1)) {
    const lines = block.split('\n').filter((line) => line.trim() !== '');
    const head = /^\s*([\d.]+)(s|ms|us|µs|ns)\s+(.*)$/.exec(lines[0] ?? '');
    if (!head) continue;
    samples.push({ ms: Number(head[1]) * unit[head[2]!]!, frames: [head[3]!.trim(), ...lines.slice(1).map((line) => line.trim())] });
  }
  return samples;
}

/** The breakdown of Go's samples. */
export function goBreakdown(samples: readonly { ms: number; frames: readonly string[] }[]): Breakdown {
  const breakdown = emptyBreakdown();
  for (const { ms, frames } of samples)
    breakdown[
      kindOf(
        frames.map((name) => ({ name, source: '' })),
        PEER_RULES,
      )
    ] += ms;
  return breakdown;
}

/** A Markdown table of the breakdowns side by side, in ms (divided by `per`), with each one's share. */
export function breakdownTable(columns: readonly { label: string; breakdown: Breakdown }[], per = 1): string {
  const totals = columns.map(({ breakdown }) => KINDS.reduce((sum, kind) => sum + breakdown[kind], 0));
  const cell = (value: number, total: number): string =>
    `${(value / per).toFixed(per === 1 ? 0 : 2)} (${total ? ((100 * value) / total).toFixed(1) : '0.0'}%)`;
  return [
    `| kind of work | ${columns.map(({ label }) => `${label}, ms${per === 1 ? '' : ' per operation'}`).join(' | ')} |`,
    `| --- | ${columns.map(() => '---').join(' | ')} |`,
    ...KINDS.map((kind) => `| ${kind} | ${columns.map(({ breakdown }, i) => cell(breakdown[kind], totals[i]!)).join(' | ')} |`),
    `| **all sampled** | ${totals.map((total) => `**${(total / per).toFixed(per === 1 ? 0 : 2)}**`).join(' | ')} |`,
  ].join('\n');
}

function goTool(): string {
  return existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
}

function main(argv: readonly string[]): void {
  const perIndex = argv.indexOf('--per');
  const per = perIndex >= 0 ? Number(argv[perIndex + 1]) : 1;
  const [dir, size, phase] = argv.filter((_, i) => perIndex < 0 || (i !== perIndex && i !== perIndex + 1));
  if (!dir || !size || !phase || !(per > 0)) throw new Error('usage: tsx bench/phase-breakdown.ts <profile dir> <size> <phase> [--per N]');
  const columns: { label: string; breakdown: Breakdown }[] = [];
  const ours = join(dir, `ours-${size}-${phase}.cpuprofile`);
  if (existsSync(ours)) {
    const mapFile = join(dir, RUNNER_SOURCE_MAP);
    const map = existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : undefined;
    columns.push({ label: 'ours', breakdown: v8Breakdown(JSON.parse(readFileSync(ours, 'utf8')) as CpuProfile, map) });
  }
  const peer = join(dir, `peer-${size}-${phase}.pprof`);
  if (existsSync(peer)) {
    const traces = execFileSync(goTool(), ['tool', 'pprof', '-traces', peer], { encoding: 'utf8', maxBuffer: 256 << 20 });
    columns.push({ label: 'peer', breakdown: goBreakdown(parsePprofTraces(traces)) });
  }
  if (columns.length === 0) throw new Error(`no ours-${size}-${phase}.cpuprofile or peer-${size}-${phase}.pprof in ${dir}`);
  process.stdout.write(`${breakdownTable(columns, per)}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) main(process.argv.slice(2));
