// The recorder's asynchronous side, on a recording client: posted Events are written in order, off the caller, and
// dropped past the queue size or the per-object spam filter.
import test from 'ava';
import { pino } from 'pino';
import type { CoreEvent } from '../kube/objects.js';
import { RecordingClient } from '../kube/testing/recording-client.js';
import { EVENTS } from '../kube/resources.js';
import { EventRecorder, type InvolvedObject } from './recorder.js';

const SILENT = pino({ level: 'silent' });
const app = (name: string): InvolvedObject => ({
  apiVersion: 'app.example.com/v1',
  kind: 'CustomApp',
  name,
  namespace: 'ns',
  uid: `uid-${name}`,
});

function recorder(
  client: RecordingClient,
  options: { queueSize?: number; spamFilter?: { burst: number; refillMs: number }; now?: () => Date } = {},
) {
  return new EventRecorder({ client, component: 'customapp-operator', instance: 'test', logger: SILENT, ...options });
}

test('post returns before the write ends, starts the first write at once, and writes the Events in the order posted', async (t) => {
  const client = new RecordingClient();
  const events = recorder(client);
  events.post(app('a'), 'Normal', 'First', 'one');
  t.is(client.calls.length, 1, 'the first write starts within post');
  events.post(app('a'), 'Normal', 'Second', 'two');
  events.post(app('b'), 'Warning', 'Third', 'three');
  await events.idle();
  const reasons = client.calls.filter((call) => call.resource === 'events').map((call) => (call.body as CoreEvent).reason);
  t.deepEqual(reasons, ['First', 'Second', 'Third']);
  t.is(client.all<CoreEvent>(EVENTS).length, 3);
});

test('past the queue size, posted Events are dropped and counted', async (t) => {
  const client = new RecordingClient();
  const events = recorder(client, { queueSize: 2 });
  // The first is taken off the queue at once (in flight); two more fill it; the fourth is dropped.
  for (const name of ['a', 'b', 'c', 'd']) events.post(app(name), 'Normal', 'Created', name);
  await events.idle();
  t.is(client.all(EVENTS).length, 3);
  t.is(events.dropped, 1);
});

test('the spam filter gives each object a burst of Events, then one per refill period', async (t) => {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const client = new RecordingClient();
  const events = recorder(client, { spamFilter: { burst: 2, refillMs: 1000 }, now: () => new Date(clock) });
  for (const message of ['1', '2', '3']) events.post(app('a'), 'Warning', 'Flapping', message);
  events.post(app('b'), 'Warning', 'Flapping', 'other object');
  await events.idle();
  t.is(events.dropped, 1, 'the third Event of a within the burst is dropped; b has its own bucket');
  clock += 1000;
  events.post(app('a'), 'Warning', 'Flapping', '4');
  events.post(app('a'), 'Warning', 'Flapping', '5');
  await events.idle();
  t.is(events.dropped, 2, 'one token came back after one period');
});

test('flush drops what is not written within its time', async (t) => {
  const client = new RecordingClient();
  const events = recorder(client);
  let release!: () => void;
  const original = client.create.bind(client);
  client.create = (async (...args: Parameters<typeof original>) => {
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    return original(...args);
  }) as typeof client.create;
  events.post(app('a'), 'Normal', 'Stuck', 'in flight');
  events.post(app('a'), 'Normal', 'Queued', 'never written');
  t.is(await events.flush(20), 1);
  release();
  await events.idle();
  t.is(events.dropped, 1);
});

test('while the controller is busy, Events wait, up to their maximum delay; once it is idle they go at once', async (t) => {
  const client = new RecordingClient();
  let busy = true;
  const events = new EventRecorder({
    client,
    component: 'customapp-operator',
    instance: 'test',
    logger: SILENT,
    yieldTo: { busy: () => busy, maxDelayMs: 300, pollMs: 5 },
  });
  const written = (): number => client.calls.filter((call) => call.resource === 'events').length;
  const posted = performance.now();
  events.post(app('a'), 'Normal', 'Waits', 'until idle or 300 ms');
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(written(), 0, 'held while busy');
  await events.idle();
  const waited = performance.now() - posted;
  t.true(waited >= 290, `written after its maximum delay (${waited.toFixed(0)} ms)`);
  t.is(written(), 1);

  events.post(app('b'), 'Normal', 'Held', 'then released');
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.is(written(), 1, 'held while busy');
  busy = false;
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.is(written(), 2, 'written once the controller is idle');

  busy = true;
  events.post(app('c'), 'Normal', 'Flushed', 'a stopping operator does not yield');
  t.is(await events.flush(1_000), 0);
  t.is(written(), 3);
});
