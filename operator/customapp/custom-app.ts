// The CustomApp object as the operator reads and writes it: the generated spec type, and the status type of api/.
import type { CustomAppSpec as GeneratedSpec } from '../../imports/app.example.com.js';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION } from '../../api/customapp.js';
import type { CustomAppStatus } from '../../api/customapp-status.js';
import { stripManagedFields } from '../cache/transform.js';
import type { KubeObject, ObjectMeta } from '../kube/objects.js';
import type { Resource } from '../kube/resources.js';

/**
 * One quantity of `spec.resources` as the API server serves it: a string, or a whole number written unquoted
 * (x-kubernetes-int-or-string, which `cdk8s import` types `any`).
 */
export type Quantity = string | number;

/** The spec, with the quantities of `spec.resources` typed as they arrive. */
export type CustomAppSpec = Omit<GeneratedSpec, 'resources'> & {
  readonly resources?: {
    readonly requests?: { readonly cpu?: Quantity; readonly memory?: Quantity };
    readonly limits?: { readonly cpu?: Quantity; readonly memory?: Quantity };
  };
};

/** A CustomApp. */
export interface CustomApp extends KubeObject {
  readonly spec: CustomAppSpec;
  readonly status?: CustomAppStatus;
}

/** The CustomApp API resource. */
export const CUSTOM_APPS: Resource = { group: GROUP, version: VERSION, plural: PLURAL, kind: 'CustomApp', namespaced: true };

/**
 * The body of an update (PUT) of `app` with the given metadata and status: the whole object the operator read, as the
 * API server wants it (a status update replaces the whole status; the main resource's update ignores the status).
 * Guarded by the resourceVersion it carries, an update writes what a merge patch of the same fields would, and costs
 * kube-apiserver less: it decodes the body instead of encoding its stored object, merging the patch into it and
 * decoding the result (`bench/write-cost.ts`). `managedFields` are left out, so the server keeps its own.
 */
export function updateBody(app: CustomApp, metadata: ObjectMeta, status?: CustomAppStatus): CustomApp {
  return stripManagedFields({ apiVersion: API_VERSION, kind: KIND, metadata, spec: app.spec, ...(status === undefined ? {} : { status }) });
}
