// Lining up trace lines with the latency dump: each stage of an update, and the updates left out when their trace is not whole.
import test from 'ava';
import { type DumpLine, stagesTable, updateStages } from './update-trace.js';

const line = (fields: Record<string, unknown>): string => JSON.stringify({ level: 30, logger: 'bench-runner', ...fields });

/** One update of bench-0/app-1 written at 1000.4: enqueued at 1004, reconciled at 1005, its write sent at 1005.5 and answered at 1010. */
const TRACE = [
  line({ time: 990, msg: 'enqueue', key: 'bench-0/app-1', reason: 'customapp applied', traceId: 'old' }),
  line({ time: 1004, msg: 'enqueue', key: 'bench-0/app-1', reason: 'configmap bench-0/app-1-config content ab', traceId: 't1' }),
  line({ time: 1005, msg: 'reconcile.start', key: 'bench-0/app-1', traceId: 't1' }),
  line({ time: 1010, msg: 'write', key: 'bench-0/app-1', traceId: 't1', resource: 'deployments.apps', durationMs: 4.5 }),
  line({ time: 1016, msg: 'write', key: 'bench-0/app-1', traceId: 't1', resource: 'customapps.app.example.com', durationMs: 6 }),
  'not a log line',
];

test('each stage of a traced update: the event, the queue, the reconcile until the write is sent, the write, the whole', (t) => {
  const dump: DumpLine[] = [{ what: 'referenced updates', deployment: 'bench-0/app-1', sentAt: 1000.4, latencyMs: 12 }];
  const [stages, ...others] = updateStages(TRACE, dump);
  t.deepEqual(others, []);
  t.is(stages!.eventMs.toFixed(1), '3.6');
  t.is(stages!.queueMs, 1);
  t.is(stages!.reconcileMs, 0.5);
  t.is(stages!.writeMs, 4.5);
  t.is(stages!.latencyMs, 12);
  t.regex(stagesTable([stages!]), /^1 updates lined up[\s\S]*\| Deployment write round trip \| 4\.50 \| 4\.50 \| 4\.50 \| 4\.50 \|/);
});

test('an update of another phase, another participant (no trace), or never seen is left out', (t) => {
  const dump: DumpLine[] = [
    { what: 'spec updates', deployment: 'bench-0/app-1', sentAt: 1000.4, latencyMs: 12 },
    { what: 'referenced updates', deployment: 'bench-0/app-2', sentAt: 1000.4, latencyMs: 12 },
    { what: 'referenced updates', deployment: 'bench-0/app-1', sentAt: 1000.4 },
    { what: 'referenced updates', deployment: 'bench-0/app-1', sentAt: 5000, latencyMs: 9 },
  ];
  t.deepEqual(updateStages(TRACE, dump), []);
  t.regex(stagesTable([]), /^0 updates lined up[\s\S]*\| – \| – \| – \| – \|/);
});
