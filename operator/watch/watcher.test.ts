// Tests of the watcher's state machine on a scripted client in virtual time: list, watch, resume, relist, backoff, idle, teardown.
import test from 'ava';
import type { Subscription } from 'rxjs';
import type { ObjectList } from '../kube/objects.js';
import { ApiError } from '../kube/errors.js';
import { CONFIGMAPS } from '../kube/resources.js';
import { VirtualClock, settle } from '../../test/support/virtual-time.js';
import { capturedLogger } from './testing/captured-logger.js';
import { ScriptedClient, type ConfigMap } from './testing/scripted-client.js';
import type { WatcherEvent } from './events.js';
import { watcher } from './watcher.js';
import type { WatchClient, WatcherConfig } from './config.js';
import { watchObject } from './watch-object.js';

const cm = (name: string, resourceVersion: string, value = 'v'): ConfigMap => ({
  metadata: { namespace: 'ns', name, resourceVersion },
  data: { key: value },
});
const page = (resourceVersion: string, items: ConfigMap[], token?: string): ObjectList<ConfigMap> => ({
  metadata: { resourceVersion, continue: token },
  items,
});

/** Subscribes and records every event as a short string. */
function record(
  client: WatchClient,
  config: WatcherConfig,
  clock: VirtualClock,
  extra: { logger?: ReturnType<typeof capturedLogger>['logger'] } = {},
): { seen: string[]; subscription: Subscription } {
  const seen: string[] = [];
  const subscription = watcher<ConfigMap>(
    client,
    CONFIGMAPS,
    { namespace: 'ns', timeoutSeconds: 295, ...config },
    { scheduler: clock, random: () => 0, logger: extra.logger },
  ).subscribe({
    next: (event) => seen.push(describe(event)),
    error: (error) => seen.push(`error ${String(error)}`),
    complete: () => seen.push('complete'),
  });
  return { seen, subscription };
}

function describe(event: WatcherEvent<ConfigMap>): string {
  switch (event.type) {
    case 'init':
      return 'init';
    case 'initDone':
      return `initDone ${event.resourceVersion}`;
    default:
      return `${event.type} ${event.object.metadata.name}@${event.object.metadata.resourceVersion}`;
  }
}

/** Moves the virtual clock `ms` on, then lets the promise callbacks of what came due run. */
async function advanced(clock: VirtualClock, ms: number): Promise<void> {
  clock.advance(ms);
  await settle(50);
}

/** Timers still pending on the virtual clock. */
const pendingTimers = (clock: VirtualClock): number => clock.actions.filter((action) => !action.closed).length;

test('lists page by page, then watches from the list resourceVersion with bookmarks and the server timeout', async (t) => {
  const clock = new VirtualClock();
  const client = new ScriptedClient(
    [page('10', [cm('a', '7')], 'next'), page('10', [cm('b', '9')])],
    [[{ type: 'ADDED', object: cm('c', '11') }]],
  );
  const { seen, subscription } = record(client, { pageSize: 1 }, clock);
  await settle(50);
  t.deepEqual(seen, ['init', 'initApply a@7', 'initApply b@9', 'initDone 10', 'apply c@11']);
  t.deepEqual(
    client.lists.map(({ limit, continue: token }) => [limit, token]),
    [
      [1, undefined],
      [1, 'next'],
    ],
  );
  t.like(client.watches[0], { namespace: 'ns', resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 295 });
  subscription.unsubscribe();
  await settle(50);
  t.is(client.open, 0);
});

test("without a timeout of its own, a stream asks for client-go's: 5 minutes times 1 + a random fraction", async (t) => {
  const asked: number[] = [];
  for (const fraction of [0, 0.5, 0.9999]) {
    const clock = new VirtualClock();
    const client = new ScriptedClient([page('10', [])], [[]]);
    const subscription = watcher<ConfigMap>(
      client,
      CONFIGMAPS,
      { namespace: 'ns' },
      { scheduler: clock, random: () => fraction },
    ).subscribe();
    await settle(30);
    asked.push(client.watches[0]!.timeoutSeconds!);
    subscription.unsubscribe();
    await settle(30);
    t.is(client.open, 0);
  }
  t.deepEqual(asked, [300, 450, 599]);
});

test('a normal close re-watches at once from the last resourceVersion, which bookmarks advance', async (t) => {
  const clock = new VirtualClock();
  const client = new ScriptedClient(
    [page('10', [])],
    [
      [{ type: 'MODIFIED', object: cm('a', '12') }, { type: 'BOOKMARK', object: { metadata: { resourceVersion: '15' } } }, 'close'],
      [{ type: 'DELETED', object: cm('a', '16') }],
    ],
  );
  const { seen, subscription } = record(client, {}, clock);
  await settle(80);
  t.deepEqual(seen, ['init', 'initDone 10', 'apply a@12', 'delete a@16']);
  t.deepEqual(
    client.watches.map((watch) => watch.resourceVersion),
    ['10', '15'],
  );
  t.is(client.lists.length, 1, 'no relist');
  t.is(clock.now(), 0, 'no backoff: no time passed');
  subscription.unsubscribe();
});

test('a watch the server closes at once without an event counts as an error and meets the backoff, not a tight loop', async (t) => {
  const clock = new VirtualClock();
  const client = new ScriptedClient([page('10', [])], [['close'], ['close'], []]);
  const { subscription } = record(client, {}, clock);
  await settle(50);
  t.is(client.watches.length, 1);
  await advanced(clock, 800);
  t.is(client.watches.length, 2);
  await advanced(clock, 1600);
  t.deepEqual(
    client.watches.map((watch) => watch.resourceVersion),
    ['10', '10', '10'],
  );
  t.is(client.lists.length, 1);
  subscription.unsubscribe();
});

test('an expired continue token restarts the list page by page, after a fresh init: never one unpaginated list', async (t) => {
  const clock = new VirtualClock();
  const expired = new ApiError('continue expired', 410, { reason: 'Expired', code: 410 });
  const client = new ScriptedClient([
    page('10', [cm('a', '7')], 'next'),
    expired,
    page('20', [cm('a', '7')], 'again'),
    page('20', [cm('b', '18')]),
  ]);
  const { logger, lines } = capturedLogger('info');
  const { seen, subscription } = record(client, { pageSize: 1 }, clock, { logger });
  await settle(50);
  t.deepEqual(seen, ['init', 'initApply a@7', 'init', 'initApply a@7', 'initApply b@18', 'initDone 20']);
  t.deepEqual(
    client.lists.map(({ limit, continue: token }) => [limit, token]),
    [
      [1, undefined],
      [1, 'next'],
      [1, undefined],
      [1, 'again'],
    ],
  );
  t.like(
    lines().find((line) => line.msg === 'relist'),
    { reason: 'continue token expired', count: 1, pageSize: 1 },
  );
  t.is(client.watches[0]?.resourceVersion, '20');
  subscription.unsubscribe();
});

test('a continue token that keeps expiring meets the relist guard and the backoff, not a loop of lists', async (t) => {
  const clock = new VirtualClock();
  const expired = (): ApiError => new ApiError('continue expired', 410, { reason: 'Expired', code: 410 });
  const first = page('10', [cm('a', '7')], 'next');
  // Every list gets its first page, and every continuation expires; then a whole list succeeds.
  const client = new ScriptedClient([...Array.from({ length: 4 }, () => [first, expired()]).flat(), first, page('10', [cm('b', '8')])]);
  const { logger, lines } = capturedLogger('info');
  const { seen, subscription } = record(client, { pageSize: 1 }, clock, { logger });
  await settle(80);
  t.is(client.lists.length, 8, 'two restarts in each of two attempts, then the error goes to the backoff');
  t.is(clock.now(), 0);
  t.like(
    lines().find((line) => line.msg === 'retry'),
    { code: 410, attempt: 1 },
  );
  clock.advance(800);
  await settle(80);
  t.is(client.lists.length, 10);
  t.is(seen.at(-1), 'initDone 10');
  t.true(
    client.lists.every(({ limit }) => limit === 1),
    'every request paginated',
  );
  subscription.unsubscribe();
});

test('a page answer over maxPageBytes is asked again at half the limit from the same continue token; one object is never refused', async (t) => {
  const clock = new VirtualClock();
  const tooLarge = (): ApiError => new ApiError('list: answer larger than 1000 bytes', 0, { kind: 'Status', reason: 'AnswerTooLarge' });
  const client = new ScriptedClient([
    page('10', [cm('a', '7')], 'next'),
    tooLarge(),
    tooLarge(),
    page('10', [cm('b', '8')], 'last'),
    page('10', [cm('c', '9')]),
  ]);
  const { logger, lines } = capturedLogger('info');
  const { seen, subscription } = record(client, { pageSize: 4, maxPageBytes: 1000 }, clock, { logger });
  await settle(80);
  t.deepEqual(seen, ['init', 'initApply a@7', 'initApply b@8', 'initApply c@9', 'initDone 10'], 'no relist, no error');
  t.deepEqual(
    client.lists.map(({ limit, continue: token, maxBytes }) => [limit, token, maxBytes]),
    [
      [4, undefined, 1000],
      [4, 'next', 1000],
      [2, 'next', 1000],
      [1, 'next', undefined],
      [1, 'last', undefined],
    ],
  );
  t.like(
    lines().find((line) => line.msg === 'page too large'),
    { maxPageBytes: 1000, pageSize: 2 },
  );
  subscription.unsubscribe();
});

/** Consecutive pages of small ConfigMaps (`a`, `b`, …) of the sizes given, each with a continue token but the last. */
function smallPages(sizes: readonly number[]): ObjectList<ConfigMap>[] {
  let next = 0;
  return sizes.map((size, index) =>
    page(
      '10',
      Array.from({ length: size }, () => cm(String.fromCharCode(97 + next++), '7')),
      index < sizes.length - 1 ? `p${index + 1}` : undefined,
    ),
  );
}

test('a list of small objects doubles its page size after each full page, up to maxPageSize', async (t) => {
  const clock = new VirtualClock();
  const pages = smallPages([2, 4, 8, 3]);
  const client = new ScriptedClient(pages);
  const { seen, subscription } = record(client, { pageSize: 2, maxPageSize: 8, maxPageBytes: 100_000 }, clock);
  await settle(80);
  t.is(seen.filter((event) => event.startsWith('initApply')).length, 17);
  t.deepEqual(
    client.lists.map(({ limit, maxBytes }) => [limit, maxBytes]),
    [
      [2, 100_000],
      [4, 100_000],
      [8, 100_000],
      [8, 100_000],
    ],
  );
  subscription.unsubscribe();
});

test('growPageBytes bounds the growth: a page grows only while the next, at the bytes per object seen, would fit it', async (t) => {
  const clock = new VirtualClock();
  const pages = smallPages([2, 4, 4, 4]);
  const pageBytes = (index: number): number => Buffer.byteLength(JSON.stringify(pages[index]));
  const client = new ScriptedClient(pages);
  // Room for twice the first page, not for twice the second.
  const growPageBytes = 2 * pageBytes(0) + 10;
  t.true(2 * pageBytes(1) > growPageBytes);
  const { seen, subscription } = record(client, { pageSize: 2, maxPageSize: 8, maxPageBytes: 100_000, growPageBytes }, clock);
  await settle(80);
  t.is(seen.filter((event) => event.startsWith('initApply')).length, 14);
  t.deepEqual(
    client.lists.map(({ limit }) => limit),
    [2, 4, 4, 4],
  );
  subscription.unsubscribe();
});

test('growProtobufPageBytes bounds the growth of pages that came as protobuf, growPageBytes that of JSON ones', async (t) => {
  const grown = async (protobuf: boolean): Promise<number[]> => {
    const clock = new VirtualClock();
    const pages = smallPages([2, 4, 8, 8]);
    const client = new ScriptedClient(pages);
    client.protobuf = protobuf;
    // Room for twice the first page only as JSON; for every page as protobuf.
    const growPageBytes = 2 * Buffer.byteLength(JSON.stringify(pages[0])) + 10;
    const config = { pageSize: 2, maxPageSize: 16, maxPageBytes: 100_000, growPageBytes, growProtobufPageBytes: 100_000 };
    const { subscription } = record(client, config, clock);
    await settle(80);
    subscription.unsubscribe();
    return client.lists.map(({ limit }) => limit!);
  };
  t.deepEqual(await grown(false), [2, 4, 4, 4]);
  t.deepEqual(await grown(true), [2, 4, 8, 16]);
});

test('a page over a quarter of maxPageBytes grows nothing, and a list whose page came back too large grows no more', async (t) => {
  const clock = new VirtualClock();
  const tooLarge = (): ApiError => new ApiError('list: answer larger than 2000 bytes', 0, { kind: 'Status', reason: 'AnswerTooLarge' });
  const big = (name: string): ConfigMap => cm(name, '7', 'x'.repeat(300));
  const client = new ScriptedClient([
    page('10', [big('a'), big('b')], 'p1'),
    page('10', [cm('c', '7'), cm('d', '7')], 'p2'),
    tooLarge(),
    page('10', [cm('e', '7'), cm('f', '7')], 'p3'),
    page('10', [cm('g', '7')]),
  ]);
  const { seen, subscription } = record(client, { pageSize: 2, maxPageSize: 8, maxPageBytes: 2000 }, clock);
  await settle(80);
  t.is(seen.filter((event) => event.startsWith('initApply')).length, 7);
  t.deepEqual(
    client.lists.map(({ limit }) => limit),
    [2, 2, 4, 2, 2],
    'not grown after the large page; grown after the small one; halved after the answer too large; never grown again',
  );
  subscription.unsubscribe();
});

test('a 410 ERROR event relists at once and watches from the new list', async (t) => {
  const clock = new VirtualClock();
  const client = new ScriptedClient(
    [page('10', [cm('a', '7')]), page('30', [cm('a', '25')])],
    [[{ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 10 (20)' } }]],
  );
  const { seen, subscription } = record(client, {}, clock);
  await settle(80);
  t.deepEqual(seen, ['init', 'initApply a@7', 'initDone 10', 'init', 'initApply a@25', 'initDone 30']);
  t.deepEqual(
    client.watches.map((watch) => watch.resourceVersion),
    ['10', '30'],
  );
  t.is(clock.now(), 0, 'no backoff before the relist');
  subscription.unsubscribe();
});

test('a broken connection retries after the backoff and resumes from the last resourceVersion, without relisting', async (t) => {
  const clock = new VirtualClock();
  const client = new ScriptedClient(
    [page('10', [])],
    [
      [{ type: 'ADDED', object: cm('a', '11') }, new ApiError('watch: connection closed mid-stream', 0)],
      [{ type: 'MODIFIED', object: cm('a', '12') }],
    ],
  );
  const { seen, subscription } = record(client, {}, clock);
  await settle(50);
  t.is(client.watches.length, 1);
  await advanced(clock, 799);
  t.is(client.watches.length, 1, 'still waiting: the first delay is 800 ms');
  await advanced(clock, 1);
  t.deepEqual(
    client.watches.map((watch) => watch.resourceVersion),
    ['10', '11'],
  );
  t.is(client.lists.length, 1);
  t.deepEqual(seen, ['init', 'initDone 10', 'apply a@11', 'apply a@12'], 'no duplicate, no gap');
  subscription.unsubscribe();
});

test("a 500 ERROR event backs off too, and a 429's Retry-After sets the minimum delay", async (t) => {
  const clock = new VirtualClock();
  const client = new ScriptedClient(
    [page('10', [])],
    [
      [{ type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd hiccup' } }],
      [new ApiError('too many requests', 429, undefined, 3)],
      [],
    ],
  );
  const { subscription } = record(client, {}, clock);
  await settle(50);
  await advanced(clock, 800);
  t.is(client.watches.length, 2, 'the 500 waited 800 ms');
  await advanced(clock, 2999);
  t.is(client.watches.length, 2, 'the 429 waits its Retry-After of 3 s, not 1.6 s');
  await advanced(clock, 1);
  t.is(client.watches.length, 3);
  t.deepEqual(
    client.watches.map((watch) => watch.resourceVersion),
    ['10', '10', '10'],
  );
  subscription.unsubscribe();
});

test('a watch silent past idleTimeoutMs is aborted and resumed', async (t) => {
  const clock = new VirtualClock();
  const client = new ScriptedClient([page('10', [])], [[{ type: 'BOOKMARK', object: { metadata: { resourceVersion: '14' } } }]]);
  const { subscription } = record(client, { idleTimeoutMs: 1000 }, clock);
  await settle(50);
  await advanced(clock, 999);
  t.is(client.watches.length, 1);
  await advanced(clock, 1);
  t.deepEqual(
    client.watches.map((watch) => watch.resourceVersion),
    ['10', '14'],
  );
  t.is(client.aborted, 1);
  t.is(client.open, 1, 'the silent watch was closed, and one new watch is open');
  subscription.unsubscribe();
  await settle(50);
  t.is(client.open, 0);
});

test('unsubscribing aborts the request in flight and leaves no timer, in a list, a watch or a backoff', async (t) => {
  const clock = new VirtualClock();
  const listing = new ScriptedClient(['hang']);
  const first = record(listing, {}, clock);
  await settle(20);
  first.subscription.unsubscribe();
  await settle(20);
  t.is(listing.aborted, 1);

  const watching = new ScriptedClient([page('10', [])]);
  const second = record(watching, {}, clock);
  await settle(20);
  t.is(watching.open, 1);
  t.true(pendingTimers(clock) > 0, 'the idle timer runs while watching');
  second.subscription.unsubscribe();
  await settle(20);
  t.is(watching.open, 0);
  t.is(pendingTimers(clock), 0);

  const failing = new ScriptedClient([new ApiError('unavailable', 503)]);
  const third = record(failing, {}, clock);
  await settle(20);
  t.is(pendingTimers(clock), 1, 'the backoff timer');
  third.subscription.unsubscribe();
  t.is(pendingTimers(clock), 0);
  clock.advance(60_000);
  await settle(20);
  t.is(failing.lists.length, 1, 'nothing resubscribed');
  t.deepEqual(
    [...first.seen, ...second.seen, ...third.seen],
    ['init', 'init', 'initDone 10', 'init'],
    'no error and no completion reached the subscribers',
  );
});

test('logs one structured line per lifecycle step, with the stream name, and never a payload', async (t) => {
  const clock = new VirtualClock();
  const { logger, lines } = capturedLogger('debug');
  const client = new ScriptedClient(
    [page('10', [cm('a', '7', 'canary-payload')])],
    [
      [
        { type: 'MODIFIED', object: cm('a', '12', 'canary-payload') },
        { type: 'BOOKMARK', object: { metadata: { resourceVersion: '13' } } },
        new ApiError('watch: malformed event ({"data":{"key":"canary-payload"}})', 0),
      ],
    ],
  );
  const { subscription } = record(client, { name: 'configmap ns/*' }, clock, { logger });
  await settle(50);
  subscription.unsubscribe();
  const steps = lines().map((line) => `${line.msg}${line.type ? ` ${line.type} ${line.key}` : ''}`);
  t.deepEqual(steps, ['subscribed', 'listed', 'event MODIFIED ns/a', 'bookmark', 'error', 'retry', 'unsubscribed']);
  t.true(lines().every((line) => line.stream === 'configmap ns/*'));
  t.like(lines()[1], { count: 1, resourceVersion: '10' });
  t.like(lines()[5], { delayMs: 800, attempt: 1, code: 0 });
  t.false(
    lines().some((line) => JSON.stringify(line).includes('canary-payload')),
    'the quoted excerpt of the malformed line was cut',
  );
});

test('watchObject narrows the watcher to one name with a field selector, and names the stream after it', async (t) => {
  const clock = new VirtualClock();
  const { logger, lines } = capturedLogger('info');
  const client = new ScriptedClient([page('10', [])]);
  const subscription = watchObject<ConfigMap>(client, CONFIGMAPS, 'ns', 'app-config', {}, { scheduler: clock, logger }).subscribe();
  await settle(20);
  subscription.unsubscribe();
  t.like(client.lists[0], { namespace: 'ns', fieldSelector: 'metadata.name=app-config' });
  t.like(client.watches[0], { namespace: 'ns', fieldSelector: 'metadata.name=app-config', resourceVersion: '10' });
  t.is(lines()[0]?.stream, 'configmap ns/app-config');
});
