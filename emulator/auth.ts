// Authentication: the admin bearer token, ServiceAccount tokens (signed JWTs, TokenRequest), and extra user tokens.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { UserInfo } from './authz.js';

export const issuer = 'https://kubernetes.default.svc.cluster.local';

export interface ServiceAccountClaims {
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
  readonly exp?: number;
  /** The token's id; a TokenRequest token has one, and authenticates with it as its credential id. */
  readonly jti?: string;
}

/** Looks a ServiceAccount up by namespace and name, returning its uid when it exists. */
export type ServiceAccountLookup = (namespace: string, name: string) => string | undefined;

export function serviceAccountUser(namespace: string, name: string, uid?: string): UserInfo {
  return {
    username: `system:serviceaccount:${namespace}:${name}`,
    uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
}

export const adminUser: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

/** Who a request without credentials is, when anonymous authentication is on (the apiserver's default). */
export const anonymousUser: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export class Authenticator {
  readonly adminToken = randomBytes(24).toString('hex');
  private readonly key = randomBytes(32);
  private readonly users = new Map<string, UserInfo>();

  constructor(
    private readonly lookupServiceAccount: ServiceAccountLookup,
    private readonly anonymous: boolean,
  ) {}

  private sign(data: string): string {
    return createHmac('sha256', this.key).update(data).digest('base64url');
  }

  /** A ServiceAccount token (a JWT signed by the emulator). Without `uid` it stays valid while an SA of that name exists. */
  serviceAccountToken(claims: ServiceAccountClaims, audiences: readonly string[] = [issuer], now = Date.now()): string {
    const header = b64({ alg: 'HS256', typ: 'JWT' });
    const iat = Math.floor(now / 1000);
    const payload = b64({
      aud: audiences,
      exp: claims.exp,
      iat,
      iss: issuer,
      ...(claims.jti ? { jti: claims.jti } : {}),
      'kubernetes.io': {
        namespace: claims.namespace,
        serviceaccount: claims.uid ? { name: claims.name, uid: claims.uid } : { name: claims.name },
      },
      nbf: iat,
      sub: `system:serviceaccount:${claims.namespace}:${claims.name}`,
    });
    return `${header}.${payload}.${this.sign(`${header}.${payload}`)}`;
  }

  /** Registers a static token for an arbitrary user (tests of RBAC for users and groups). */
  userToken(user: UserInfo): string {
    const token = randomBytes(24).toString('hex');
    this.users.set(token, { ...user, groups: [...new Set([...user.groups, 'system:authenticated'])] });
    return token;
  }

  /** The identity of an Authorization header: anonymous without one (if enabled), undefined (401) when invalid. */
  authenticate(authorization: string | undefined, now = Date.now()): UserInfo | undefined {
    if (authorization === undefined || authorization === '') return this.anonymous ? anonymousUser : undefined;
    if (!authorization.startsWith('Bearer ')) return undefined;
    const token = authorization.slice('Bearer '.length).trim();
    if (token.length === this.adminToken.length && timingSafeEqual(Buffer.from(token), Buffer.from(this.adminToken))) return adminUser;
    const user = this.users.get(token);
    if (user !== undefined) return user;
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const expected = this.sign(`${parts[0]}.${parts[1]}`);
    if (expected.length !== parts[2].length || !timingSafeEqual(Buffer.from(expected), Buffer.from(parts[2]))) return undefined;
    let payload: { exp?: number; jti?: string; 'kubernetes.io'?: { namespace: string; serviceaccount: { name: string; uid?: string } } };
    try {
      payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (payload.exp !== undefined && payload.exp * 1000 < now) return undefined;
    const sa = payload['kubernetes.io'];
    if (sa === undefined) return undefined;
    const uid = this.lookupServiceAccount(sa.namespace, sa.serviceaccount.name);
    if (uid === undefined || (sa.serviceaccount.uid !== undefined && sa.serviceaccount.uid !== uid)) return undefined;
    const account = serviceAccountUser(sa.namespace, sa.serviceaccount.name, uid);
    return payload.jti ? { ...account, extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${payload.jti}`] } } : account;
  }

  /**
   * The `status.error` of a TokenReview of a token that does not authenticate, as the apiserver words the two common
   * cases: a token that is not a JWT, and a JWT whose signature does not verify. Other failures (expired, unknown
   * ServiceAccount) get the first wording (a known divergence).
   */
  tokenReviewError(token: string): string {
    const parts = token.split('.');
    if (parts.length !== 3) return 'invalid bearer token';
    const expected = this.sign(`${parts[0]}.${parts[1]}`);
    const signed = expected.length === parts[2].length && timingSafeEqual(Buffer.from(expected), Buffer.from(parts[2]));
    return signed ? 'invalid bearer token' : '[invalid bearer token, go-jose/go-jose: error in cryptographic primitive]';
  }
}
