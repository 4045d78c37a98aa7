// The CustomApp object as the operator reads and writes it: the generated spec type, and the status type of api/.
import type { CustomAppSpec as GeneratedSpec } from '../../imports/app.example.com.js';
import { GROUP, PLURAL, VERSION } from '../../api/customapp.js';
import type { CustomAppStatus } from '../../api/customapp-status.js';
import type { KubeObject } from '../kube/objects.js';
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
