// Create-only "review" resources answered from the authorizer and authenticator (SelfSubjectAccessReview,
// SubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview, TokenReview) and the TokenRequest subresource.
import type { Attributes, UserInfo } from './authz.js';
import { type Authenticator, issuer } from './auth.js';
import { badRequest } from './errors.js';
import { isObject, type KubeObject, timestamp } from './object.js';
import type { RbacAuthorizer } from './rbac.js';
import type { ResourceType } from './resources.js';
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
    return {
      user,
      verb: n.verb ?? '',
      resourceRequest: false,
      namespace: '',
      apiGroup: '',
      apiVersion: '',
      resource: '',
      subresource: '',
      name: '',
      path: n.path ?? '',
    };
  }
  throw badRequest('spec.resourceAttributes or spec.nonResourceAttributes is required');
}

/** Answers the review resources; `kind` is the resource's Kind. */
export function answerReview(kind: string, body: Obj, user: UserInfo, rbac: RbacAuthorizer, authn: Authenticator): Obj {
  const spec: Obj = isObject(body.spec) ? body.spec : {};
  const base = {
    kind,
    apiVersion:
      kind.endsWith('Review') && kind !== 'TokenReview' && kind !== 'SelfSubjectReview'
        ? 'authorization.k8s.io/v1'
        : 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: null },
  };
  switch (kind) {
    case 'SelfSubjectAccessReview': {
      const decision = rbac.authorize(attributesOf(spec, user));
      return { ...base, spec, status: decision.allowed ? { allowed: true, reason: decision.reason } : { allowed: false } };
    }
    case 'SubjectAccessReview':
    case 'LocalSubjectAccessReview': {
      const subject: UserInfo = { username: spec.user ?? '', uid: spec.uid, groups: spec.groups ?? [] };
      const decision = rbac.authorize(attributesOf(spec, subject));
      return { ...base, spec, status: decision.allowed ? { allowed: true, reason: decision.reason } : { allowed: false } };
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
      return { ...base, status: { userInfo: { username: user.username, ...(user.uid ? { uid: user.uid } : {}), groups: user.groups } } };
    case 'TokenReview': {
      const reviewed = authn.authenticate(`Bearer ${spec.token ?? ''}`);
      return {
        ...base,
        spec,
        status:
          reviewed === undefined
            ? { user: {}, error: '[invalid bearer token, token lookup failed]' }
            : {
                authenticated: true,
                user: { username: reviewed.username, ...(reviewed.uid ? { uid: reviewed.uid } : {}), groups: reviewed.groups },
                audiences: spec.audiences ?? [issuer],
              },
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
    { namespace: serviceAccount.metadata.namespace!, name: serviceAccount.metadata.name!, uid: serviceAccount.metadata.uid, exp },
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
