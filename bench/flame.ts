// Renders a V8 CPU profile (`node --cpu-prof`'s .cpuprofile) as a flame graph in SVG, and sums its self time by origin.
//
// Usage: tsx bench/flame.ts <profile.cpuprofile> <out.svg> [--title text]
// Draws the busy samples (V8's idle frame left out, its share in the title); prints the self time by origin (ours,
// each npm package, Node.js internals, GC, idle) and the costliest functions.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The parts of a .cpuprofile this reads (Chrome DevTools protocol `Profiler.Profile`). */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
    readonly hitCount?: number;
    readonly children?: readonly number[];
  }[];
  readonly startTime: number;
  readonly endTime: number;
}

/** One frame of the merged call tree: same function under the same parent path → one frame. */
export interface Frame {
  readonly name: string;
  readonly origin: string;
  /** Samples in this frame and below it. */
  total: number;
  /** Samples in this frame itself. */
  self: number;
  readonly children: Map<string, Frame>;
}

/**
 * Where a function comes from: `ours` (the operator, bundled or not), `npm:<package>`, `node` (its internals),
 * or V8's pseudo-frames (`(garbage collector)`, `(idle)`, `(program)`).
 */
export function originOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : 'node';
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (packageMatch && !url.includes('/.cache/customapp-bench/')) return `npm:${packageMatch[1]}`;
  if (url.startsWith('node:') || !url.includes('/')) return 'node';
  return 'ours';
}

/** The merged call tree of `profile`, by sample counts. */
export function callTree(profile: CpuProfile): Frame {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const childIds = new Set(profile.nodes.flatMap((node) => node.children ?? []));
  const root: Frame = { name: 'all', origin: 'all', total: 0, self: 0, children: new Map() };
  const visit = (id: number, parent: Frame): number => {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    const key = `${name}\u0000${url}\u0000${lineNumber}`;
    let frame = parent.children.get(key);
    if (!frame) {
      frame = { name, origin: originOf(url, name), total: 0, self: 0, children: new Map() };
      parent.children.set(key, frame);
    }
    const hits = node.hitCount ?? 0;
    frame.self += hits;
    let total = hits;
    for (const child of node.children ?? []) total += visit(child, frame);
    frame.total += total;
    return total;
  };
  for (const node of profile.nodes) if (!childIds.has(node.id)) root.total += visit(node.id, root);
  // V8's root frame "(root)" holds everything: show its children directly.
  const only = [...root.children.values()];
  if (only.length === 1 && only[0]!.name === '(root)') return { ...only[0]!, name: 'all', origin: 'all' };
  return root;
}

/** `tree` without V8's `(idle)` frame: the flame graph of the busy samples only (the idle share is said in the title). */
export function withoutIdle(tree: Frame): { tree: Frame; idle: number } {
  const idle = [...tree.children.values()].filter((child) => child.name === '(idle)').reduce((sum, child) => sum + child.total, 0);
  const children = new Map([...tree.children].filter(([, child]) => child.name !== '(idle)'));
  return { tree: { ...tree, total: tree.total - idle, children }, idle };
}

/** Self samples by origin, and the functions with the most self samples. */
export function selfTime(tree: Frame): { byOrigin: Map<string, number>; byFunction: Map<string, number> } {
  const byOrigin = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const walk = (frame: Frame): void => {
    if (frame.self > 0) {
      byOrigin.set(frame.origin, (byOrigin.get(frame.origin) ?? 0) + frame.self);
      const key = `${frame.name} (${frame.origin})`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + frame.self);
    }
    for (const child of frame.children.values()) walk(child);
  };
  walk(tree);
  return { byOrigin, byFunction };
}

const COLORS: Record<string, string> = {
  ours: '#e8743b',
  node: '#9aa5b1',
  '(garbage collector)': '#d64545',
  '(idle)': '#e6e6e6',
  '(program)': '#c8c8c8',
};

function colorOf(origin: string): string {
  return COLORS[origin] ?? (origin.startsWith('npm:') ? '#4f8fd6' : '#b0b0b0');
}

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * A flame graph: the root at the bottom, each frame as wide as its samples, children left to right by width. Frames
 * narrower than `minWidth` pixels are left out (their time stays in their parent's width). Hover shows the name,
 * origin, samples and share.
 */
export function renderFlameGraph(
  tree: Frame,
  title: string,
  options: { width?: number; rowHeight?: number; minWidth?: number } = {},
): string {
  const width = options.width ?? 1200;
  const rowHeight = options.rowHeight ?? 16;
  const minWidth = options.minWidth ?? 0.5;
  const scale = tree.total > 0 ? width / tree.total : 0;
  const rects: { x: number; depth: number; w: number; frame: Frame }[] = [];
  let maxDepth = 0;
  const place = (frame: Frame, x: number, depth: number): void => {
    const w = frame.total * scale;
    if (w < minWidth) return;
    rects.push({ x, depth, w, frame });
    maxDepth = Math.max(maxDepth, depth);
    let childX = x;
    for (const child of [...frame.children.values()].sort((a, b) => b.total - a.total)) {
      place(child, childX, depth + 1);
      childX += child.total * scale;
    }
  };
  place(tree, 0, 0);
  const top = 40;
  const legendHeight = 24;
  const height = top + (maxDepth + 1) * rowHeight + legendHeight;
  const y = (depth: number): number => top + (maxDepth - depth) * rowHeight;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="monospace" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="6" y="18" font-size="14" font-family="sans-serif">${escapeXml(title)}</text>`,
    `<text x="6" y="33" font-family="sans-serif" fill="#555">${tree.total} samples; width = share of samples (self and below); hover a frame for its figures</text>`,
  ];
  for (const { x, depth, w, frame } of rects) {
    const share = ((frame.total / tree.total) * 100).toFixed(2);
    const label = w > 30 ? escapeXml(frame.name.slice(0, Math.floor((w - 4) / 6.6))) : '';
    parts.push(
      `<g><title>${escapeXml(`${frame.name} [${frame.origin}]: ${frame.total} samples (${share}%), self ${frame.self}`)}</title>` +
        `<rect x="${x.toFixed(2)}" y="${y(depth)}" width="${Math.max(0.5, w - 0.5).toFixed(2)}" height="${rowHeight - 1}" fill="${colorOf(frame.origin)}" rx="1"/>` +
        (label ? `<text x="${(x + 3).toFixed(2)}" y="${y(depth) + rowHeight - 4}">${label}</text>` : '') +
        '</g>',
    );
  }
  const legendY = height - 8;
  let legendX = 6;
  for (const [name, color] of [
    ['ours', COLORS.ours],
    ['npm packages', '#4f8fd6'],
    ['Node.js', COLORS.node],
    ['GC', COLORS['(garbage collector)']],
    ['idle / program', COLORS['(idle)']],
  ] as const) {
    parts.push(`<rect x="${legendX}" y="${legendY - 10}" width="12" height="12" fill="${color}"/>`);
    parts.push(`<text x="${legendX + 16}" y="${legendY}" font-family="sans-serif">${name}</text>`);
    legendX += 24 + name.length * 7;
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function main(): void {
  const [input, output, ...rest] = process.argv.slice(2);
  if (!input || !output) throw new Error('usage: tsx bench/flame.ts <profile.cpuprofile> <out.svg> [--title text]');
  const titleAt = rest.indexOf('--title');
  const profile = JSON.parse(readFileSync(resolve(input), 'utf8')) as CpuProfile;
  const tree = callTree(profile);
  const seconds = (profile.endTime - profile.startTime) / 1e6;
  const title = titleAt >= 0 ? rest[titleAt + 1]! : `CPU profile ${input} (${seconds.toFixed(1)} s)`;
  const busy = withoutIdle(tree);
  const idleShare = `${((busy.idle / tree.total) * 100).toFixed(1)}%`;
  writeFileSync(resolve(output), renderFlameGraph(busy.tree, `${title}: busy samples only (idle ${idleShare} left out)`));
  const { byOrigin, byFunction } = selfTime(tree);
  const share = (samples: number): string => `${((samples / tree.total) * 100).toFixed(1)}%`;
  process.stdout.write(`${tree.total} samples over ${seconds.toFixed(1)} s\nself time by origin:\n`);
  for (const [origin, samples] of [...byOrigin].sort((a, b) => b[1] - a[1]))
    process.stdout.write(`  ${share(samples).padStart(6)}  ${origin}\n`);
  process.stdout.write('costliest functions (self):\n');
  for (const [name, samples] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25))
    process.stdout.write(`  ${share(samples).padStart(6)}  ${name}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) main();
