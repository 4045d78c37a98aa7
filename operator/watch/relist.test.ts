// Marble tests of relistOnGone: a 410 resubscribes at once, other errors pass through, a 410 storm falls to the backoff.
import test from 'ava';
import { take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { ApiError } from '../kube/errors.js';
import { relistOnGone } from './relist.js';

const GONE = new ApiError('too old resource version', 410, { reason: 'Expired', code: 410 });
const EXPIRED_EVENT = new ApiError('watch: 410 Expired', 410, { reason: 'Expired' });
const SERVER_ERROR = new ApiError('internal error', 500);

function scheduler(t: { deepEqual: (a: unknown, b: unknown) => void }): TestScheduler {
  return new TestScheduler((actual, expected) => t.deepEqual(actual, expected));
}

test('values and completion pass through untouched', (t) => {
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('-a-b|');
    expectObservable(source.pipe(relistOnGone({ onGone: () => t.fail('no 410 here') }))).toBe('-a-b|');
    expectSubscriptions(source.subscriptions).toBe('^---!');
  });
});

test('an empty source completes', (t) => {
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('|');
    expectObservable(source.pipe(relistOnGone({ onGone: () => t.fail('no 410 here') }))).toBe('|');
    expectSubscriptions(source.subscriptions).toBe('(^!)');
  });
});

test('a 410 calls onGone and resubscribes in the same frame, without delay', (t) => {
  const gone: unknown[] = [];
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('-a-#', undefined, GONE);
    expectObservable(source.pipe(relistOnGone({ onGone: (error) => gone.push(error) }), take(4))).toBe('-a--a--a--(a|)');
    expectSubscriptions(source.subscriptions).toBe(['^--!', '---^--!', '------^--!', '---------^!']);
  });
  t.deepEqual(gone, [GONE, GONE, GONE]);
});

test('other errors pass through to the layer below, without onGone', (t) => {
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('-a#', undefined, SERVER_ERROR);
    expectObservable(source.pipe(relistOnGone({ onGone: () => t.fail('not a 410') }))).toBe('-a#', undefined, SERVER_ERROR);
    expectSubscriptions(source.subscriptions).toBe('^-!');
  });
});

test('a second 410 without progress since the relist passes through (after onGone), so a backoff paces it', (t) => {
  let gone = 0;
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    // `i` (a list event) is no progress; `w` (a watch event) is.
    const source = cold('-i#', undefined, EXPIRED_EVENT);
    const relisted = source.pipe(
      relistOnGone({
        onGone: () => {
          gone += 1;
        },
        isProgress: (value) => value === 'w',
      }),
    );
    expectObservable(relisted).toBe('-i-i#', undefined, EXPIRED_EVENT);
    expectSubscriptions(source.subscriptions).toBe(['^-!', '--^-!']);
  });
  t.is(gone, 2, 'onGone ran for both, so the backed-off retry relists too');
});

test('progress after a relist re-arms the immediate relist', (t) => {
  scheduler(t).run(({ cold, expectObservable }) => {
    const source = cold('-w#', undefined, GONE);
    const relisted = source.pipe(relistOnGone({ onGone: () => undefined, isProgress: (value) => value === 'w' }), take(3));
    expectObservable(relisted).toBe('-w-w-(w|)');
  });
});

test('unsubscribing early unsubscribes the source', (t) => {
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('-a-b-c');
    expectObservable(source.pipe(relistOnGone({ onGone: () => undefined })), '--!').toBe('-a');
    expectSubscriptions(source.subscriptions).toBe('^-!');
  });
});

test('an unsubscribe downstream reaches the source through the operator', (t) => {
  scheduler(t).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold('-a-b-c-d');
    expectObservable(source.pipe(relistOnGone({ onGone: () => undefined }), take(2))).toBe('-a-(b|)');
    expectSubscriptions(source.subscriptions).toBe('^--!');
  });
});
