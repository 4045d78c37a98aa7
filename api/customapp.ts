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
 * Secret's uid, 32 hex digits (operator/dependencies/keyed-hash.ts), so that a reader of pods cannot test guesses of it.
 */
export const SECRET_HASH_ANNOTATION = `${GROUP}/secret-hash`;
/**
 * Pod-template annotation holding, for each object of spec.configMaps or spec.secrets read by its listed keys, one
 * digest per listed key (a Secret's keyed with its uid, operator/dependencies/key-digests.ts): what a later change compares
 * with to name the keys that changed. It changes only with the keys' hash, so it rolls nothing of its own.
 */
export const KEY_DIGESTS_ANNOTATION = `${GROUP}/key-digests`;
/**
 * Deployment annotation (on the Deployment, not its pod template, so writing it rolls nothing) recording why its pod
 * template last changed: the trigger (ConfigMap, Secret or Spec), the objects and hashes that changed, the CustomApp
 * generation, the Deployment generation that update makes (`templateGeneration`), and when. Written in the same update
 * as the template change, so the cause of a rollout in progress survives any restart (the rollout budget is rebuilt
 * from it: a content rollout is in progress until the Deployment controller, having observed that generation, says it
 * ended; a later scale does not make it one again).
 */
export const ROLLOUT_ANNOTATION = `${GROUP}/rollout`;
/** The field manager of every write the operator makes. */
export const FIELD_MANAGER = 'customapp-operator';

/** Where the operator is installed. */
export const OPERATOR_NAMESPACE = 'customapp-system';
/** Name of the operator's ServiceAccount, ClusterRole, ClusterRoleBinding, Role, RoleBinding and Deployment. */
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

/** What caused a rollout: new content of the referenced ConfigMap or Secret, or the CustomApp's spec (or its creation). */
export const ROLLOUT_TRIGGERS = ['ConfigMap', 'Secret', 'Spec'] as const;
export type RolloutTrigger = (typeof ROLLOUT_TRIGGERS)[number];
/** How a rollout went, by the Deployment's own status (as `kubectl rollout status` decides). */
export const ROLLOUT_RESULTS = ['InProgress', 'Succeeded', 'Failed'] as const;
export type RolloutResult = (typeof ROLLOUT_RESULTS)[number];
/** Why a dependency-triggered rollout waits: the rollout budget, the flap breaker, `spec.rollout.paused` or the debounce. */
export const PENDING_REASONS = ['Queued', 'Flapping', 'Paused', 'Debouncing'] as const;
export type PendingReason = (typeof PENDING_REASONS)[number];

/** `spec.rollout.debounceSeconds` at most (an hour). */
export const MAX_DEBOUNCE_SECONDS = 3600;

/**
 * A DNS-1123 subdomain: lower-case alphanumerics, '-' and '.', starting and ending with an alphanumeric.
 * The same rule as Kubernetes' `IsDNS1123Subdomain`, which ConfigMap and Secret names must satisfy; a '/' can
 * never match, so a reference cannot reach into another namespace.
 */
export const DNS1123_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** The maximum length of a DNS-1123 subdomain. */
export const DNS1123_SUBDOMAIN_MAX = 253;
/** True when `name` can name a ConfigMap or Secret: a DNS-1123 subdomain of at most {@link DNS1123_SUBDOMAIN_MAX} characters. */
export function isObjectName(name: string): boolean {
  return name.length <= DNS1123_SUBDOMAIN_MAX && new RegExp(DNS1123_SUBDOMAIN).test(name);
}

/** A JSON-schema node, as in apiextensions.k8s.io/v1 `JSONSchemaProps` (JSON spelling). */
export interface SchemaNode {
  readonly type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  readonly description?: string;
  readonly format?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  readonly items?: SchemaNode;
  readonly maxItems?: number;
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly enum?: readonly string[];
  readonly default?: unknown;
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  /** An integer or a string (no `type`): the value validations of each apply to it (pattern to a string, minimum to a number). */
  readonly 'x-kubernetes-int-or-string'?: true;
  /** Value validations (structural: no type or description inside); the emulator does not evaluate them (emulator/README.md). */
  readonly anyOf?: readonly SchemaNode[];
  readonly not?: SchemaNode;
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

/**
 * A list of objects keyed by `name` (a list-map: the API server refuses a name twice, and a server-side apply merges
 * by name), at most `maxItems`.
 */
const listByName = (description: string, maxItems: number, properties: Record<string, SchemaNode>): SchemaNode => ({
  type: 'array',
  description,
  maxItems,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['name'],
  items: { type: 'object', required: ['name'], properties },
});

/** `spec.env` at most: plain variables are a few; a config of hundreds belongs in a ConfigMap. */
export const MAX_ENV = 128;
/**
 * An environment variable name as every supported kubelet accepts it (Kubernetes' C_IDENTIFIER-like rule before 1.34
 * relaxed it): letters, digits, '_', '-' and '.', not starting with a digit.
 */
export const ENV_NAME = '^[-._a-zA-Z][-._a-zA-Z0-9]*$';

/**
 * Quantities as a container's resources take them (`500m`, `0.5`, `2`, `64Mi`, `1.5Gi`, `1073741824`), bounded so that
 * every one has a form the API server stores and the operator writes the same (operator/reconcile/quantity.ts): at most
 * 9 digits before the point and 6 after it with the suffixes a container's CPU and memory use (a larger integer part
 * with `T` would need a suffix past `E`), or a plain integer of up to 16 digits (bytes, so that each
 * {@link MAX_WHOLE_QUANTITY} has a quoted spelling too). ParseQuantity also takes a sign, an exponent (`1e3`) and a bare
 * point (`.5`, `1.`); the pattern refuses them, and its error names the field.
 */
export const RESOURCE_QUANTITY = '^((0|[1-9][0-9]{0,8})([.][0-9]{1,6})?(m|k|M|G|T|Ki|Mi|Gi|Ti)?|[1-9][0-9]{9,15})$';
/**
 * The largest quantity written as a bare number (`memory: 1073741824`): 2^53 - 1, the largest integer a JSON number
 * carries exactly to a JavaScript reader such as the operator.
 */
export const MAX_WHOLE_QUANTITY = Number.MAX_SAFE_INTEGER;

/**
 * One quantity: a string of {@link RESOURCE_QUANTITY}, or a whole number from 0 to {@link MAX_WHOLE_QUANTITY}, as a Pod
 * takes `cpu: 1` unquoted: x-kubernetes-int-or-string, as controller-gen writes a Quantity, without its
 * `anyOf: [{type: integer}, {type: string}]`, which only adds two more lines to the error of a fraction. A structural
 * schema cannot take a fractional number beside a string: `cpu: 0.5` unquoted is refused ("must be of type
 * integer,string"), where a Pod would store 500m; quote it, or write 500m.
 */
const quantity = (description: string): SchemaNode => ({
  'x-kubernetes-int-or-string': true,
  description: `${description} A fraction is quoted ("0.5") or written in milli ("500m"); a number is at most ${MAX_WHOLE_QUANTITY}.`,
  pattern: RESOURCE_QUANTITY,
  minimum: 0,
  maximum: MAX_WHOLE_QUANTITY,
});

const quantities = (what: string): SchemaNode => ({
  type: 'object',
  description: `${what}, as in a container's resources: cpu and memory, each a quantity such as "250m", 2 or "1.5Gi".`,
  properties: {
    cpu: quantity('CPU: a quoted quantity ("250m", "0.5", "2") or a whole number, unquoted as in a Pod (2).'),
    memory: quantity('Memory: a quoted quantity ("128Mi", "1.5Gi", "1G") or a whole number of bytes, unquoted as in a Pod (1073741824).'),
  },
});

/** `spec.configMaps` and `spec.secrets` at most each: a pod's volumes and envFrom stay small enough to read. */
export const MAX_PROJECTED = 16;
/** `keys` of one projected object at most. */
export const MAX_PROJECTED_KEYS = 64;
/** A key of a ConfigMap or Secret, as the API server accepts it (IsConfigMapKey): letters, digits, '-', '_' and '.'. */
export const DATA_KEY = '^[-._a-zA-Z0-9]+$';

/**
 * `spec.configMaps` or `spec.secrets`: objects of the CustomApp's namespace projected into the container, as
 * environment variables without `mountPath`, as read-only files with it. `keys` limits both what is projected and what
 * rolls the pods: a change to another key rolls nothing.
 */
const projectedObjects = (what: string, plural: string): SchemaNode =>
  listByName(
    `${plural} of the CustomApp's namespace the container reads, each projected on its own: without mountPath as ` +
      `environment variables (every key with envFrom, or only the listed keys), with mountPath as a read-only volume (one ` +
      `file per key, or only the listed keys). A content change of a projected key rolls the pods; with keys listed, a ` +
      `change to another key rolls nothing. Names are unique; at most ${MAX_PROJECTED}. Combines with ` +
      `${what === 'ConfigMap' ? 'configMapName' : 'secretName'}, which stays one more envFrom of the whole object.`,
    MAX_PROJECTED,
    {
      name: {
        type: 'string',
        description: `Name of the ${what}: a DNS-1123 subdomain (at most ${DNS1123_SUBDOMAIN_MAX} characters) in the CustomApp's own namespace.`,
        minLength: 1,
        maxLength: DNS1123_SUBDOMAIN_MAX,
        pattern: DNS1123_SUBDOMAIN,
      },
      mountPath: {
        type: 'string',
        description: 'An absolute path where the keys appear as read-only files. Absent: the keys are environment variables.',
        minLength: 2,
        maxLength: 1024,
        pattern: '^/',
      },
      keys: {
        type: 'array',
        description:
          `Only these keys are projected (as variables of the same name, or files of the same name) and only they roll the ` +
          `pods. Absent: every key. A listed key the ${what} lacks keeps the pods from starting, unless optional; at most ${MAX_PROJECTED_KEYS}.`,
        maxItems: MAX_PROJECTED_KEYS,
        'x-kubernetes-list-type': 'set',
        items: { type: 'string', minLength: 1, maxLength: DNS1123_SUBDOMAIN_MAX, pattern: DATA_KEY },
      },
      optional: {
        type: 'boolean',
        description: `True: the pods start while the ${what} (or a listed key) is missing. Default false: they wait for it.`,
      },
    },
  );

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
    configMaps: projectedObjects('ConfigMap', 'ConfigMaps'),
    secrets: projectedObjects('Secret', 'Secrets'),
    resources: {
      type: 'object',
      description:
        "The container's requests and limits, as given (a section left out has none). Default when absent: requests " +
        'cpu "50m" and memory "64Mi", a memory limit of "256Mi" and no CPU limit.',
      properties: { requests: quantities('What the scheduler reserves'), limits: quantities('The most the container may use') },
    },
    env: listByName(
      'Plain environment variables of the container, each a name and a value, set after the ConfigMap and Secret ' +
        '(envFrom): a name here wins over the same key there. No valueFrom: reference ConfigMaps and Secrets with ' +
        `configMapName and secretName. Names are unique; at most ${MAX_ENV}.`,
      MAX_ENV,
      {
        name: {
          type: 'string',
          description: "The variable's name: letters, digits, '_', '-' and '.', not starting with a digit.",
          minLength: 1,
          maxLength: 256,
          pattern: ENV_NAME,
        },
        value: { type: 'string', description: 'Its value; empty when absent.', maxLength: 32768 },
      },
    ),
    // No default: a default would write 1 into every CustomApp and the operator would put the Deployment back to it
    // after each change of its replicas by another writer (an HPA on the Deployment). CustomApps created while the
    // schema defaulted to 1 keep replicas: 1 stored (the API server persisted it), so they stay as they were.
    replicas: {
      type: 'integer',
      format: 'int32',
      description:
        'Number of pods; `kubectl scale customapp/<name>` and a HorizontalPodAutoscaler targeting the CustomApp set it ' +
        "(the scale subresource). Unset: the operator leaves the Deployment's replica count to whoever sets it (1 when " +
        'created; a HorizontalPodAutoscaler targeting the Deployment).',
      minimum: 0,
    },
    port: {
      type: 'integer',
      format: 'int32',
      description: 'The container port. When set, a ClusterIP Service of the same name exposes it.',
      minimum: 1,
      maximum: 65535,
    },
    readinessPath: {
      type: 'string',
      description:
        'An HTTP path probed on spec.port (httpGet readiness probe, every 5 s, un-Ready after 3 failures) before a pod counts ' +
        'as ready, so that a rollout whose new pods never get ready fails instead of succeeding. Needs spec.port. ' +
        'Default: no readiness probe (a pod is ready once its container runs).',
      pattern: '^/',
      maxLength: 1024,
    },
    rollout: {
      type: 'object',
      description: 'How rollouts caused by new ConfigMap or Secret content are governed for this app (a spec change always rolls at once).',
      properties: {
        debounceSeconds: {
          type: 'integer',
          format: 'int32',
          description:
            'Wait until the referenced ConfigMap and Secret have not changed for this long before rolling, so that a burst ' +
            'of edits rolls once. Defaults to 0 (roll at once).',
          minimum: 0,
          maximum: MAX_DEBOUNCE_SECONDS,
          default: 0,
        },
        paused: {
          type: 'boolean',
          description:
            'Hold rollouts caused by ConfigMap or Secret content; the latest content is still tracked (status.pendingRollout) ' +
            'and rolled out, once, when unpaused. Spec changes still roll. Defaults to false.',
          default: false,
        },
        progressDeadlineSeconds: {
          type: 'integer',
          format: 'int32',
          description:
            "The Deployment's progressDeadlineSeconds: a rollout that makes no progress for this long is Failed " +
            "(status.lastRollout, Ready=False RolloutFailed). Default: Kubernetes' 600.",
          minimum: 1,
          maximum: 86400,
        },
      },
    },
  },
  // readinessPath needs port: either no readinessPath, or a port. A structural value validation rather than a CEL rule:
  // a CEL rule makes the API server append "some validation rules were not checked…" to every invalid CustomApp's
  // error, and the emulator runs no CEL.
  anyOf: [{ not: { required: ['readinessPath'] } }, { required: ['port'] }],
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

const hash = (what: string): SchemaNode => ({ type: 'string', description: `The content hash ${what}.`, maxLength: 256 });

/** The keys whose content changed, of an object read by its listed keys. */
const changedKeys: SchemaNode = {
  type: 'array',
  description: 'The keys whose content changed, when the object is read by its listed keys (spec.configMaps[].keys).',
  maxItems: MAX_PROJECTED_KEYS,
  items: { type: 'string', maxLength: DNS1123_SUBDOMAIN_MAX },
};

/** A rollout, as `status.lastRollout` reports it. */
const lastRollout: SchemaNode = {
  type: 'object',
  description: "The last rollout of the Deployment's pods: what caused it, when, and how it went.",
  required: ['trigger', 'startTime', 'result'],
  properties: {
    trigger: { type: 'string', enum: ROLLOUT_TRIGGERS, description: 'ConfigMap or Secret (new content), or Spec (the CustomApp changed).' },
    name: { type: 'string', description: 'The ConfigMap or Secret whose content changed.', maxLength: DNS1123_SUBDOMAIN_MAX },
    keys: changedKeys,
    fromHash: hash('the pods ran with before'),
    toHash: hash('rolled out'),
    generation: { type: 'integer', format: 'int64', description: 'The CustomApp generation rolled out.' },
    startTime: { type: 'string', format: 'date-time', description: 'When the operator changed the pod template.' },
    completionTime: { type: 'string', format: 'date-time', description: 'When the operator saw the rollout succeed or fail.' },
    result: { type: 'string', enum: ROLLOUT_RESULTS, description: "InProgress, Succeeded or Failed, by the Deployment's status." },
    message: { type: 'string', description: 'The change, and the reason of a failure.', maxLength: 32768 },
  },
};

/** A rollout that waits, as `status.pendingRollout` reports it. */
const pendingRollout: SchemaNode = {
  type: 'object',
  description: 'A rollout caused by new ConfigMap or Secret content that waits, and why; absent when none waits.',
  required: ['reason', 'since', 'trigger', 'name'],
  properties: {
    reason: {
      type: 'string',
      enum: PENDING_REASONS,
      description: 'Queued (the rollout budget), Flapping (the flap breaker), Paused (spec.rollout.paused) or Debouncing.',
    },
    since: {
      type: 'string',
      format: 'date-time',
      description: 'When it began to wait for this reason (the queue is first in, first out).',
    },
    trigger: { type: 'string', enum: ['ConfigMap', 'Secret'], description: 'The kind whose content changed.' },
    name: { type: 'string', description: 'The ConfigMap or Secret whose content changed.', maxLength: DNS1123_SUBDOMAIN_MAX },
    keys: changedKeys,
    fromHash: hash('the pods run with'),
    toHash: hash('waiting to be rolled out (the latest)'),
  },
};

/** `status.observedConfigMaps` or `status.observedSecrets`: the listed objects the Deployment runs with. */
const observedObjects = (what: string): SchemaNode =>
  listByName(
    `The ${what} of spec.${what === 'ConfigMaps' ? 'configMaps' : 'secrets'} the Deployment was last rolled out with, and their content hashes.`,
    MAX_PROJECTED,
    {
      name: { type: 'string', maxLength: DNS1123_SUBDOMAIN_MAX },
      hash: hash('the pods run with: of the listed keys alone when keys are listed; absent while an optional one is missing'),
    },
  );

/** `status` of a CustomApp: what the operator observed and did. */
export const STATUS_SCHEMA: SchemaNode = {
  type: 'object',
  description: 'The observed state, written only by the operator.',
  properties: {
    observedGeneration: { type: 'integer', format: 'int64', description: 'The generation the status describes.' },
    observedConfigMapName: { type: 'string', description: 'The ConfigMap the Deployment was last rolled out with.' },
    observedSecretName: { type: 'string', description: 'The Secret the Deployment was last rolled out with.' },
    observedConfigMaps: observedObjects('ConfigMaps'),
    observedSecrets: observedObjects('Secrets'),
    configHash: { type: 'string', description: 'SHA-256 of the ConfigMap content the Deployment runs with.' },
    secretHash: {
      type: 'string',
      description: "Keyed hash of the Secret content the Deployment runs with: HMAC-SHA-256 keyed with the Secret's uid (32 hex digits).",
    },
    readyReplicas: { type: 'integer', format: 'int32', description: 'Ready pods of the owned Deployment.' },
    replicas: {
      type: 'integer',
      format: 'int32',
      description: "Pods of the owned Deployment (its status.replicas): the scale subresource's current replicas.",
    },
    selector: {
      type: 'string',
      description: "The owned Deployment's label selector as a string: the scale subresource's selector, which an HPA reads.",
    },
    lastRollout,
    pendingRollout,
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

/**
 * The scale subresource (`kubectl scale`, a HorizontalPodAutoscaler): the API server reads and writes `spec.replicas`
 * and reports the operator's `status.replicas` and `status.selector`.
 */
export const SCALE_SUBRESOURCE = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.status.selector',
} as const;

/** `kubectl get ca` columns. */
export const PRINTER_COLUMNS = [
  { name: 'Image', type: 'string', jsonPath: '.spec.image' },
  { name: 'ConfigMap', type: 'string', jsonPath: '.spec.configMapName' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Rollout', type: 'string', jsonPath: '.status.lastRollout.result' },
  { name: 'Waiting', type: 'string', jsonPath: '.status.pendingRollout.reason' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
] as const;
