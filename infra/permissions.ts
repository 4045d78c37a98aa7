// The operator's permissions: one table, read by the RBAC construct and by the tests that prove it minimal.
import { GROUP, PLURAL } from './customapp-api.js';

/** An RBAC verb the operator may be granted. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** One rule of the operator's ClusterRole: verbs on one resource (or subresource) of one API group. */
export interface Permission {
  /** The API group; '' is the core group. */
  readonly apiGroup: string;
  /** The resource, with `/subresource` where it applies (for example `customapps/status`). */
  readonly resource: string;
  /** The verbs, in the order RBAC lists them. */
  readonly verbs: readonly Verb[];
  /** What in the operator uses it. */
  readonly why: string;
}

/**
 * Every permission the operator needs, and nothing more. The ClusterRole in dist/ is generated from this table,
 * and the RBAC tests remove each verb in turn to show that something then fails.
 */
export const OPERATOR_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: '',
    resource: 'configmaps',
    verbs: ['get', 'list', 'watch'],
    why: 'dynamic watches on referenced ConfigMaps (list+watch with a name or namespace scope); get for diagnostics',
  },
  {
    apiGroup: '',
    resource: 'secrets',
    verbs: ['get', 'list', 'watch'],
    why: 'dynamic watches on referenced Secrets, hashed on arrival; get for diagnostics',
  },
  {
    apiGroup: GROUP,
    resource: PLURAL,
    verbs: ['get', 'list', 'watch', 'update', 'patch'],
    why: 'the CustomApp informer, and adding/removing the finalizer',
  },
  {
    apiGroup: GROUP,
    resource: `${PLURAL}/status`,
    verbs: ['get', 'update', 'patch'],
    why: 'status conditions, hashes and observed references',
  },
  {
    apiGroup: GROUP,
    resource: `${PLURAL}/finalizers`,
    verbs: ['update'],
    why: 'ownerReferences with blockOwnerDeletion on owned objects (OwnerReferencesPermissionEnforcement)',
  },
  {
    apiGroup: 'apps',
    resource: 'deployments',
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    why: 'the owned Deployment: cache, create and update',
  },
  {
    apiGroup: '',
    resource: 'services',
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    why: 'the owned Service when spec.port is set; deleted when the port is removed',
  },
  {
    apiGroup: '',
    resource: 'events',
    verbs: ['create', 'patch'],
    why: 'Events on CustomApps (created, updated, rollout triggered, rollout held)',
  },
  {
    apiGroup: 'events.k8s.io',
    resource: 'events',
    verbs: ['create', 'patch'],
    why: 'Events through the events.k8s.io API',
  },
  {
    apiGroup: 'coordination.k8s.io',
    resource: 'leases',
    verbs: ['get', 'create', 'update'],
    why: 'leader election (get, create, renew); no list or watch is needed',
  },
];
