// Marble tests of the backoff operator: delays, jitter, Retry-After, reset after a healthy period, giving up, teardown.
import test from 'ava';
import { defer, take, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { ApiError } from '../kube/errors.js';
import { backoff, DEFAULT_BACKOFF, retryDelayMs, type BackoffPolicy, type Retry } from './backoff.js';

/** Small numbers so that marbles stay readable: 10 ms → 20 → 40 → 80, capped at 80, reset after 100 ms. */
const POLICY: BackoffPolicy = {
  initialDelayMs: 10,
  maxDelayMs: 80,
  factor: 2,
  jitter: 1,
  resetAfterMs: 100,
  maxRetries: Number.POSITIVE_INFINITY,
};

function scheduler(t: { deepEqual: (a: unknown, b: unknown) => void }): TestScheduler {
  return new TestScheduler((actual, expected) => t.deepEqual(actual, expected));
}

test('values and completion pass through untouched', (t) => {
  const testScheduler = scheduler(t);
  testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('-a-b|');
    expectObservable(source.pipe(backoff(POLICY, { scheduler: testScheduler, random: () => 0 }))).toBe('-a-b|');
    expectSubscriptions(source.subscriptions).toBe('^---!');
  });
});

test('an empty source completes without a retry', (t) => {
  const testScheduler = scheduler(t);
  testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('|');
    expectObservable(source.pipe(backoff(POLICY, { scheduler: testScheduler }))).toBe('|');
    expectSubscriptions(source.subscriptions).toBe('(^!)');
  });
});

test('each error resubscribes after a doubling delay, and the error goes through once maxRetries is spent', (t) => {
  const testScheduler = scheduler(t);
  const retries: Retry[] = [];
  testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('-a#');
    const policy = { ...POLICY, maxRetries: 2 };
    // Subscribed at 0, 12 (2 + 10) and 34 (14 + 20); the third error (36) goes through.
    expectObservable(
      source.pipe(backoff(policy, { scheduler: testScheduler, random: () => 0, onRetry: (retry) => retries.push(retry) })),
    ).toBe('-a 11ms a 21ms a#');
    expectSubscriptions(source.subscriptions).toBe(['^-!', '12ms ^-!', '34ms ^-!']);
  });
  t.deepEqual(
    retries.map(({ attempt, delayMs }) => [attempt, delayMs]),
    [
      [1, 10],
      [2, 20],
    ],
  );
});

test('jitter stretches each delay by up to jitter × random, and the cap applies before it', (t) => {
  t.is(retryDelayMs(POLICY, 1, 0.5), 15);
  t.is(retryDelayMs(POLICY, 4, 0), 80);
  t.is(retryDelayMs(POLICY, 9, 0), 80);
  t.is(retryDelayMs(POLICY, 9, 0.999), 160);
  t.is(retryDelayMs(DEFAULT_BACKOFF, 1, 0), 800);
  t.is(retryDelayMs(DEFAULT_BACKOFF, 7, 0), 30_000);
  t.is(retryDelayMs(DEFAULT_BACKOFF, 7, 0.999), 59_970);
});

test("a 429's Retry-After is a floor for the delay", (t) => {
  const testScheduler = scheduler(t);
  const throttled = new ApiError('too many requests', 429, undefined, 0.05);
  testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('-#', undefined, throttled);
    const result = source.pipe(backoff(POLICY, { scheduler: testScheduler, random: () => 0 }), take(2));
    expectObservable(result, '200ms !').toBe('');
    // 50 ms (Retry-After: 0.05 s) instead of 10, then 50 again instead of 20.
    expectSubscriptions(source.subscriptions).toBe(['^!', '51ms ^!', '102ms ^!', '153ms ^!']);
  });
  t.is(retryDelayMs(POLICY, 1, 0, throttled), 50);
  t.is(retryDelayMs(POLICY, 4, 0, throttled), 80);
});

test('a source that stayed subscribed for resetAfterMs starts over at the initial delay', (t) => {
  const testScheduler = scheduler(t);
  const delays: number[] = [];
  testScheduler.run(({ cold, expectObservable }) => {
    const attempts: Observable<string>[] = [cold('#'), cold('#'), cold('100ms #'), cold('#'), cold('-a|')];
    let next = 0;
    const source = defer(() => attempts[next++]!);
    // Fails at 0 (wait 10) and 10 (wait 20), runs healthy from 30 to 130, fails: wait 10 again (not 40), fails
    // at 140 (wait 20), and the fifth subscription, at 160, succeeds.
    expectObservable(
      source.pipe(backoff(POLICY, { scheduler: testScheduler, random: () => 0, onRetry: ({ delayMs }) => delays.push(delayMs) })),
    ).toBe('160ms -a|');
  });
  t.deepEqual(delays, [10, 20, 10, 20]);
});

test('unsubscribing during a delay cancels the pending resubscription', (t) => {
  const testScheduler = scheduler(t);
  testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('-#');
    expectObservable(source.pipe(backoff(POLICY, { scheduler: testScheduler, random: () => 0 })), '----!').toBe('');
    expectSubscriptions(source.subscriptions).toBe('^!');
  });
});

test('an unsubscribe downstream reaches the source through the operator', (t) => {
  const testScheduler = scheduler(t);
  testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('-a-b-c-d');
    expectObservable(source.pipe(backoff(POLICY, { scheduler: testScheduler }), take(2))).toBe('-a-(b|)');
    expectSubscriptions(source.subscriptions).toBe('^--!');
  });
});
