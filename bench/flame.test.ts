import test from 'ava';
import { callTree, type CpuProfile, originOf, renderFlameGraph, selfTime, withoutIdle } from './flame.js';

const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });

// (root) → main (ours) → hash (ours), parse (node); (root) → (garbage collector); two main nodes merge into one frame.
const profile: CpuProfile = {
  startTime: 0,
  endTime: 1_000_000,
  nodes: [
    { id: 1, callFrame: frame('(root)'), hitCount: 0, children: [2, 5, 6] },
    { id: 2, callFrame: frame('main', 'file:///app/operator.mjs'), hitCount: 1, children: [3, 4] },
    { id: 3, callFrame: frame('hash', 'file:///app/operator.mjs'), hitCount: 4 },
    { id: 4, callFrame: frame('parse', 'node:internal/json'), hitCount: 2 },
    { id: 5, callFrame: frame('(garbage collector)'), hitCount: 2 },
    { id: 6, callFrame: frame('main', 'file:///app/operator.mjs'), hitCount: 1, children: [7] },
    { id: 7, callFrame: frame('emit', 'file:///app/node_modules/rxjs/dist/esm/x.js'), hitCount: 3 },
  ],
};

test('callTree merges the same function under the same path and counts self and total samples', (t) => {
  const tree = callTree(profile);
  t.is(tree.total, 13);
  const main = [...tree.children.values()].find((child) => child.name === 'main')!;
  t.is(main.total, 11);
  t.is(main.self, 2);
  t.is(main.children.size, 3);
});

test('originOf tells ours, npm packages, Node.js and V8 pseudo-frames apart', (t) => {
  t.is(originOf('file:///app/operator.mjs', 'main'), 'ours');
  t.is(originOf('file:///x/node_modules/@kubernetes/client-node/dist/config.js', 'f'), 'npm:@kubernetes/client-node');
  t.is(originOf('file:///x/node_modules/.cache/customapp-bench/runner.mjs', 'f'), 'ours');
  t.is(originOf('node:internal/streams', 'f'), 'node');
  t.is(originOf('', '(garbage collector)'), '(garbage collector)');
});

test('selfTime sums self samples by origin', (t) => {
  const { byOrigin } = selfTime(callTree(profile));
  t.deepEqual(Object.fromEntries(byOrigin), { ours: 6, node: 2, '(garbage collector)': 2, 'npm:rxjs': 3 });
});

test('renderFlameGraph draws one titled rectangle per frame wide enough, and escapes names', (t) => {
  const svg = renderFlameGraph(callTree(profile), 'a <title>');
  t.true(svg.startsWith('<svg'));
  t.true(svg.includes('a &lt;title&gt;'));
  t.is(svg.match(/<g><title>/g)?.length, 6);
});

test('withoutIdle leaves out the idle frame and its samples', (t) => {
  const idle = {
    ...profile,
    nodes: [
      ...profile.nodes.slice(0, 1).map((node) => ({ ...node, children: [...node.children!, 8] })),
      ...profile.nodes.slice(1),
      { id: 8, callFrame: frame('(idle)'), hitCount: 7 },
    ],
  };
  const { tree, idle: idleSamples } = withoutIdle(callTree(idle));
  t.is(idleSamples, 7);
  t.is(tree.total, 13);
  t.false([...tree.children.values()].some((child) => child.name === '(idle)'));
});
