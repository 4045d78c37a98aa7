// Drops the zero values that Go's `omitempty` drops on non-pointer fields of built-in kinds, as a round trip through the apiserver does.
import { builtinSchemas, refName } from '../openapi/builtin.js';
import { objectMetaFields } from '../metadata.js';
import { isObject } from '../object.js';

/**
 * Non-pointer `omitempty` scalar fields by schema: a false, 0 or "" there vanishes on the apiserver's round trip
 * (e.g. `hostNetwork: false`, `minReadySeconds: 0`). Pointer fields (`privileged: false`) are kept, so this list
 * is explicit rather than derived from the schema, which cannot tell the two apart.
 */
const omittedZeros: Readonly<Record<string, readonly string[]>> = {
  // ObjectMeta's scalars are its fields before creationTimestamp (a Time struct, which omitempty keeps).
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': objectMetaFields.slice(0, objectMetaFields.indexOf('creationTimestamp')),
  'io.k8s.api.apps.v1.DeploymentSpec': ['minReadySeconds', 'paused'],
  'io.k8s.api.core.v1.PodSpec': [
    'hostNetwork',
    'hostPID',
    'hostIPC',
    'nodeName',
    'hostname',
    'subdomain',
    'serviceAccountName',
    'serviceAccount',
    'priorityClassName',
    'restartPolicy',
    'dnsPolicy',
    'schedulerName',
  ],
  'io.k8s.api.core.v1.Container': [
    'image',
    'workingDir',
    'stdin',
    'stdinOnce',
    'tty',
    'terminationMessagePath',
    'terminationMessagePolicy',
    'imagePullPolicy',
  ],
  'io.k8s.api.core.v1.ContainerPort': ['name', 'hostPort', 'hostIP', 'protocol'],
  'io.k8s.api.core.v1.EnvVar': ['value'],
  'io.k8s.api.core.v1.Probe': ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'],
  'io.k8s.api.core.v1.HTTPGetAction': ['path', 'host', 'scheme'],
  'io.k8s.api.core.v1.VolumeMount': ['readOnly', 'subPath', 'subPathExpr'],
  'io.k8s.api.core.v1.ServiceSpec': [
    'clusterIP',
    'type',
    'loadBalancerIP',
    'externalName',
    'externalTrafficPolicy',
    'healthCheckNodePort',
    'publishNotReadyAddresses',
    'sessionAffinity',
  ],
  'io.k8s.api.core.v1.ServicePort': ['name', 'protocol', 'nodePort'],
  'io.k8s.api.core.v1.Secret': ['type'],
  'io.k8s.api.core.v1.ObjectReference': ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'],
  'io.k8s.api.core.v1.Event': ['message', 'reason', 'type', 'action', 'count'],
  'io.k8s.api.core.v1.EventSource': ['component', 'host'],
  'io.k8s.api.rbac.v1.Subject': ['apiGroup', 'namespace'],
  'io.k8s.api.rbac.v1.PolicyRule': [],
};

function isZero(value: unknown): boolean {
  return value === false || value === 0 || value === '' || value === null;
}

/** Removes, in place, the omitted zero values of a built-in object, walking its schema from `schemaName`. */
export function dropOmittedZeros(value: unknown, schemaName: string): void {
  const schema = builtinSchemas()[schemaName];
  if (schema === undefined || !isObject(value)) return;
  const omitted = omittedZeros[schemaName];
  const properties: Record<string, any> = schema.properties ?? {};
  for (const key of Object.keys(value)) {
    const child = value[key];
    if (omitted?.includes(key) && isZero(child)) {
      delete value[key];
      continue;
    }
    const property = properties[key];
    if (property === undefined) continue;
    const ref = refName(property);
    if (ref !== undefined) {
      dropOmittedZeros(child, ref);
    } else if (property.type === 'array' && Array.isArray(child)) {
      const items = refName(property.items);
      if (items !== undefined) for (const item of child) dropOmittedZeros(item, items);
    } else if (property.type === 'object' && isObject(child) && property.additionalProperties !== undefined) {
      const values = refName(property.additionalProperties);
      if (values !== undefined) for (const v of Object.values(child)) dropOmittedZeros(v, values);
    }
  }
}
