import test from 'ava';
import { SourceMap } from 'node:module';
import type { CpuProfile } from './flame.js';
import { breakdownTable, goBreakdown, kindOf, KINDS, OURS_RULES, parsePprofTraces, v8Breakdown } from './phase-breakdown.js';

const TRACES = `File: controller-runtime-peer
Type: cpu
-----------+-------------------------------------------------------
      10ms   crypto/sha256.block
             main.contentHash
             main.(*reconciler).Reconcile
             sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[...]).reconcileHandler
-----------+-------------------------------------------------------
     1.50s   syscall.Syscall
             internal/poll.(*FD).Write
             net/http.(*persistConn).writeLoop
-----------+-------------------------------------------------------
     500us   encoding/json.(*decodeState).object
             k8s.io/apimachinery/pkg/runtime/serializer/json.(*Serializer).Decode
             k8s.io/client-go/tools/cache.(*Reflector).watch
-----------+-------------------------------------------------------
       2ms   runtime.scanobject
             runtime.gcBgMarkWorker
-----------+-------------------------------------------------------
       3ms   k8s.io/client-go/tools/cache.(*threadSafeMap).Update
             k8s.io/client-go/tools/cache.(*Reflector).watch
-----------+-------------------------------------------------------
       4ms   runtime.futex
             runtime.schedule
`;

test("Go's traces: each sample's value in ms and its frames, leaf first", (t) => {
  const samples = parsePprofTraces(TRACES);
  t.deepEqual(
    samples.map(({ ms }) => ms),
    [10, 1500, 0.5, 2, 3, 4],
  );
  t.deepEqual(samples[0]!.frames.slice(0, 2), ['crypto/sha256.block', 'main.contentHash']);
});

test("the peer's samples go to the first kind whose rule matches a frame: a decode in the watch is decoding", (t) => {
  const breakdown = goBreakdown(parsePprofTraces(TRACES));
  t.is(breakdown.hashing, 10, 'a hash inside the reconcile is hashing');
  t.is(breakdown['HTTP client and sockets'], 1500);
  t.is(breakdown['JSON and protobuf (decode, encode)'], 0.5);
  t.is(breakdown['garbage collection'], 2);
  t.is(breakdown['watch, caches, triggers, queue'], 3);
  t.is(breakdown['runtime and other'], 4);
  t.is(breakdown['reconcile steps'], 0);
});

test("ours' frames are named by the bundle's source map: the transport under the reconcile is the HTTP client", (t) => {
  const stack = (...sources: string[]) => sources.map((source) => ({ name: 'f', source }));
  t.is(kindOf(stack('../operator/reconcile/deployment-step.ts', '../operator/kube/transport.ts'), OURS_RULES), 'HTTP client and sockets');
  t.is(kindOf(stack('../operator/reconcile/deployment-step.ts'), OURS_RULES), 'reconcile steps');
  t.is(kindOf(stack('../node_modules/rxjs/dist/cjs/internal/Subscriber.js', 'node:net'), OURS_RULES), 'HTTP client and sockets');
  t.is(kindOf(stack('../node_modules/rxjs/dist/cjs/internal/Subscriber.js'), OURS_RULES), 'watch, caches, triggers, queue');
  t.is(kindOf(stack('node:internal/timers'), OURS_RULES), 'runtime and other');
});

test('a V8 profile: idle left out, self samples by the stack from the root, bundle frames through the source map', (t) => {
  // A bundle of two lines: line 0 from operator/reconcile/status.ts, line 1 from operator/kube/protobuf.ts.
  const map = new SourceMap({
    version: 3,
    file: 'runner.cjs',
    sources: ['../operator/reconcile/status.ts', '../operator/kube/protobuf.ts'],
    sourcesContent: [],
    sourceRoot: '',
    names: [],
    mappings: 'AAAA;ACAA',
  });
  const frame = (id: number, functionName: string, url: string, lineNumber: number, hitCount: number, children: number[] = []) => ({
    id,
    callFrame: { functionName, url, lineNumber, columnNumber: 0 },
    hitCount,
    children,
  });
  const bundle = 'file:///x/node_modules/.cache/customapp-bench/runner-1.cjs';
  const profile: CpuProfile = {
    startTime: 0,
    endTime: 10_000, // 10 ms over 10 samples: 1 ms each
    nodes: [
      frame(1, '(root)', '', -1, 0, [2, 3, 5]),
      frame(2, '(idle)', '', -1, 4),
      frame(3, 'statusStep', bundle, 0, 2, [4]),
      frame(4, 'decodeList', bundle, 1, 3),
      frame(5, '(garbage collector)', '', -1, 1),
    ],
  };
  const breakdown = v8Breakdown(profile, map);
  t.is(breakdown['reconcile steps'], 2);
  t.is(breakdown['JSON and protobuf (decode, encode)'], 3, 'protobuf under the reconcile is decoding');
  t.is(breakdown['garbage collection'], 1);
  t.is(
    KINDS.reduce((sum, kind) => sum + breakdown[kind], 0),
    6,
    'the idle samples are not counted',
  );
  t.is(v8Breakdown(profile)['runtime and other'], 5, 'without the map, bundle frames are unnamed');
});

test('the table puts the participants side by side, per operation when asked', (t) => {
  const breakdown = goBreakdown(parsePprofTraces(TRACES));
  const table = breakdownTable([{ label: 'peer', breakdown }], 100);
  t.regex(table, /^\| kind of work \| peer, ms per operation \|$/m);
  t.regex(table, /^\| HTTP client and sockets \| 15\.00 \(98\.7%\) \|$/m);
  t.regex(table, /^\| \*\*all sampled\*\* \| \*\*15\.20\*\* \|$/m);
});
