// Server-side printing (meta.k8s.io/v1 Table): column definitions and cells per kind, CRD additionalPrinterColumns included.
import { evaluateJsonPath, parseJsonPath } from './jsonpath.js';
import type { KubeObject } from './object.js';
import { isObject } from './object.js';

export interface TableColumn {
  readonly name: string;
  readonly type: string;
  readonly format: string;
  readonly description: string;
  readonly priority: number;
  readonly cell: (obj: KubeObject, now: Date) => unknown;
}

type Obj = Record<string, any>;

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    return dy === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

function since(time: unknown, now: Date): string {
  if (typeof time !== 'string' || time === '') return '<unknown>';
  return humanDuration(now.getTime() - Date.parse(time));
}

const nameDescription =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const ageDescription =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

export const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: nameDescription,
  priority: 0,
  cell: (obj) => obj.metadata.name ?? '',
};

export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  format: '',
  description: ageDescription,
  priority: 0,
  cell: (obj, now) => since(obj.metadata.creationTimestamp, now),
};

/** The apiserver's default convertor (kinds without a printer): Name and Created At. */
export const defaultColumns: readonly TableColumn[] = [
  nameColumn,
  {
    name: 'Created At',
    type: 'date',
    format: '',
    description: ageDescription,
    priority: 0,
    cell: (obj) => obj.metadata.creationTimestamp ?? null,
  },
];

function column(name: string, description: string, cell: TableColumn['cell'], priority = 0): TableColumn {
  return { name, type: 'string', format: '', description, priority, cell };
}

const count = (value: unknown) => (isObject(value) ? Object.keys(value).length : 0);
const none = (value: string) => (value === '' ? '<none>' : value);

function selectorString(selector: unknown): string {
  if (!isObject(selector)) return '<none>';
  const parts = Object.keys(selector)
    .sort()
    .map((k) => `${k}=${selector[k]}`);
  return parts.length === 0 ? '<none>' : parts.join(',');
}

function labelSelectorString(value: unknown): string {
  if (!isObject(value)) return '<none>';
  const selector = value as Obj;
  const parts: string[] = [];
  for (const k of Object.keys(selector.matchLabels ?? {}).sort()) parts.push(`${k}=${selector.matchLabels[k]}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else parts.push(`!${e.key}`);
  }
  return parts.length === 0 ? '<none>' : parts.join(',');
}

function servicePorts(spec: Obj): string {
  const ports: Obj[] = spec.ports ?? [];
  if (ports.length === 0) return '<none>';
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`)).join(',');
}

function externalIPs(spec: Obj, status: Obj): string {
  switch (spec.type) {
    case 'ExternalName':
      return spec.externalName ?? '<none>';
    case 'LoadBalancer': {
      const ingress: Obj[] = status?.loadBalancer?.ingress ?? [];
      const ips = [...ingress.map((i) => i.ip ?? i.hostname), ...(spec.externalIPs ?? [])];
      return ips.length > 0 ? ips.join(',') : '<pending>';
    }
    default:
      return (spec.externalIPs ?? []).length > 0 ? spec.externalIPs.join(',') : '<none>';
  }
}

function subjectsOf(binding: Obj, kind: string): string {
  return (binding.subjects ?? [])
    .filter((s: Obj) => s.kind === kind)
    .map((s: Obj) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name))
    .join(', ');
}

function eventObject(e: Obj): string {
  const ref: Obj = e.involvedObject ?? e.regarding ?? {};
  return `${String(ref.kind ?? '').toLowerCase()}/${ref.name ?? ''}`;
}

function eventLastSeen(e: Obj, now: Date): string {
  const last = e.lastTimestamp ?? e.deprecatedLastTimestamp ?? e.series?.lastObservedTime ?? e.eventTime ?? e.metadata?.creationTimestamp;
  return since(last, now);
}

/** The column descriptions of the apiserver's printers, word for word. */
const descriptions: Readonly<Record<string, string>> = {
  'ConfigMap/Data':
    "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
  'Secret/Type':
    'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types',
  'Secret/Data':
    "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
  'Namespace/Status': 'The status of the namespace',
  'Service/Type':
    'type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. "ExternalName" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types',
  'Service/Cluster-IP':
    'clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are "None", empty string (""), or a valid IP address. Setting this to "None" makes a "headless service" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
  'Service/External-IP':
    'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.',
  'Service/Port(s)':
    'The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
  'Service/Selector':
    'Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/',
  'ServiceAccount/Secrets':
    'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". The "kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret',
  'Deployment/Ready': 'Number of the pod with ready state',
  'Deployment/Up-to-date': 'Total number of non-terminating pods targeted by this deployment that have the desired template spec.',
  'Deployment/Available':
    'Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.',
  'Deployment/Containers': 'Names of each container in the template.',
  'Deployment/Images': 'Images referenced by each container in the template.',
  'Deployment/Selector':
    'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
  'Event/Last Seen': 'The time at which the most recent occurrence of this event was recorded.',
  'Event/Type': 'Type of this event (Normal, Warning), new types could be added in the future',
  'Event/Reason':
    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
  'Event/Object': 'The object that this event is about.',
  'Event/Subobject':
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
  'Event/Source': 'The component reporting this event. Should be a short machine understandable string.',
  'Event/Message': 'A human-readable description of the status of this operation.',
  'Event/First Seen': 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
  'Event/Count': 'The number of times this event has occurred.',
  'Lease/Holder':
    'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.',
  'ClusterRoleBinding/Role':
    'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
  'ClusterRoleBinding/Users': 'Users in the clusterRoleBinding',
  'ClusterRoleBinding/Groups': 'Groups in the clusterRoleBinding',
  'ClusterRoleBinding/ServiceAccounts': 'ServiceAccounts in the clusterRoleBinding',
  'RoleBinding/Role':
    'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
  'RoleBinding/Users': 'Users in the roleBinding',
  'RoleBinding/Groups': 'Groups in the roleBinding',
  'RoleBinding/ServiceAccounts': 'ServiceAccounts in the roleBinding',
};

/** Columns of the built-in printers (pkg/printers/internalversion), by kind, before their full descriptions. */
const printerColumns: Readonly<Record<string, readonly TableColumn[]>> = {
  ConfigMap: [
    nameColumn,
    { ...column('Data', 'Data contains the configuration data.', (o) => count(o.data) + count(o.binaryData)) },
    ageColumn,
  ],
  Secret: [
    nameColumn,
    column('Type', 'Used to facilitate programmatic handling of secret data.', (o) => o.type ?? ''),
    column('Data', 'Data contains the secret data.', (o) => count(o.data)),
    ageColumn,
  ],
  Namespace: [nameColumn, column('Status', 'The status of the namespace', (o) => (o as Obj).status?.phase ?? ''), ageColumn],
  Service: [
    nameColumn,
    column('Type', 'type determines how the Service is exposed.', (o) => (o as Obj).spec?.type ?? ''),
    column('Cluster-IP', 'clusterIP is the IP address of the service and is usually assigned randomly.', (o) =>
      none((o as Obj).spec?.clusterIP ?? ''),
    ),
    column(
      'External-IP',
      'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.',
      (o) => externalIPs((o as Obj).spec ?? {}, (o as Obj).status ?? {}),
    ),
    column('Port(s)', 'The list of ports that are exposed by this service.', (o) => servicePorts((o as Obj).spec ?? {})),
    ageColumn,
    column(
      'Selector',
      'Route service traffic to pods with label keys and values matching this selector.',
      (o) => selectorString((o as Obj).spec?.selector),
      1,
    ),
  ],
  ServiceAccount: [
    nameColumn,
    column(
      'Secrets',
      'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.',
      (o) => ((o as Obj).secrets ?? []).length,
    ),
    ageColumn,
  ],
  Deployment: [
    nameColumn,
    column(
      'Ready',
      'Number of the pod with ready state',
      (o) => `${(o as Obj).status?.readyReplicas ?? 0}/${(o as Obj).spec?.replicas ?? 0}`,
    ),
    column(
      'Up-to-date',
      'Total number of non-terminating pods targeted by this deployment that have the desired template spec.',
      (o) => (o as Obj).status?.updatedReplicas ?? 0,
    ),
    column(
      'Available',
      'Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.',
      (o) => (o as Obj).status?.availableReplicas ?? 0,
    ),
    ageColumn,
    column(
      'Containers',
      'Names of each container in the template.',
      (o) => ((o as Obj).spec?.template?.spec?.containers ?? []).map((c: Obj) => c.name).join(','),
      1,
    ),
    column(
      'Images',
      'Images referenced by each container in the template.',
      (o) => ((o as Obj).spec?.template?.spec?.containers ?? []).map((c: Obj) => c.image).join(','),
      1,
    ),
    column('Selector', 'Label selector for pods.', (o) => labelSelectorString((o as Obj).spec?.selector), 1),
  ],
  Event: [
    column('Last Seen', 'The time at which the most recent occurrence of this event was recorded.', (o, now) =>
      eventLastSeen(o as Obj, now),
    ),
    column('Type', 'Type of this event (Normal, Warning), new types could be added in the future', (o) => (o as Obj).type ?? ''),
    column(
      'Reason',
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
      (o) => (o as Obj).reason ?? '',
    ),
    column('Object', 'The object that this event is about.', (o) => eventObject(o as Obj)),
    column(
      'Subobject',
      'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.',
      (o) => ((o as Obj).involvedObject ?? (o as Obj).regarding)?.fieldPath ?? '',
      1,
    ),
    column(
      'Source',
      'The component reporting this event. Should be a short machine understandable string.',
      (o) =>
        (o as Obj).source?.component ??
        (o as Obj).deprecatedSource?.component ??
        (o as Obj).reportingComponent ??
        (o as Obj).reportingController ??
        '',
      1,
    ),
    column('Message', 'A human-readable description of the status of this operation.', (o) => (o as Obj).message ?? (o as Obj).note ?? ''),
    column(
      'First Seen',
      'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
      (o, now) => since((o as Obj).firstTimestamp ?? (o as Obj).deprecatedFirstTimestamp ?? (o as Obj).eventTime, now),
      1,
    ),
    column(
      'Count',
      'The number of times this event has occurred.',
      (o) => (o as Obj).count ?? (o as Obj).deprecatedCount ?? (o as Obj).series?.count ?? 1,
      1,
    ),
    { ...nameColumn, priority: 1 },
  ],
  Lease: [
    nameColumn,
    column(
      'Holder',
      'holderIdentity contains the identity of the holder of a current lease.',
      (o) => (o as Obj).spec?.holderIdentity ?? '',
    ),
    ageColumn,
  ],
  NetworkPolicy: [
    nameColumn,
    column(
      'Pod-Selector',
      'Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.',
      (o) => labelSelectorString((o as Obj).spec?.podSelector ?? {}),
    ),
    ageColumn,
  ],
  RoleBinding: bindingColumns('roleBinding'),
  ClusterRoleBinding: bindingColumns('clusterRoleBinding'),
};

/** Columns of the built-in printers (pkg/printers/internalversion), by kind. */
export const builtinColumns: Readonly<Record<string, readonly TableColumn[]>> = Object.fromEntries(
  Object.entries(printerColumns).map(([kind, columns]) => [
    kind,
    columns.map((c) => ({ ...c, description: descriptions[`${kind}/${c.name}`] ?? c.description })),
  ]),
);

function bindingColumns(kind: string): TableColumn[] {
  return [
    nameColumn,
    column(
      'Role',
      'RoleRef references a Role or a ClusterRole.',
      (o) => `${(o as Obj).roleRef?.kind ?? ''}/${(o as Obj).roleRef?.name ?? ''}`,
    ),
    ageColumn,
    column('Users', `Users in the ${kind}`, (o) => subjectsOf(o as Obj, 'User'), 1),
    column('Groups', `Groups in the ${kind}`, (o) => subjectsOf(o as Obj, 'Group'), 1),
    column('ServiceAccounts', `ServiceAccounts in the ${kind}`, (o) => subjectsOf(o as Obj, 'ServiceAccount'), 1),
  ];
}

export interface PrinterColumn {
  readonly name: string;
  readonly type: string;
  readonly format?: string;
  readonly description?: string;
  readonly priority?: number;
  readonly jsonPath: string;
}

/** Columns of a custom resource: Name, then its CRD's additionalPrinterColumns (or Age when it has none). */
export function customColumns(printerColumns: readonly PrinterColumn[] | undefined): TableColumn[] {
  const specs = printerColumns ?? [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  return [
    nameColumn,
    ...specs.map((c): TableColumn => {
      const steps = parseJsonPath(c.jsonPath);
      return {
        name: c.name,
        type: c.type,
        format: c.format ?? '',
        description: c.description ?? `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
        priority: c.priority ?? 0,
        cell: (obj, now) => {
          const results = evaluateJsonPath(steps, obj);
          if (results.length === 0 || results[0] === undefined || results[0] === null) return null;
          const value = results[0];
          switch (c.type) {
            case 'date':
              return typeof value === 'string' ? since(value, now) : null;
            case 'string':
              return typeof value === 'string' ? value : JSON.stringify(value);
            case 'integer':
              return typeof value === 'number' && Number.isInteger(value) ? value : null;
            case 'number':
              return typeof value === 'number' ? value : null;
            case 'boolean':
              return typeof value === 'boolean' ? value : null;
            default:
              return value;
          }
        },
      };
    }),
  ];
}

/** A meta.k8s.io/v1 Table of `objects`. `includeObject` is None, Metadata (default) or Object. */
export function tableOf(
  columns: readonly TableColumn[],
  objects: readonly KubeObject[],
  listMeta: Record<string, unknown>,
  includeObject: string,
  now: Date,
): Record<string, unknown> {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: columns.map(({ name, type, format, description, priority }) => ({ name, type, format, description, priority })),
    rows: objects.map((obj) => {
      const row: Record<string, unknown> = { cells: columns.map((c) => c.cell(obj, now)) };
      if (includeObject === 'Object') row.object = obj;
      else if (includeObject !== 'None') {
        row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
      }
      return row;
    }),
  };
}
