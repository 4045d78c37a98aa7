// Tests of the access gate on a fake API in virtual time: requests waiting at a closed gate, one line per problem, re-checks, recovery.
import test from 'ava';
import { VirtualClock, settle } from '../../test/support/virtual-time.js';
import { capturedLogger } from '../watch/testing/captured-logger.js';
import { AccessGate } from './access-gate.js';
import type { KubeObject, ObjectList, RawWatchEvent } from './objects.js';
import { ApiError } from './errors.js';
import type { Resource } from './resources.js';

const WIDGETS: Resource = { group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true };

/** An API server in memory: which group versions are served, which verbs RBAC allows, and every call made. */
class FakeApi {
  /** Group versions served, with their resources. */
  readonly served = new Map<string, string[]>();
  readonly allowed = new Set(['list', 'watch']);
  /** Whether SelfSubjectAccessReviews answer (false: they fail with a 500). */
  reviews = true;
  readonly calls: string[] = [];

  private forbidden(verb: string): ApiError {
    const message = `widgets.example.com is forbidden: User "system:serviceaccount:ns:op" cannot ${verb} resource "widgets" in API group "example.com" at the cluster scope`;
    return new ApiError(message, 403, { kind: 'Status', code: 403, reason: 'Forbidden', message });
  }

  async discovery<T>(path: string): Promise<T> {
    this.calls.push(`discovery ${path}`);
    const [, , group, version] = path.split('/');
    if (version !== undefined) {
      const resources = this.served.get(`${group}/${version}`);
      if (!resources) throw new ApiError(`GET ${path}: 404`, 404);
      return { resources: resources.map((name) => ({ name, verbs: ['list', 'watch'] })) } as T;
    }
    const versions = [...this.served.keys()].filter((key) => key.startsWith(`${group}/`)).map((groupVersion) => ({ groupVersion }));
    if (versions.length === 0) throw new ApiError(`GET ${path}: 404`, 404);
    return { versions } as T;
  }

  async create<T extends KubeObject>(_resource: Resource, _namespace: string | undefined, body: T): Promise<T> {
    const verb = (body as unknown as { spec: { resourceAttributes: { verb: string } } }).spec.resourceAttributes.verb;
    this.calls.push(`review ${verb}`);
    if (!this.reviews) throw new ApiError('POST selfsubjectaccessreviews: 500', 500);
    return { ...body, status: { allowed: this.allowed.has(verb) } };
  }

  async list<T extends KubeObject>(): Promise<ObjectList<T>> {
    this.calls.push('list');
    if (!this.served.get('example.com/v1')?.includes('widgets')) throw new ApiError('GET widgets: 404', 404);
    if (!this.allowed.has('list')) throw this.forbidden('list');
    return { metadata: { resourceVersion: '1' }, items: [] };
  }

  async *watch<T extends KubeObject>(): AsyncGenerator<RawWatchEvent<T>, void, undefined> {
    this.calls.push('watch');
    if (!this.allowed.has('watch')) throw this.forbidden('watch');
    yield* [];
  }
}

function gateOn(api: FakeApi, clock: VirtualClock) {
  const captured = capturedLogger('info');
  const gate = new AccessGate({
    client: api,
    resource: WIDGETS,
    remedies: { NotServed: 'install the CRD widgets.example.com: kubectl apply -f crd/', Forbidden: 'kubectl apply -f rbac/' },
    logger: captured.logger,
    scheduler: clock,
    recheckMs: 1000,
  });
  const lines = (msg: string) => captured.lines().filter((line) => line.msg === msg);
  return { gate, lines };
}

/** An API that serves widgets.example.com/v1 and allows list and watch but the verbs `denied`. */
function servingWidgets(...denied: ('list' | 'watch')[]): FakeApi {
  const api = new FakeApi();
  api.served.set('example.com/v1', ['widgets']);
  for (const verb of denied) api.allowed.delete(verb);
  return api;
}

/** A gate over `api` on its own virtual clock, started, its first check answered. */
async function checkedGate(api: FakeApi): Promise<ReturnType<typeof gateOn> & { clock: VirtualClock }> {
  const clock = new VirtualClock();
  const { gate, lines } = gateOn(api, clock);
  gate.start();
  clock.advance(0);
  await settle(30);
  return { clock, gate, lines };
}

/** Starts a list through the gate and records when (and how) it ends. */
function listThrough(gate: AccessGate, signal?: AbortSignal): { outcome: () => string } {
  let outcome = 'pending';
  gate.client.list(WIDGETS, {}, signal).then(
    (list) => {
      outcome = `listed ${list.items.length}`;
    },
    (error: unknown) => {
      outcome = `failed ${(error as ApiError).statusCode}`;
    },
  );
  return { outcome: () => outcome };
}

test('requests wait for the first discovery answer, then go straight through while the resource is served', async (t) => {
  const api = servingWidgets();
  const clock = new VirtualClock();
  const { gate, lines } = gateOn(api, clock);
  const first = listThrough(gate);
  await settle();
  t.is(first.outcome(), 'pending', 'nothing is sent before start()');
  t.deepEqual(api.calls, []);
  gate.start();
  clock.advance(0);
  await settle(30);
  t.is(first.outcome(), 'listed 0');
  t.deepEqual(api.calls, ['discovery /apis/example.com/v1', 'list']);
  const second = listThrough(gate);
  await settle();
  t.is(second.outcome(), 'listed 0');
  t.deepEqual(api.calls.slice(2), ['list'], 'no discovery and no review while all is well');
  t.true(gate.open);
  t.is(gate.reason, undefined);
  t.is(lines('api.unavailable').length + lines('api.available').length, 0);
  gate.stop();
});

test('a resource not served: one error line naming it and its remedy, requests wait and are re-checked, and let through once it is served', async (t) => {
  const api = new FakeApi();
  const { clock, gate, lines } = await checkedGate(api);
  const waiting = listThrough(gate);
  for (let period = 0; period < 3; period += 1) {
    clock.advance(1000);
    await settle(30);
  }
  t.is(waiting.outcome(), 'pending');
  t.false(api.calls.includes('list'), 'a waiting request is not sent');
  t.is(api.calls.filter((call) => call === 'discovery /apis/example.com/v1').length, 4, 'a check at start, then one per period');
  t.is(
    gate.reason,
    'widgets.example.com is not served: the API server has no API group example.com; fix: install the CRD widgets.example.com: kubectl apply -f crd/',
  );
  const errors = lines('api.unavailable');
  t.is(errors.length, 1, 'a lasting problem is logged once');
  t.like(errors[0], {
    level: 50,
    resource: 'widgets.example.com',
    reason: 'NotServed',
    problem: 'widgets.example.com is not served: the API server has no API group example.com',
    fix: 'install the CRD widgets.example.com: kubectl apply -f crd/',
  });

  api.served.set('example.com/v2', ['widgets']);
  clock.advance(1000);
  await settle(30);
  t.is(
    gate.reason,
    'widgets.example.com is not served in example.com/v1: the API server serves example.com/v2 only; fix: install the CRD widgets.example.com: kubectl apply -f crd/',
  );
  t.is(lines('api.unavailable').length, 2, 'a different problem is a new line');

  api.served.set('example.com/v1', ['widgets']);
  clock.advance(1000);
  await settle(30);
  t.is(waiting.outcome(), 'listed 0');
  t.is(gate.reason, undefined);
  t.like(lines('api.available')[0], { level: 30, resource: 'widgets.example.com', was: 'NotServed' });
  const checks = api.calls.length;
  clock.advance(10_000);
  await settle(30);
  t.is(api.calls.length, checks, 'no check once it is served');
  gate.stop();
});

test('a 404 while running (the CRD deleted) closes the gate and asks discovery at once', async (t) => {
  const api = servingWidgets();
  const { clock, gate, lines } = await checkedGate(api);
  api.served.delete('example.com/v1');
  const failed = listThrough(gate);
  await settle(30);
  t.is(failed.outcome(), 'failed 404', 'the request that met the 404 fails as before: the watcher retries it');
  clock.advance(0);
  await settle(30);
  t.deepEqual(api.calls, ['discovery /apis/example.com/v1', 'list', 'discovery /apis/example.com/v1', 'discovery /apis/example.com']);
  t.is(lines('api.unavailable').length, 1);
  const retried = listThrough(gate);
  await settle(30);
  t.is(retried.outcome(), 'pending', 'the retry waits at the gate');
  gate.stop();
});

test('a 403 on the list names the missing permission in the API server words, and the access review opens the gate once it is granted', async (t) => {
  const api = servingWidgets('list');
  const { clock, gate, lines } = await checkedGate(api);
  const failed = listThrough(gate);
  await settle(30);
  t.is(failed.outcome(), 'failed 403');
  const problem =
    'missing RBAC permission: list widgets.example.com (all namespaces) (the API server said: widgets.example.com is forbidden: User "system:serviceaccount:ns:op" cannot list resource "widgets" in API group "example.com" at the cluster scope)';
  t.is(gate.reason, `${problem}; fix: kubectl apply -f rbac/`);
  t.like(lines('api.unavailable')[0], { reason: 'Forbidden', permission: 'list widgets.example.com (all namespaces)', problem });
  t.false(
    api.calls.some((call) => call.startsWith('review')),
    'the 403 itself is the detector: no review before it',
  );

  const waiting = listThrough(gate);
  clock.advance(1000);
  await settle(30);
  clock.advance(1000);
  await settle(30);
  t.is(waiting.outcome(), 'pending');
  t.is(api.calls.filter((call) => call === 'list').length, 1, 'waiting requests are not sent');
  t.is(api.calls.filter((call) => call === 'review list').length, 2, 'one review per period');
  t.is(gate.reason, `${problem}; fix: kubectl apply -f rbac/`, 'the server words stay while the same permission is missing');
  t.is(lines('api.unavailable').length, 1);

  api.allowed.add('list');
  clock.advance(1000);
  await settle(30);
  t.is(waiting.outcome(), 'listed 0');
  t.like(lines('api.available')[0], { was: 'Forbidden' });
  gate.stop();
});

test('a 403 on the watch is reported with the watch verb, and a waiting watch ends quietly when its request is aborted', async (t) => {
  const api = servingWidgets('watch');
  const { gate } = await checkedGate(api);
  await t.throwsAsync(async () => {
    for await (const _ of gate.client.watch(WIDGETS)) t.fail('no event expected');
  });
  t.is(gate.problem?.permission, 'watch widgets.example.com (all namespaces)');
  const abort = new AbortController();
  let ended = false;
  const consumed = (async () => {
    for await (const _ of gate.client.watch(WIDGETS, {}, abort.signal)) t.fail('no event expected');
    ended = true;
  })();
  await settle(30);
  t.false(ended, 'waiting');
  abort.abort();
  await consumed;
  t.true(ended);
  const aborted = new AbortController();
  const list = listThrough(gate, aborted.signal);
  aborted.abort();
  await settle();
  t.is(list.outcome(), 'failed 0', 'a waiting list rejects when aborted');
  gate.stop();
});

test('when the access review cannot answer, the gate opens on trial and a repeated 403 is not logged twice', async (t) => {
  const api = servingWidgets('list');
  api.reviews = false;
  const { clock, gate, lines } = await checkedGate(api);
  t.is(listThrough(gate).outcome(), 'pending');
  await settle(30);
  clock.advance(1000);
  await settle(30);
  t.true(gate.open, 'on trial');
  await settle(30);
  t.is(listThrough(gate).outcome(), 'pending');
  await settle(30);
  t.is(api.calls.filter((call) => call === 'list').length, 2, 'the trial request is sent');
  t.false(gate.open, 'and its 403 closes the gate again');
  t.is(lines('api.unavailable').length, 1);
  t.is(lines('api.available').length, 0);
  gate.stop();
});

test('close() cancels the re-checks', async (t) => {
  const api = new FakeApi();
  const { clock, gate } = await checkedGate(api);
  const calls = api.calls.length;
  gate.stop();
  clock.advance(10_000);
  await settle(30);
  t.is(api.calls.length, calls);
  t.is(clock.actions.filter((action) => !action.closed).length, 0, 'no timer left');
});

test('problems: the conclusion of each check, a problem or undefined once open; complete on close()', async (t) => {
  const api = new FakeApi();
  const clock = new VirtualClock();
  const { gate } = gateOn(api, clock);
  const seen: (string | undefined)[] = [];
  let completed = false;
  gate.problems.subscribe({ next: (problem) => seen.push(problem?.reason), complete: () => (completed = true) });
  gate.start();
  clock.advance(0);
  await settle(30);
  t.deepEqual(seen, ['NotServed']);
  api.served.set('example.com/v1', ['widgets']);
  clock.advance(1000);
  await settle(30);
  t.deepEqual(seen, ['NotServed', undefined]);
  gate.stop();
  t.true(completed);
});
