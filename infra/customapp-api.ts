// The CustomApp API: names, labels, annotations and the OpenAPI v3 schema, shared by infra/ and operator/.

/** The API group of CustomApp. */
export const GROUP = 'app.example.com';
/** The only served and stored version. */
export const VERSION = 'v1';
/** `apiVersion` of a CustomApp object. */
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'CustomApp';
export const PLURAL = 'customapps';
export const SINGULAR = 'customapp';
export const SHORT_NAMES = ['ca'] as const;
/** `metadata.name` of the CustomResourceDefinition. */
export const CRD_NAME = `${PLURAL}.${GROUP}`;

/** The finalizer that releases a CustomApp's dependency watches before it goes. */
export const FINALIZER = `${GROUP}/finalizer`;
/** Pod-template annotation holding the SHA-256 of the referenced ConfigMap's content. */
export const CONFIG_HASH_ANNOTATION = `${GROUP}/config-hash`;
/**
 * Pod-template annotation holding the keyed hash of the referenced Secret's content: HMAC-SHA-256 keyed with the
 * Secret's uid, 32 hex digits (operator/deps/keyed-hash.ts), so that a reader of pods cannot test guesses of it.
 */
export const SECRET_HASH_ANNOTATION = `${GROUP}/secret-hash`;
/** The field manager of every write the operator makes. */
export const FIELD_MANAGER = 'customapp-operator';

/** Where the operator is installed. */
export const OPERATOR_NAMESPACE = 'customapp-system';
/** Name of the operator's ServiceAccount, ClusterRole, ClusterRoleBinding and Deployment. */
export const OPERATOR_NAME = 'customapp-operator';
/** The ClusterRole that may read the operator's /metrics (bind it to the scraper, for example Prometheus). */
export const METRICS_READER_ROLE = 'customapp-metrics-reader';
/** The Service in front of the operator's /metrics (HTTPS). */
export const METRICS_SERVICE = 'customapp-operator-metrics';
/**
 * The namespace label that the NetworkPolicy in dist/ admits metrics scrapes from: label the scraper's namespace
 * `app.example.com/metrics=enabled`.
 */
export const METRICS_NAMESPACE_LABEL = { key: `${GROUP}/metrics`, value: 'enabled' } as const;
/** Name of the leader-election Lease (in the operator's namespace). */
export const LEADER_ELECTION_LEASE = 'customapp-operator-leader';

/** Condition types written to `status.conditions`. */
export const CONDITION_TYPES = ['Ready', 'ConfigMapAvailable', 'SecretAvailable', 'DeploymentAvailable', 'ServiceAvailable'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

/**
 * A DNS-1123 subdomain: lower-case alphanumerics, '-' and '.', starting and ending with an alphanumeric.
 * The same rule as Kubernetes' `IsDNS1123Subdomain`, which ConfigMap and Secret names must satisfy; a '/' can
 * never match, so a reference cannot reach into another namespace.
 */
export const DNS1123_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** The maximum length of a DNS-1123 subdomain. */
export const DNS1123_SUBDOMAIN_MAX = 253;

/** A JSON-schema node, as in apiextensions.k8s.io/v1 `JSONSchemaProps` (JSON spelling). */
export interface SchemaNode {
  readonly type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  readonly description?: string;
  readonly format?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  readonly items?: SchemaNode;
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly enum?: readonly string[];
  readonly default?: unknown;
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
}

const objectName = (what: string): SchemaNode => ({
  type: 'string',
  description:
    `Name of a ${what} in the CustomApp's own namespace, injected into the container with envFrom. ` +
    `A DNS-1123 subdomain (at most ${DNS1123_SUBDOMAIN_MAX} characters), so it cannot name another namespace.`,
  minLength: 1,
  maxLength: DNS1123_SUBDOMAIN_MAX,
  pattern: DNS1123_SUBDOMAIN,
});

/** `spec` of a CustomApp: what the user asks for. */
export const SPEC_SCHEMA: SchemaNode = {
  type: 'object',
  description: 'The desired state: an image, and the ConfigMap and Secret it reads.',
  required: ['image'],
  properties: {
    image: {
      type: 'string',
      description: 'The container image to run, for example registry.example.com/app:1.2.3.',
      minLength: 1,
      maxLength: 4096,
    },
    configMapName: objectName('ConfigMap'),
    secretName: objectName('Secret'),
    replicas: {
      type: 'integer',
      format: 'int32',
      description: 'Number of pods. Defaults to 1.',
      minimum: 0,
      default: 1,
    },
    port: {
      type: 'integer',
      format: 'int32',
      description: 'The container port. When set, a ClusterIP Service of the same name exposes it.',
      minimum: 1,
      maximum: 65535,
    },
  },
};

const condition: SchemaNode = {
  type: 'object',
  description: 'A metav1.Condition.',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: { type: 'string', description: 'Ready, ConfigMapAvailable, SecretAvailable or DeploymentAvailable.', maxLength: 316 },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    reason: { type: 'string', description: 'CamelCase reason, for example ConfigMapNotFound.', maxLength: 1024 },
    message: { type: 'string', maxLength: 32768 },
  },
};

/** `status` of a CustomApp: what the operator observed and did. */
export const STATUS_SCHEMA: SchemaNode = {
  type: 'object',
  description: 'The observed state, written only by the operator.',
  properties: {
    observedGeneration: { type: 'integer', format: 'int64', description: 'The generation the status describes.' },
    observedConfigMapName: { type: 'string', description: 'The ConfigMap the Deployment was last rolled out with.' },
    observedSecretName: { type: 'string', description: 'The Secret the Deployment was last rolled out with.' },
    configHash: { type: 'string', description: 'SHA-256 of the ConfigMap content the Deployment runs with.' },
    secretHash: {
      type: 'string',
      description: "Keyed hash of the Secret content the Deployment runs with: HMAC-SHA-256 keyed with the Secret's uid (32 hex digits).",
    },
    readyReplicas: { type: 'integer', format: 'int32', description: 'Ready pods of the owned Deployment.' },
    conditions: {
      type: 'array',
      description: 'Ready, plus one condition per dependency.',
      items: condition,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
  },
};

/** The whole object's schema, as served by the CRD. */
export const CUSTOM_APP_SCHEMA: SchemaNode = {
  type: 'object',
  description: 'A CustomApp runs an image as a Deployment, with a ConfigMap and a Secret injected, and rolls it when they change.',
  required: ['spec'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: SPEC_SCHEMA,
    status: STATUS_SCHEMA,
  },
};

/** `kubectl get ca` columns. */
export const PRINTER_COLUMNS = [
  { name: 'Image', type: 'string', jsonPath: '.spec.image' },
  { name: 'ConfigMap', type: 'string', jsonPath: '.spec.configMapName' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
] as const;
