// The library's entry point: the constructs a cdk8s app builds CustomApps and the operator's install with, and the API names they share.
export {
  CustomApp,
  type CustomAppProps,
  type ConfigMapProjection,
  type SecretProjection,
  type ProjectionOptions,
  type CustomAppRollout,
} from './custom-app.js';
export { CustomAppOperator, type CustomAppOperatorProps } from './custom-app-operator.js';
export { CustomAppCrd, type CustomAppCrdProps } from './custom-app-crd.js';
export { CrdChart } from './crd-chart.js';
export { OperatorChart, type OperatorChartProps } from './operator-chart.js';
export { reloadOnChange, type ReloadObjects, type ReloadOptions, type ReloadableWorkload } from './reload-on-change.js';
export { DEFAULT_OPERATOR_IMAGE, DEFAULT_OPERATOR_RESOURCES } from './operator-deployment.js';
export type { OperatorNetworkPolicyProps } from './operator-network-policy.js';
export { OPERATOR_PERMISSIONS, type Permission, type PermissionScope, type Verb } from './permissions.js';
export { API_VERSION, CRD_NAME, GROUP, KIND, OPERATOR_NAME, OPERATOR_NAMESPACE, VERSION } from '../api/customapp.js';
export { RELOAD_ANNOTATION, RELOAD_CONFIGMAPS_ANNOTATION, RELOAD_SECRETS_ANNOTATION, type WorkloadResource } from '../api/workload.js';
/** The class `cdk8s import` generated from the CRD, for a manifest that needs a field the constructs do not type. */
export * as l1 from '../imports/app.example.com.js';
