// Tests of the pretty format on a recorded trace: one line per entry, columns aligned, trace ids short, fields kept.
import test from 'ava';
import { PrettyFormatter, prettyDestination } from './log-pretty.js';

/** What the operator logged (JSON) for one `kubectl patch cm hello-config`, from the watch event to the end of the reconcile. */
const TRACE: Record<string, unknown>[] = [
  { stream: 'configmap default/hello-config', type: 'MODIFIED', key: 'default/hello-config', resourceVersion: '31', msg: 'event' },
  { object: 'configmap default/hello-config', change: 'content f40f42d4bbc3', count: 1, keys: ['default/hello'], msg: 'trigger' },
  {
    controller: 'customapp',
    key: 'default/hello',
    reason: 'configmap default/hello-config content f40f42d4bbc3',
    traceId: '536b049ca2acb66c',
    outcome: 'queued',
    msg: 'enqueue',
  },
  {
    controller: 'customapp',
    key: 'default/hello',
    traceId: '536b049ca2acb66c',
    reason: 'configmap default/hello-config content f40f42d4bbc3',
    retries: 0,
    msg: 'reconcile.start',
  },
  {
    controller: 'customapp',
    key: 'default/hello',
    traceId: '536b049ca2acb66c',
    verb: 'update',
    resource: 'deployments.apps',
    durationMs: 2.76,
    drift: ['spec.template.metadata.annotations.app.example.com/config-hash'],
    msg: 'write',
  },
  { stream: 'deployment * (owned)', type: 'MODIFIED', key: 'default/hello', resourceVersion: '32', msg: 'event' },
  {
    controller: 'customapp',
    key: 'default/hello',
    reason: 'deployment default/hello applied',
    traceId: '2d98e4780235f04e',
    outcome: 'deferred',
    msg: 'enqueue',
  },
  {
    controller: 'customapp',
    key: 'default/hello',
    traceId: '536b049ca2acb66c',
    verb: 'update',
    resource: 'customapps.app.example.com',
    subresource: 'status',
    durationMs: 4.29,
    msg: 'write',
  },
  { controller: 'customapp', key: 'default/hello', traceId: '536b049ca2acb66c', durationMs: 9, result: 'success', msg: 'reconcile.end' },
].map((fields, index) => ({
  level: 30,
  time: `2026-11-30T15:33:16.${String(125 + index).padStart(3, '0')}Z`,
  logger: 'customapp-operator',
  ...fields,
}));

test('a trace reads as the data flows: one line per step, the step, subject and trace id in aligned columns', (t) => {
  const formatter = new PrettyFormatter();
  const lines = TRACE.map((entry) => formatter.format(entry));
  for (const line of lines) t.is(line.split('\n').length, 2, 'one line, newline-terminated');
  const rows = lines.map((line) => line.trimEnd());
  t.deepEqual(
    rows.map((row) => row.slice(13).split(/\s+/)[1]),
    ['event', 'trigger', 'enqueue', 'reconcile.start', 'write', 'event', 'enqueue', 'write', 'reconcile.end'],
  );
  // Every column starts at the same offset on every line (the subject at the step's end, the trace at the subject's end).
  const stepAt = rows[0]!.indexOf('event');
  const subjectAt = rows[0]!.indexOf('configmap default/hello-config');
  const traceAt = rows[2]!.indexOf('536b049c');
  t.true(stepAt > 0 && subjectAt > stepAt && traceAt > subjectAt);
  for (const [index, row] of rows.entries()) {
    const entry = TRACE[index]!;
    t.is(row.indexOf(String(entry.msg)), stepAt, row);
    const subject = String(entry.stream ?? entry.key ?? entry.object);
    t.is(row.indexOf(subject, stepAt + String(entry.msg).length), subjectAt, row);
    if (entry.traceId) t.is(row.indexOf(String(entry.traceId).slice(0, 8)), traceAt, row);
    t.false(row.includes(String(entry.traceId ?? 'no trace id')), 'the full trace id is not shown');
    t.false(/logger=|controller=|msg=|time=|level=/.test(row), 'columns and constant fields are not repeated');
  }
  t.true(rows[0]!.endsWith('type=MODIFIED key=default/hello-config resourceVersion=31'), rows[0]);
  t.true(rows[1]!.endsWith('change="content f40f42d4bbc3" count=1 keys=["default/hello"]'), rows[1]);
  t.true(
    rows[4]!.endsWith(
      'verb=update resource=deployments.apps durationMs=2.76 drift=["spec.template.metadata.annotations.app.example.com/config-hash"]',
    ),
  );
  t.regex(rows[2]!, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}enqueue/);
});

test('errors show their message, levels their name, and a column widens for a longer subject and stays wide', (t) => {
  const formatter = new PrettyFormatter();
  const error = formatter.format({
    level: 50,
    time: 0,
    msg: 'api.unavailable',
    resource: 'customapps.app.example.com',
    reason: 'NotServed',
    err: { type: 'ApiError', message: 'GET /apis: 404', stack: 'ApiError: …\n    at x' },
  });
  t.regex(error, /ERROR api\.unavailable +customapps\.app\.example\.com +reason=NotServed err="GET \/apis: 404"\n$/);
  t.false(error.includes('at x'), 'no stack: one line');
  const long = 'configmap team-payments/payments-config';
  const wide = formatter.format({ level: 40, time: 0, msg: 'retry', stream: long, delayMs: 800 });
  const next = formatter.format({ level: 20, time: 0, msg: 'retry', stream: 'x', delayMs: 800 });
  t.regex(wide, /WARN {2}retry/);
  t.is(next.indexOf('delayMs'), wide.indexOf('delayMs'), 'later lines align with the widest subject shown');
  t.regex(next, /DEBUG retry/);
});

test('colours only when asked, and a destination passes a line that is not JSON through', (t) => {
  const coloured = new PrettyFormatter({ colors: true }).format({ level: 30, time: 0, msg: 'started', namespace: '*' });
  t.true(coloured.includes('\x1b[32mINFO \x1b[0m'));
  const written: string[] = [];
  const destination = prettyDestination({ write: (text: string) => written.push(text) });
  destination.write('not json\n');
  destination.write(`${JSON.stringify({ level: 30, time: 0, msg: 'started' })}\n`);
  t.is(written[0], 'not json\n');
  t.regex(written[1]!, /INFO {2}started\n$/);
});

test('control characters from names, messages and values reach the terminal escaped, never raw; only its own colours do', (t) => {
  // An Event message, an API error, a label or annotation value can carry anything; a Kubernetes name cannot, but a
  // stream or key is shown as logged.
  const entry = {
    level: 50,
    time: 0,
    msg: 'event.recorded\x1b]0;title\x07',
    object: 'default/app\x1b[2J',
    traceId: '\x1b[31m0123456789',
    message: 'rollout\x1b[2J\x1b[Hdone\r\nfake line\u009b2J\u0085',
    label: 'a\x1b[31mred\x00',
    bell: '\x07',
    err: { message: 'GET /x: 500: \x1bc reset\u009d' },
    nested: { note: 'csi\u009b31m' },
    'key\x1b[1m': 1,
  };
  const controls = /\p{Cc}/u;
  const plain = new PrettyFormatter().format(entry);
  t.true(plain.endsWith('\n'));
  t.false(controls.test(plain.slice(0, -1)), JSON.stringify(plain));
  t.true(plain.includes('default/app\\u001b[2J'), 'the escape is shown, visibly');
  t.true(plain.includes('\\u009b2J'), 'a C1 control is shown, visibly');
  const coloured = new PrettyFormatter({ colors: true }).format(entry);
  const ownColours = new RegExp(`${'\x1b'}\\[[0-9;]*m`, 'g');
  t.false(controls.test(coloured.slice(0, -1).replace(ownColours, '')), JSON.stringify(coloured));
  t.is(coloured.replace(ownColours, ''), plain, 'the colours are the only difference');
  const written: string[] = [];
  prettyDestination({ write: (text: string) => written.push(text) }).write('not json \x1b[2J\n');
  t.is(written[0], 'not json \\u001b[2J\n');
});
