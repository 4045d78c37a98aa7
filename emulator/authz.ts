// Identities and authorization attributes shared by authentication, RBAC and admission.

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  /** Extra attributes (a bound ServiceAccount token's `authentication.kubernetes.io/credential-id`). */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** What a request asks to do (authorizer.AttributesRecord). */
export interface Attributes {
  readonly user: UserInfo;
  readonly verb: string;
  readonly resourceRequest: boolean;
  readonly namespace: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  /** The URL path, for non-resource requests. */
  readonly path: string;
}

/** The attributes of a request for a URL path that names no resource (`/healthz`, `/metrics`, discovery). */
export function nonResourceAttributes(user: UserInfo, verb: string, path: string): Attributes {
  return {
    user,
    verb,
    resourceRequest: false,
    namespace: '',
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    name: '',
    path,
  };
}

export interface Decision {
  readonly allowed: boolean;
  /** Why, as the RBAC authorizer phrases it (empty when denied without a reason). */
  readonly reason: string;
}

export type Authorizer = (attributes: Attributes) => Decision;
