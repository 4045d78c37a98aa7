// Tests of the logger: one JSON object per line by default, a human line with --log-format=pretty, and trace ids.
import test from 'ava';
import { PassThrough } from 'node:stream';
import { createLogger, newTraceId } from './log.js';

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
  logger.info({ key: 'default/hello' }, 'reconcile.start');
  t.regex(text(), /INFO.*reconcile\.start.*"key":"default\/hello"/);
  t.is(text().trim().split('\n').length, 1);
  t.throws(() => JSON.parse(text().trim()), undefined, 'not JSON');
});

test('the level filters lower entries', (t) => {
  const { stream, text } = collect();
  const logger = createLogger({ level: 'warn', destination: stream });
  logger.info('hidden');
  logger.warn('shown');
  t.deepEqual(
    text()
      .trim()
      .split('\n')
      .map((entry) => (JSON.parse(entry) as { msg: string }).msg),
    ['shown'],
  );
});

test('trace ids are 16 hex digits and distinct', (t) => {
  const ids = new Set(Array.from({ length: 100 }, () => newTraceId()));
  t.is(ids.size, 100);
  for (const id of ids) t.regex(id, /^[0-9a-f]{16}$/);
});
