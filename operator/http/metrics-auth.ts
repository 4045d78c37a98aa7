// Who may read /metrics: each request's bearer token authenticated by a TokenReview and the request authorized by a
// SubjectAccessReview, as controller-runtime's secure metrics (filters.WithAuthenticationAndAuthorization) do.
import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Resource } from '../kube/resources.js';
import { TtlCache } from './ttl-cache.js';

/** The API server's review resources (cluster-scoped, create only). */
export const TOKEN_REVIEWS: Resource = {
  group: 'authentication.k8s.io',
  version: 'v1',
  plural: 'tokenreviews',
  kind: 'TokenReview',
  namespaced: false,
};
export const SUBJECT_ACCESS_REVIEWS: Resource = {
  group: 'authorization.k8s.io',
  version: 'v1',
  plural: 'subjectaccessreviews',
  kind: 'SubjectAccessReview',
  namespaced: false,
};

/** A user as a TokenReview answers it, and as a SubjectAccessReview asks about it. */
export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** What the API server says of a token: who it is, or that it is not valid. */
export type TokenVerdict = { readonly authenticated: true; readonly user: UserInfo } | { readonly authenticated: false };

/** What the API server says of a request: allowed or not, and why. */
export interface AccessVerdict {
  readonly allowed: boolean;
  readonly reason?: string;
}

/** The two questions metrics auth asks the API server. Rejects when the API server cannot answer. */
export interface ReviewApi {
  /** A TokenReview of `token` (no audiences: the API server's own). */
  reviewToken(token: string): Promise<TokenVerdict>;
  /** A SubjectAccessReview of `verb` on the non-resource URL `path` for `user`. */
  reviewAccess(user: UserInfo, path: string, verb: string): Promise<AccessVerdict>;
}

/** A review object as sent and answered. */
interface Review {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: Record<string, never>;
  readonly spec: Record<string, unknown>;
  readonly status?: {
    readonly authenticated?: boolean;
    readonly user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    readonly allowed?: boolean;
    readonly denied?: boolean;
    readonly reason?: string;
  };
}

/** The slice of the API client the reviews need: one create (the operator's KubeClient fits). */
export interface ReviewClient {
  create<T extends Review>(resource: Resource, namespace: undefined, body: T): Promise<T>;
}

/** The reviews over an API client. Needs `create` on tokenreviews and subjectaccessreviews (infra/permissions.ts). */
export function reviewApi(client: ReviewClient): ReviewApi {
  return {
    async reviewToken(token) {
      const answer = await client.create<Review>(TOKEN_REVIEWS, undefined, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        metadata: {},
        spec: { token },
      });
      const user = answer.status?.user;
      return answer.status?.authenticated === true && user?.username
        ? {
            authenticated: true,
            user: { username: user.username, uid: user.uid, groups: user.groups ?? [], extra: user.extra ?? {} },
          }
        : { authenticated: false };
    },
    async reviewAccess(user, path, verb) {
      const answer = await client.create<Review>(SUBJECT_ACCESS_REVIEWS, undefined, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: {
          user: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          groups: [...(user.groups ?? [])],
          extra: { ...user.extra },
          nonResourceAttributes: { path, verb },
        },
      });
      return { allowed: answer.status?.allowed === true && answer.status.denied !== true, reason: answer.status?.reason };
    },
  };
}

/** The answer to one request: 200 lets it through; the others carry the text to answer with (and 429 when to retry). */
export type AuthDecision =
  | { readonly status: 200; readonly user: string }
  | { readonly status: 401 | 403 | 500; readonly message: string }
  | { readonly status: 429; readonly message: string; readonly retryAfterSeconds: number };

/** What a request is told when the reviews in flight are at their bound, as kube-apiserver's max-in-flight filter tells it. */
const TOO_MANY: AuthDecision = { status: 429, message: 'Too many authentication reviews in flight', retryAfterSeconds: 1 };

/** Thrown by {@link MetricsAuth}'s cache when a new review would pass the bound: answered 429, not logged as a failure. */
class TooManyReviews extends Error {}

/** Options of {@link MetricsAuth}. */
export interface MetricsAuthOptions {
  readonly api: ReviewApi;
  /** @default a silent logger */
  readonly logger?: Logger;
  /** The clock of the caches, in milliseconds. @default Date.now */
  readonly now?: () => number;
  /** How long a TokenReview answer, valid or not, is reused. @default 60_000 (controller-runtime's CacheTTL) */
  readonly tokenTtlMs?: number;
  /** How long an allowed SubjectAccessReview is reused. @default 300_000 (controller-runtime's AllowCacheTTL) */
  readonly allowTtlMs?: number;
  /** How long a denied SubjectAccessReview is reused. @default 30_000 (controller-runtime's DenyCacheTTL) */
  readonly denyTtlMs?: number;
  /** The most answers each cache holds. @default 1024 */
  readonly maxEntries?: number;
  /**
   * The most reviews (TokenReviews and SubjectAccessReviews) in flight at once. Each distinct token costs a review
   * under the operator's own identity, so a flood of made-up tokens could otherwise get the operator's requests
   * throttled by the API server's priority and fairness; past the bound a request is answered 429 at once, never
   * queued. A scraper's request with a cached or already-asked token or subject is not counted. @default 8
   */
  readonly maxReviewsInFlight?: number;
}

/**
 * Decides each /metrics request: no bearer token, or one the API server does not authenticate, is 401; a user the
 * API server does not allow `get` on the path is 403; a review the API server cannot answer (unreachable, or the
 * operator lacks the create grant on the review) is 500, and is not cached. Answers are cached in bounded caches
 * for a short while (tokens by an HMAC under a per-process random key, so no token is kept), and concurrent
 * requests with the same token or subject share one review in flight. At most `maxReviewsInFlight` reviews are in
 * flight at once: a request that needs another is 429 at once. Tokens never reach the logs.
 */
export class MetricsAuth {
  private readonly log: Logger | undefined;
  private readonly tokenKey = randomBytes(32);
  private readonly tokens: TtlCache<string, TokenVerdict>;
  private readonly access: TtlCache<string, AccessVerdict>;
  private readonly inFlight = new Map<string, Promise<TokenVerdict | AccessVerdict>>();
  private readonly tokenTtlMs: number;
  private readonly allowTtlMs: number;
  private readonly denyTtlMs: number;
  private readonly maxReviewsInFlight: number;

  constructor(private readonly options: MetricsAuthOptions) {
    this.log = options.logger;
    const bound = { maxEntries: options.maxEntries ?? 1024, now: options.now };
    this.tokens = new TtlCache(bound);
    this.access = new TtlCache(bound);
    this.tokenTtlMs = options.tokenTtlMs ?? 60_000;
    this.allowTtlMs = options.allowTtlMs ?? 300_000;
    this.denyTtlMs = options.denyTtlMs ?? 30_000;
    this.maxReviewsInFlight = options.maxReviewsInFlight ?? 8;
  }

  /** Authenticates the `Authorization` header, then authorizes `method` (as a lower-case verb) on `path`. */
  async decide(authorization: string | undefined, method: string, path: string): Promise<AuthDecision> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) return { status: 401, message: 'Unauthorized' };
    const token = match[1]!;
    let identity: TokenVerdict;
    try {
      identity = await this.cached(
        `token:${createHmac('sha256', this.tokenKey).update(token).digest('hex')}`,
        this.tokens,
        () => this.options.api.reviewToken(token),
        () => this.tokenTtlMs,
      );
    } catch (error) {
      if (error instanceof TooManyReviews) return TOO_MANY;
      this.log?.error({ err: { message: (error as Error).message } }, 'metrics.authentication.failed');
      return { status: 500, message: 'Authentication failed' };
    }
    if (!identity.authenticated) {
      this.log?.debug({ path }, 'metrics.unauthenticated');
      return { status: 401, message: 'Unauthorized' };
    }
    const { user } = identity;
    const verb = method.toLowerCase();
    let verdict: AccessVerdict;
    try {
      verdict = await this.cached(
        `access:${JSON.stringify([user.username, user.uid ?? '', [...(user.groups ?? [])].sort(), sortedExtra(user.extra), path, verb])}`,
        this.access,
        () => this.options.api.reviewAccess(user, path, verb),
        (answer) => (answer.allowed ? this.allowTtlMs : this.denyTtlMs),
      );
    } catch (error) {
      if (error instanceof TooManyReviews) return TOO_MANY;
      this.log?.error({ user: user.username, err: { message: (error as Error).message } }, 'metrics.authorization.failed');
      return { status: 500, message: `Authorization for user ${user.username} failed` };
    }
    if (!verdict.allowed) {
      this.log?.debug({ user: user.username, path, verb, reason: verdict.reason }, 'metrics.forbidden');
      return { status: 403, message: `Authorization denied for user ${user.username}` };
    }
    return { status: 200, user: user.username };
  }

  /**
   * The cached answer of `key`, or the one in flight, or a new review whose answer is cached for `ttl(answer)`;
   * rejects with {@link TooManyReviews} when a new review would pass `maxReviewsInFlight`.
   */
  private async cached<V extends TokenVerdict | AccessVerdict>(
    key: string,
    cache: TtlCache<string, V>,
    review: () => Promise<V>,
    ttl: (answer: V) => number,
  ): Promise<V> {
    const hit = cache.get(key);
    if (hit) return hit;
    const pending = this.inFlight.get(key) as Promise<V> | undefined;
    if (pending !== undefined) return pending;
    if (this.inFlight.size >= this.maxReviewsInFlight) {
      this.log?.debug({ inFlight: this.inFlight.size }, 'metrics.review.throttled');
      throw new TooManyReviews();
    }
    const asked = review().then(
      (answer) => {
        this.inFlight.delete(key);
        cache.set(key, answer, ttl(answer));
        return answer;
      },
      (error: unknown) => {
        this.inFlight.delete(key);
        throw error;
      },
    );
    this.inFlight.set(key, asked);
    return asked;
  }
}

function sortedExtra(extra: UserInfo['extra']): [string, string[]][] {
  return Object.entries(extra ?? {})
    .map(([key, values]): [string, string[]] => [key, [...values].sort()])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
