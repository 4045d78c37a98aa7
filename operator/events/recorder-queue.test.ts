// The recorder's asynchronous side, on a recording client: posted Events are written in order, off the caller, and
// dropped past the queue size or the per-object spam filter.
import test from 'ava';
import { pino } from 'pino';
import type { CoreEvent } from '../kube/objects.js';
import { RecordingClient } from '../kube/testing/recording-client.js';
import { EVENTS } from '../kube/resources.js';
import { EventRecorder, type InvolvedObject } from './recorder.js';
import { involvedApp } from './testing/involved-object.js';
import { VirtualClock, settle } from '../../test/support/virtual-time.js';

const SILENT = pino({ level: 'silent' });
const app = (name: string): InvolvedObject => involvedApp(name, 'ns');

function recorder(
  client: RecordingClient,
  options: { queueSize?: number; spamFilter?: { burst: number; refillMs: number }; now?: () => Date; scheduler?: VirtualClock } = {},
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
  const clock = new VirtualClock();
  const events = recorder(client, { scheduler: clock });
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
  const flushed = events.flush(20);
  await settle();
  clock.advance(19);
  await settle();
  let done = false;
  void flushed.then(() => (done = true));
  await settle();
  t.false(done, 'still waiting before its time is up');
  clock.advance(1);
  t.is(await flushed, 1);
  release();
  await events.idle();
  t.is(events.dropped, 1);
});

test('while the controller is busy, Events wait, up to their maximum delay; once it is idle they go at once', async (t) => {
  const client = new RecordingClient();
  const clock = new VirtualClock();
  let busy = true;
  const events = new EventRecorder({
    client,
    component: 'customapp-operator',
    instance: 'test',
    logger: SILENT,
    yieldTo: { busy: () => busy, maxDelayMs: 300, pollMs: 5 },
    scheduler: clock,
  });
  const written = (): number => client.calls.filter((call) => call.resource === 'events').length;
  const advance = async (ms: number): Promise<void> => {
    for (let step = 0; step < ms; step += 5) {
      clock.advance(5);
      await settle();
    }
  };
  events.post(app('a'), 'Normal', 'Waits', 'until idle or 300 ms');
  await advance(295);
  t.is(written(), 0, 'held while busy, until its maximum delay');
  await advance(10);
  await events.idle();
  t.is(written(), 1, 'written once its maximum delay passed, although still busy');

  events.post(app('b'), 'Normal', 'Held', 'then released');
  await advance(30);
  t.is(written(), 1, 'held while busy');
  busy = false;
  await advance(5);
  t.is(written(), 2, 'written at the next poll once the controller is idle');

  busy = true;
  events.post(app('c'), 'Normal', 'Flushed', 'a stopping operator does not yield');
  const flushed = events.flush(1_000);
  await advance(5); // the poll under way ends; the next check sees the flush
  t.is(await flushed, 0);
  t.is(written(), 3);
});
