// The CustomApp object as the operator reads and writes it: the generated spec type, and the status type of api/.
import type { CustomAppSpec } from '../../imports/app.example.com.js';
import { GROUP, PLURAL, VERSION } from '../../api/customapp.js';
import type { CustomAppStatus } from '../../api/customapp-status.js';
import type { KubeObject } from '../kube/objects.js';
import type { Resource } from '../kube/resources.js';

export type { CustomAppSpec };

/** A CustomApp. */
export interface CustomApp extends KubeObject {
  readonly spec: CustomAppSpec;
  readonly status?: CustomAppStatus;
}

/** The CustomApp API resource. */
export const CUSTOM_APPS: Resource = { group: GROUP, version: VERSION, plural: PLURAL, kind: 'CustomApp', namespaced: true };
