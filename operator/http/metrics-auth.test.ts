// Tests of MetricsAuth over a scripted review API: 401, 403, 429, 500 and 200, the cache's lifetimes, and the reviews in flight.
import test from 'ava';
import { pino } from 'pino';
import { settle } from '../../test/support/virtual-time.js';
import { type AccessVerdict, MetricsAuth, type ReviewApi, reviewApi, type TokenVerdict, type UserInfo } from './metrics-auth.js';

const READER: UserInfo = {
  username: 'system:serviceaccount:monitoring:prometheus',
  uid: 'u-1',
  groups: ['system:authenticated'],
  extra: {},
};

/** A review API answering from tables, counting its calls, and failing when told. */
class ScriptedReviews implements ReviewApi {
  tokenCalls = 0;
  accessCalls = 0;
  failing = false;
  readonly users = new Map<string, UserInfo>([['good', READER]]);
  readonly allowed = new Set<string>([READER.username]);
  gate: Promise<void> | undefined;
  /** TokenReviews sent and not answered yet, and the most there were at once. */
  open = 0;
  peak = 0;

  async reviewToken(token: string): Promise<TokenVerdict> {
    this.tokenCalls += 1;
    this.open += 1;
    this.peak = Math.max(this.peak, this.open);
    try {
      await this.gate;
    } finally {
      this.open -= 1;
    }
    if (this.failing) throw new Error('POST tokenreviews: 403 forbidden');
    const user = this.users.get(token);
    return user ? { authenticated: true, user } : { authenticated: false };
  }

  async reviewAccess(user: UserInfo, path: string, verb: string): Promise<AccessVerdict> {
    this.accessCalls += 1;
    if (this.failing) throw new Error('POST subjectaccessreviews: 500');
    return { allowed: this.allowed.has(user.username) && path === '/metrics' && verb === 'get' };
  }
}

function setup(): { reviews: ScriptedReviews; auth: MetricsAuth; clock: { now: number }; lines: string[] } {
  const reviews = new ScriptedReviews();
  const clock = { now: 0 };
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
  return { reviews, auth: new MetricsAuth({ api: reviews, now: () => clock.now, logger }), clock, lines };
}

test('no Authorization header, or one that is not a bearer token, is 401 without asking the API server', async (t) => {
  const { reviews, auth } = setup();
  t.deepEqual(await auth.decide(undefined, 'GET', '/metrics'), { status: 401, message: 'Unauthorized' });
  t.deepEqual(await auth.decide('Basic dXNlcjpwdw==', 'GET', '/metrics'), { status: 401, message: 'Unauthorized' });
  t.deepEqual(await auth.decide('Bearer ', 'GET', '/metrics'), { status: 401, message: 'Unauthorized' });
  t.is(reviews.tokenCalls, 0);
});

test('a token the API server does not authenticate is 401', async (t) => {
  const { reviews, auth } = setup();
  t.deepEqual(await auth.decide('Bearer forged', 'GET', '/metrics'), { status: 401, message: 'Unauthorized' });
  t.is(reviews.tokenCalls, 1);
  t.is(reviews.accessCalls, 0);
});

test('an authenticated user without the permission is 403; with it, 200', async (t) => {
  const { reviews, auth } = setup();
  reviews.users.set('nobody', { username: 'system:serviceaccount:default:nobody', groups: ['system:authenticated'] });
  t.deepEqual(await auth.decide('Bearer nobody', 'GET', '/metrics'), {
    status: 403,
    message: 'Authorization denied for user system:serviceaccount:default:nobody',
  });
  t.deepEqual(await auth.decide('Bearer good', 'GET', '/metrics'), { status: 200, user: READER.username });
  t.deepEqual(await auth.decide('Bearer good', 'POST', '/metrics'), {
    status: 403,
    message: `Authorization denied for user ${READER.username}`,
  });
});

test('answers are reused: a token for 1 min, an allow for 5 min, a deny for 30 s (controller-runtime’s lifetimes)', async (t) => {
  const { reviews, auth, clock } = setup();
  reviews.users.set('nobody', { username: 'nobody' });
  await auth.decide('Bearer good', 'GET', '/metrics');
  await auth.decide('Bearer nobody', 'GET', '/metrics');
  t.deepEqual([reviews.tokenCalls, reviews.accessCalls], [2, 2]);
  clock.now = 29_999;
  await auth.decide('Bearer good', 'GET', '/metrics');
  await auth.decide('Bearer nobody', 'GET', '/metrics');
  t.deepEqual([reviews.tokenCalls, reviews.accessCalls], [2, 2], 'everything cached');
  clock.now = 30_000;
  t.is((await auth.decide('Bearer nobody', 'GET', '/metrics')).status, 403);
  t.deepEqual([reviews.tokenCalls, reviews.accessCalls], [2, 3], 'the deny expired after 30 s');
  clock.now = 60_000;
  await auth.decide('Bearer good', 'GET', '/metrics');
  t.deepEqual([reviews.tokenCalls, reviews.accessCalls], [3, 3], 'the token expired after 1 min, the allow did not');
  clock.now = 300_000;
  await auth.decide('Bearer good', 'GET', '/metrics');
  t.deepEqual([reviews.tokenCalls, reviews.accessCalls], [4, 4], 'the allow expired after 5 min');
});

test('a revoked permission is noticed once the allow expires', async (t) => {
  const { reviews, auth, clock } = setup();
  t.is((await auth.decide('Bearer good', 'GET', '/metrics')).status, 200);
  reviews.allowed.clear();
  clock.now = 299_999;
  reviews.users.set('good', READER);
  t.is((await auth.decide('Bearer good', 'GET', '/metrics')).status, 200, 'still cached');
  clock.now = 300_000;
  t.is((await auth.decide('Bearer good', 'GET', '/metrics')).status, 403);
});

test('a review the API server cannot answer is 500, logged without the token, and not cached', async (t) => {
  const { reviews, auth, lines } = setup();
  const token = 'tok-5f2c9e81d7a4';
  reviews.users.set(token, READER);
  reviews.failing = true;
  t.deepEqual(await auth.decide(`Bearer ${token}`, 'GET', '/metrics'), { status: 500, message: 'Authentication failed' });
  reviews.failing = false;
  t.is((await auth.decide(`Bearer ${token}`, 'GET', '/metrics')).status, 200, 'the failure was not cached');
  t.true(lines.some((line) => line.includes('metrics.authentication.failed')));
  t.false(lines.join('').includes(token), 'no token in the logs');
});

test('an authorization the API server cannot answer is 500 naming the user', async (t) => {
  const { reviews, auth } = setup();
  await auth.decide('Bearer good', 'GET', '/metrics');
  reviews.failing = true;
  t.deepEqual(await auth.decide('Bearer good', 'GET', '/other'), {
    status: 500,
    message: `Authorization for user ${READER.username} failed`,
  });
});

test('concurrent requests with one token share one TokenReview in flight', async (t) => {
  const { reviews, auth } = setup();
  let open!: () => void;
  reviews.gate = new Promise((resolve) => {
    open = resolve;
  });
  const decisions = Array.from({ length: 20 }, () => auth.decide('Bearer good', 'GET', '/metrics'));
  open();
  t.true((await Promise.all(decisions)).every((decision) => decision.status === 200));
  t.is(reviews.tokenCalls, 1);
  t.is(reviews.accessCalls, 1);
});

test('a flood of distinct bad tokens stays within the cache bound', async (t) => {
  const reviews = new ScriptedReviews();
  const auth = new MetricsAuth({ api: reviews, maxEntries: 16 });
  for (let index = 0; index < 200; index += 1) await auth.decide(`Bearer bad-${index}`, 'GET', '/metrics');
  t.is((auth as unknown as { tokens: { size: number } }).tokens.size, 16);
});

test('a flood of distinct bad tokens keeps at most N reviews in flight, the rest answered 429 at once; a good token passes after', async (t) => {
  const reviews = new ScriptedReviews();
  let open!: () => void;
  reviews.gate = new Promise((resolve) => {
    open = resolve;
  });
  const auth = new MetricsAuth({ api: reviews, maxReviewsInFlight: 4 });
  const flood = Array.from({ length: 100 }, (_, index) => auth.decide(`Bearer bad-${index}`, 'GET', '/metrics'));
  const answered = new Set<number>();
  for (const [index, decision] of flood.entries()) void decision.then(() => answered.add(index));
  await settle();
  t.true(reviews.peak <= 4, `${reviews.peak} TokenReviews in flight at once`);
  t.is(answered.size, 96, 'the excess is answered at once, while the reviews in flight still wait: nothing queues');
  open();
  const decisions = await Promise.all(flood);
  t.is(reviews.tokenCalls, 4);
  t.deepEqual(
    decisions.slice(0, 4).map((decision) => decision.status),
    [401, 401, 401, 401],
  );
  t.deepEqual(
    [...new Set(decisions.slice(4).map((decision) => JSON.stringify(decision)))],
    [JSON.stringify({ status: 429, message: 'Too many authentication reviews in flight', retryAfterSeconds: 1 })],
  );
  t.like(await auth.decide('Bearer good', 'GET', '/metrics'), { status: 200 });
});

test('reviewApi sends a TokenReview and a SubjectAccessReview with the user, groups, uid, extra and the non-resource attributes', async (t) => {
  const sent: { resource: string; body: unknown }[] = [];
  const api = reviewApi({
    create: async (resource, _namespace, body) => {
      sent.push({ resource: resource.plural, body });
      return (
        resource.plural === 'tokenreviews'
          ? { ...body, status: { authenticated: true, user: { username: 'jane', uid: 'u', groups: ['g'], extra: { scopes: ['a'] } } } }
          : { ...body, status: { allowed: true, reason: 'RBAC: allowed' } }
      ) as typeof body;
    },
  });
  const verdict = await api.reviewToken('t0k3n');
  t.deepEqual(verdict, { authenticated: true, user: { username: 'jane', uid: 'u', groups: ['g'], extra: { scopes: ['a'] } } });
  t.deepEqual(await api.reviewAccess({ username: 'jane', uid: 'u', groups: ['g'], extra: { scopes: ['a'] } }, '/metrics', 'get'), {
    allowed: true,
    reason: 'RBAC: allowed',
  });
  t.deepEqual(sent, [
    {
      resource: 'tokenreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token: 't0k3n' } },
    },
    {
      resource: 'subjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: { user: 'jane', uid: 'u', groups: ['g'], extra: { scopes: ['a'] }, nonResourceAttributes: { path: '/metrics', verb: 'get' } },
      },
    },
  ]);
});

test('reviewApi: unauthenticated, or an allowed answer that also says denied, count as no', async (t) => {
  const api = reviewApi({
    create: async (resource, _namespace, body) =>
      (resource.plural === 'tokenreviews'
        ? { ...body, status: { user: {}, error: 'invalid bearer token' } }
        : { ...body, status: { allowed: true, denied: true } }) as typeof body,
  });
  t.deepEqual(await api.reviewToken('x'), { authenticated: false });
  t.deepEqual(await api.reviewAccess({ username: 'x' }, '/metrics', 'get'), { allowed: false, reason: undefined });
});
