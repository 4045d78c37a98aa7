// Tests of the logger: JSON lines, or one aligned line per entry with pretty (auto: on a terminal), and trace ids.
import test from 'ava';
import { PassThrough } from 'node:stream';
import { createLogger, newTraceId, resolveLogFormat } from './log.js';
import { parseJsonLines } from '../test/support/json-lines.js';

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

test('json lines carry the message as msg and the fields as they are', (t) => {
  const { stream, text } = collect();
  const logger = createLogger({ destination: stream });
  logger.info({ key: 'default/hello', traceId: 'abc' }, 'reconcile.start');
  const line = JSON.parse(text().trim()) as Record<string, unknown>;
  t.like(line, { level: 30, msg: 'reconcile.start', key: 'default/hello', traceId: 'abc', logger: 'customapp-operator' });
  t.regex(String(line.time), /^\d{4}-\d\d-\d\dT/);
});

test('the pretty format writes one readable line per entry', (t) => {
  const { stream, text } = collect();
  const logger = createLogger({ format: 'pretty', destination: stream });
  logger.info({ key: 'default/hello', traceId: '85792c68429d7712', retries: 0 }, 'reconcile.start');
  t.regex(text(), /^\d\d:\d\d:\d\d\.\d{3} INFO {2}reconcile\.start +default\/hello +85792c68 retries=0\n$/);
  t.false(text().includes('\x1b['), 'no colours when the output is not a terminal');
  t.throws(() => JSON.parse(text().trim()), undefined, 'not JSON');
});

test('auto is pretty (in colour) on a terminal and JSON elsewhere; json and pretty are what they say', (t) => {
  t.is(resolveLogFormat('auto', true), 'pretty');
  t.is(resolveLogFormat('auto', false), 'json');
  t.is(resolveLogFormat('json', true), 'json');
  t.is(resolveLogFormat('pretty', false), 'pretty');
  const terminal = collect();
  createLogger({ destination: terminal.stream, isTTY: true }).info({ key: 'a/b' }, 'enqueue');
  t.true(terminal.text().includes('\x1b[32mINFO \x1b[0m \x1b[1menqueue'), terminal.text());
  const pipe = collect();
  createLogger({ destination: pipe.stream, isTTY: false }).info({ key: 'a/b' }, 'enqueue');
  t.like(JSON.parse(pipe.text()), { msg: 'enqueue', key: 'a/b' });
});

test('the level filters lower entries', (t) => {
  const { stream, text } = collect();
  const logger = createLogger({ level: 'warn', destination: stream });
  logger.info('hidden');
  logger.warn('shown');
  t.deepEqual(
    parseJsonLines<{ msg: string }>(text()).map((entry) => entry.msg),
    ['shown'],
  );
});

test('trace ids are 16 hex digits and distinct', (t) => {
  const ids = new Set(Array.from({ length: 100 }, () => newTraceId()));
  t.is(ids.size, 100);
  for (const id of ids) t.regex(id, /^[0-9a-f]{16}$/);
});
