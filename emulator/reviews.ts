// Create-only "review" resources answered from the authorizer and authenticator (SelfSubjectAccessReview,
// SubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview, TokenReview) and the TokenRequest subresource.
import { randomUUID } from 'node:crypto';
import { type Attributes, nonResourceAttributes, type UserInfo } from './authz.js';
import { type Authenticator, issuer } from './auth.js';
import { badRequest } from './errors.js';
import { isObject, type KubeObject, timestamp } from './object.js';
import type { RbacAuthorizer } from './rbac.js';
import type { ResourceType } from './resources.js';
import { FieldSet } from './fieldset.js';
import { encodeManagedFields, updateManagedFields } from './managedfields.js';
import { builtinType, zeroValue } from './openapi/builtin.js';
import { metadataFieldGetters } from './selectors.js';
import { defaultColumns } from './table.js';
import { anyNode } from './typeschema.js';

type Obj = Record<string, any>;

function reviewType(group: string, resource: string, kind: string, namespaced = false): ResourceType {
  return {
    group,
    version: 'v1',
    resource,
    kind,
    listKind: `${kind}List`,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ['create'],
    subresources: [],
    storage: `${group}/${resource}`,
    nameRule: 'dns1123-subdomain',
    statusPolicy: 'none',
    generation: 'none',
    fieldGetters: metadataFieldGetters,
    fieldSelectorStyle: 'known',
    createOnUpdate: false,
    unconditionalUpdate: true,
    strategicMerge: true,
    schema: () => anyNode,
    columns: () => defaultColumns,
    prune: () => [],
  };
}

export function reviewResources(): ResourceType[] {
  return [
    reviewType('authentication.k8s.io', 'selfsubjectreviews', 'SelfSubjectReview'),
    reviewType('authentication.k8s.io', 'tokenreviews', 'TokenReview'),
    reviewType('authorization.k8s.io', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true),
    reviewType('authorization.k8s.io', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview'),
    reviewType('authorization.k8s.io', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview'),
    reviewType('authorization.k8s.io', 'subjectaccessreviews', 'SubjectAccessReview'),
  ];
}

function attributesOf(spec: Obj, user: UserInfo): Attributes {
  if (isObject(spec.resourceAttributes)) {
    const r = spec.resourceAttributes as Obj;
    return {
      user,
      verb: r.verb ?? '',
      resourceRequest: true,
      namespace: r.namespace ?? '',
      apiGroup: r.group ?? '',
      apiVersion: r.version ?? '',
      resource: r.resource ?? '',
      subresource: r.subresource ?? '',
      name: r.name ?? '',
      path: '',
    };
  }
  if (isObject(spec.nonResourceAttributes)) {
    const n = spec.nonResourceAttributes as Obj;
    return nonResourceAttributes(user, n.verb ?? '', n.path ?? '');
  }
  throw badRequest('spec.resourceAttributes or spec.nonResourceAttributes is required');
}

/** The OpenAPI name of each review kind, for the managedFields of its answer. */
const reviewSchemas: Readonly<Record<string, string>> = {
  SelfSubjectReview: 'io.k8s.api.authentication.v1.SelfSubjectReview',
  TokenReview: 'io.k8s.api.authentication.v1.TokenReview',
  LocalSubjectAccessReview: 'io.k8s.api.authorization.v1.LocalSubjectAccessReview',
  SelfSubjectAccessReview: 'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
  SelfSubjectRulesReview: 'io.k8s.api.authorization.v1.SelfSubjectRulesReview',
  SubjectAccessReview: 'io.k8s.api.authorization.v1.SubjectAccessReview',
};

/** The spec as decoding into the Go type leaves it: empty strings, lists and maps dropped (every field is omitempty). */
function decodedSpec(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodedSpec);
  if (!isObject(value)) return value;
  const out: Obj = {};
  for (const [key, child] of Object.entries(value as Obj)) {
    const decoded = decodedSpec(child);
    const empty =
      decoded === undefined ||
      decoded === null ||
      decoded === '' ||
      (Array.isArray(decoded) && decoded.length === 0) ||
      (isObject(decoded) && Object.keys(decoded as Obj).length === 0);
    if (!empty) out[key] = decoded;
  }
  return out;
}

/** Who wrote the review and when: its answer's metadata.managedFields, as the create handler's field manager records. */
export interface ReviewWrite {
  readonly manager: string;
  readonly now: Date;
}

function userInfoOf(user: UserInfo): Obj {
  return {
    username: user.username,
    ...(user.uid ? { uid: user.uid } : {}),
    groups: user.groups,
    ...(user.extra && Object.keys(user.extra).length > 0 ? { extra: user.extra } : {}),
  };
}

/** Answers the review resources; `kind` is the resource's Kind. */
export function answerReview(kind: string, body: Obj, user: UserInfo, rbac: RbacAuthorizer, authn: Authenticator, write: ReviewWrite): Obj {
  const spec = decodedSpec(isObject(body.spec) ? body.spec : {}) as Obj;
  const apiVersion =
    kind.endsWith('Review') && kind !== 'TokenReview' && kind !== 'SelfSubjectReview'
      ? 'authorization.k8s.io/v1'
      : 'authentication.k8s.io/v1';
  const tracked = kind === 'SelfSubjectReview' || Object.keys(spec).length === 0 ? {} : { spec };
  const managedFields = encodeManagedFields(
    updateManagedFields(new Map(), {
      // The type's zero value, as on any create: a struct that is not a pointer (spec) exists already.
      before: zeroValue(reviewSchemas[kind] ?? '') as KubeObject,
      after: { metadata: {}, ...tracked },
      node: builtinType(reviewSchemas[kind] ?? ''),
      manager: write.manager,
      subresource: '',
      apiVersion,
      now: write.now,
      ignored: new FieldSet(),
    }),
  );
  const base = { kind, apiVersion, metadata: managedFields ? { managedFields } : {} };
  const verdict = (decision: { allowed: boolean; reason: string }): Obj =>
    decision.allowed ? { allowed: true, ...(decision.reason ? { reason: decision.reason } : {}) } : { allowed: false };
  switch (kind) {
    case 'SelfSubjectAccessReview':
      return { ...base, spec, status: verdict(rbac.authorize(attributesOf(spec, user))) };
    case 'SubjectAccessReview':
    case 'LocalSubjectAccessReview': {
      const subject: UserInfo = { username: spec.user ?? '', uid: spec.uid, groups: spec.groups ?? [], extra: spec.extra };
      return { ...base, spec, status: verdict(rbac.authorize(attributesOf(spec, subject))) };
    }
    case 'SelfSubjectRulesReview': {
      const namespace = spec.namespace ?? '';
      const rules = rbac.rulesFor(user, namespace);
      return {
        ...base,
        spec,
        status: {
          resourceRules: rules
            .filter((r) => r.resources !== undefined)
            .map((r) => ({
              verbs: r.verbs,
              apiGroups: r.apiGroups,
              resources: r.resources,
              ...(r.resourceNames ? { resourceNames: r.resourceNames } : {}),
            })),
          nonResourceRules: rules
            .filter((r) => r.nonResourceURLs !== undefined)
            .map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs })),
          incomplete: false,
        },
      };
    }
    case 'SelfSubjectReview':
      // Its REST storage stamps a creation time (the other reviews have none).
      return { ...base, metadata: { creationTimestamp: timestamp(write.now) }, status: { userInfo: userInfoOf(user) } };
    case 'TokenReview': {
      const token: string = spec.token ?? '';
      const reviewed = token === '' ? undefined : authn.authenticate(`Bearer ${token}`);
      return {
        ...base,
        spec,
        status:
          reviewed === undefined
            ? { user: {}, error: authn.tokenReviewError(token) }
            : { authenticated: true, user: userInfoOf(reviewed), audiences: spec.audiences ?? [issuer] },
      };
    }
    default:
      throw badRequest(`unsupported review ${kind}`);
  }
}

/** POST serviceaccounts/<name>/token: a TokenRequest answered with a signed token bound to the ServiceAccount's uid. */
export function tokenRequest(body: Obj, serviceAccount: KubeObject, authn: Authenticator, now: Date): Obj {
  const spec: Obj = isObject(body.spec) ? { ...body.spec } : {};
  const seconds: number = spec.expirationSeconds ?? 3600;
  if (seconds < 600) throw badRequest(`spec.expirationSeconds: Invalid value: ${seconds}: may not specify a duration less than 10 minutes`);
  spec.expirationSeconds = seconds;
  spec.audiences = spec.audiences ?? [issuer];
  spec.boundObjectRef = spec.boundObjectRef ?? null;
  const exp = Math.floor(now.getTime() / 1000) + seconds;
  const token = authn.serviceAccountToken(
    {
      namespace: serviceAccount.metadata.namespace!,
      name: serviceAccount.metadata.name!,
      uid: serviceAccount.metadata.uid,
      exp,
      jti: randomUUID(),
    },
    spec.audiences,
    now.getTime(),
  );
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: {
      name: serviceAccount.metadata.name,
      namespace: serviceAccount.metadata.namespace,
      creationTimestamp: serviceAccount.metadata.creationTimestamp,
    },
    spec,
    status: { token, expirationTimestamp: timestamp(new Date(exp * 1000)) },
  };
}
