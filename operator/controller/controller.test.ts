// Tests of the controller loop in virtual time: Result semantics, errors and conflicts, single flight, and draining.
import test from 'ava';
import { ApiError } from '../kube/errors.js';
import { createLogger, silentLogger } from '../log.js';
import { OperatorMetrics } from './metrics.js';
import { settle, VirtualClock } from '../../test/support/virtual-time.js';
import { Controller } from './controller.js';
import type { Reconciler, Request, Result } from './reconciler.js';

/** A reconciler whose outcomes the test scripts, recording each call's key and start time. */
function scripted(
  clock: VirtualClock,
  outcomes: Array<Result | Error | (() => Promise<Result>)>,
): Reconciler & { calls: Array<{ key: string; at: number; reason: string }> } {
  const calls: Array<{ key: string; at: number; reason: string }> = [];
  return {
    calls,
    async reconcile(request: Request): Promise<Result> {
      calls.push({ key: request.key, at: clock.now(), reason: request.reason });
      const outcome = outcomes.shift() ?? {};
      if (outcome instanceof Error) throw outcome;
      return typeof outcome === 'function' ? outcome() : outcome;
    },
  };
}

function controllerWith(
  reconciler: Reconciler,
  clock: VirtualClock,
  concurrency = 1,
): { controller: Controller; metrics: OperatorMetrics } {
  const metrics = new OperatorMetrics();
  return {
    controller: new Controller({ name: 'test', reconciler, logger: silentLogger(), metrics, concurrency, scheduler: clock }),
    metrics,
  };
}

/** A started controller of one worker whose reconciler plays `outcomes`, with `ns/a` queued. */
function startedOnA(outcomes: Parameters<typeof scripted>[1]): {
  clock: VirtualClock;
  reconciler: ReturnType<typeof scripted>;
  controller: Controller;
  metrics: OperatorMetrics;
} {
  const clock = new VirtualClock();
  const reconciler = scripted(clock, outcomes);
  const { controller, metrics } = controllerWith(reconciler, clock);
  controller.start();
  controller.enqueue('ns/a', { source: 'test', reason: 'added' });
  return { clock, reconciler, controller, metrics };
}

/**
 * Lets `ms` of virtual time pass `stepMs` at a time, the promises settling before each step and after the last, so
 * that each timer's reconcile runs (and schedules its next timer) before time moves on.
 */
async function runFor(clock: VirtualClock, ms: number, stepMs: number): Promise<void> {
  for (let passed = 0; passed < ms; passed += stepMs) {
    await settle();
    clock.advance(stepMs);
  }
  await settle();
}

test('an error is retried with the per-key backoff, and a success ends the retries', async (t) => {
  const { clock, reconciler, controller, metrics } = startedOnA([new Error('boom'), new Error('boom'), {}]);
  await runFor(clock, 40, 1);
  t.deepEqual(
    reconciler.calls.map((call) => call.at),
    [0, 5, 15],
    'retried after 5 ms, then 10 ms',
  );
  t.is(controller.queue.retries('ns/a'), 0, 'forgotten after the success');
  t.is(await metrics.total('controller_runtime_reconcile_errors_total'), 2);
  t.is(await metrics.total('controller_runtime_reconcile_total', { result: 'success' }), 1);
  await controller.stop();
});

test('requeueAfter runs the key again after that delay; a 409 is a requeue, not an error', async (t) => {
  const conflict = new ApiError('conflict', 409, { reason: 'Conflict' });
  const { clock, reconciler, controller, metrics } = startedOnA([{ requeueAfterMs: 100 }, conflict, {}]);
  await runFor(clock, 150, 5);
  t.deepEqual(
    reconciler.calls.map((call) => call.at),
    [0, 100, 105],
  );
  t.is(await metrics.total('controller_runtime_reconcile_total', { result: 'requeue_after' }), 1);
  t.is(await metrics.total('controller_runtime_reconcile_total', { result: 'requeue' }), 1);
  t.is(await metrics.total('controller_runtime_reconcile_errors_total'), 0);
  await controller.stop();
});

test('requeueNow runs the key again at once, behind the keys already waiting', async (t) => {
  const clock = new VirtualClock();
  const reconciler = scripted(clock, [{ requeueNow: true }, {}, {}, {}]);
  const { controller } = controllerWith(reconciler, clock);
  controller.enqueue('ns/a', { source: 'test', reason: 'added' });
  controller.enqueue('ns/b', { source: 'test', reason: 'added' });
  controller.enqueue('ns/c', { source: 'test', reason: 'added' });
  controller.start();
  await settle();
  t.deepEqual(
    reconciler.calls.map((call) => `${call.key}@${call.at}`),
    ['ns/a@0', 'ns/b@0', 'ns/c@0', 'ns/a@0'],
  );
  t.is(controller.queue.retries('ns/a'), 0, 'not counted as a retry');
  await controller.stop();
});

test('one key is never reconciled twice at once, while other keys run in parallel', async (t) => {
  const clock = new VirtualClock();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const running = new Set<string>();
  let overlap = false;
  let maxParallel = 0;
  const reconciler: Reconciler = {
    async reconcile(request) {
      if (running.has(request.key)) overlap = true;
      running.add(request.key);
      maxParallel = Math.max(maxParallel, running.size);
      await gate;
      running.delete(request.key);
      return {};
    },
  };
  const { controller } = controllerWith(reconciler, clock, 4);
  controller.start();
  controller.enqueue('ns/a', { source: 'test', reason: 'one' });
  controller.enqueue('ns/b', { source: 'test', reason: 'one' });
  await settle();
  controller.enqueue('ns/a', { source: 'test', reason: 'two' });
  controller.enqueue('ns/a', { source: 'test', reason: 'three' });
  await settle();
  t.is(maxParallel, 2);
  release();
  await settle(30);
  t.false(overlap);
  await controller.stop();
});

test('stop lets the reconcile in flight finish, then drops what is queued', async (t) => {
  let finish!: () => void;
  const slow = new Promise<Result>((resolve) => {
    finish = () => resolve({});
  });
  const { controller, reconciler } = startedOnA([() => slow]);
  await settle();
  controller.enqueue('ns/b', { source: 'test', reason: 'added' });
  let stopped = false;
  const stopping = controller.stop().then(() => {
    stopped = true;
  });
  await settle();
  t.false(stopped, 'stop waits for the reconcile in flight');
  finish();
  await stopping;
  t.deepEqual(
    reconciler.calls.map((call) => call.key),
    ['ns/a'],
    'the queued key is dropped',
  );
  controller.enqueue('ns/c', { source: 'test', reason: 'late' });
  t.is(controller.queue.length, 0, 'an enqueue after stop is dropped');
});

test('the reason of a coalesced rerun lists every trigger that joined it', async (t) => {
  const clock = new VirtualClock();
  const reconciler = scripted(clock, []);
  const { controller } = controllerWith(reconciler, clock);
  controller.enqueue('ns/a', { source: 'customapp', reason: 'applied' });
  controller.enqueue('ns/a', { source: 'configmap', object: 'ns/cfg', reason: 'content 1234' });
  controller.start();
  await settle();
  t.is(reconciler.calls[0]!.reason, 'customapp applied (+1: configmap ns/cfg content 1234)');
  await controller.stop();
});

test('every controller log line names each field once, and an enqueue is traced at info with its reason', async (t) => {
  const clock = new VirtualClock();
  const lines: string[] = [];
  const logger = createLogger({ destination: { write: (line: string) => void lines.push(line) } }).child({ controller: 'test' });
  const controller = new Controller({
    name: 'test',
    reconciler: scripted(clock, [{}]),
    logger,
    metrics: new OperatorMetrics(),
    scheduler: clock,
  });
  controller.start();
  controller.enqueue('ns/a', { source: 'configmap', object: 'ns/cfg', reason: 'content changed' });
  await settle();
  await controller.stop();
  for (const line of lines) {
    const keys = [...line.matchAll(/"([^"]+)":/g)].map((match) => match[1]);
    t.deepEqual(keys, [...new Set(keys)], line);
  }
  const enqueue = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'enqueue');
  t.like(enqueue, { level: 30, key: 'ns/a', reason: 'configmap ns/cfg content changed', controller: 'test' });
  t.truthy(enqueue.traceId);
});
