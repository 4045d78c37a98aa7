// The CustomApp construct: typed props over the whole spec, ConfigMaps and Secrets as cdk8s-plus objects or names, checked at synth.
import { ApiObject, type ApiObjectMetadata, Chart, type Duration, Lazy } from 'cdk8s';
import type * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import {
  CustomApp as CustomAppResource,
  type CustomAppSpec,
  type CustomAppSpecConfigMaps,
  type CustomAppSpecResources,
} from '../imports/app.example.com.js';
import {
  DATA_KEY,
  DNS1123_SUBDOMAIN_MAX,
  ENV_NAME,
  isObjectName,
  MAX_DEBOUNCE_SECONDS,
  MAX_ENV,
  MAX_PROJECTED,
  MAX_PROJECTED_KEYS,
  RESOURCE_QUANTITY,
} from '../api/customapp.js';

/** How a ConfigMap or Secret of `configMaps` or `secrets` reaches the container. */
export interface ProjectionOptions {
  /**
   * An absolute path where the keys appear as read-only files, one per key.
   * @default none: the keys are environment variables
   */
  readonly mountPath?: string;
  /**
   * Only these keys are projected, and only a change to one of them rolls the pods.
   * @default every key
   */
  readonly keys?: readonly string[];
  /**
   * The pods start while the object (or a listed key) is missing.
   * @default false: they wait for it
   */
  readonly optional?: boolean;
}

/** A ConfigMap the container reads (`spec.configMaps[]`). */
export interface ConfigMapProjection extends ProjectionOptions {
  /** The ConfigMap: a cdk8s-plus ConfigMap, a `ConfigMap.fromConfigMapName` reference, or its name. */
  readonly configMap: kplus.IConfigMap | string;
}

/** A Secret the container reads (`spec.secrets[]`). */
export interface SecretProjection extends ProjectionOptions {
  /** The Secret: a cdk8s-plus Secret, a `Secret.fromSecretName` reference, or its name. */
  readonly secret: kplus.ISecret | string;
}

/** How rollouts caused by new ConfigMap or Secret content are governed (`spec.rollout`). */
export interface CustomAppRollout {
  /**
   * Roll only once the referenced objects have been quiet this long (whole seconds, at most an hour), so that a burst of
   * edits rolls once.
   * @default no debounce
   */
  readonly debounce?: Duration;
  /**
   * Hold content rollouts; the latest content rolls once when unpaused. Spec changes still roll.
   * @default false
   */
  readonly paused?: boolean;
  /**
   * A rollout that makes no progress for this long (whole seconds) is Failed.
   * @default Kubernetes' 600 seconds
   */
  readonly progressDeadline?: Duration;
}

/** Properties of {@link CustomApp}. */
export interface CustomAppProps {
  /**
   * Metadata of the CustomApp; its Deployment (and Service) take its name.
   * @default a name generated from the construct path, in the chart's namespace
   */
  readonly metadata?: ApiObjectMetadata;
  /** The container image, for example `registry.example.com/app:1.2.3`. */
  readonly image: string;
  /**
   * A ConfigMap injected whole with envFrom (`spec.configMapName`).
   * @default none
   */
  readonly configMapName?: kplus.IConfigMap | string;
  /**
   * A Secret injected whole with envFrom (`spec.secretName`).
   * @default none
   */
  readonly secretName?: kplus.ISecret | string;
  /**
   * ConfigMaps projected one by one, as variables or files, optionally by key (`spec.configMaps`); add more with
   * {@link CustomApp.addConfigMap}.
   * @default none
   */
  readonly configMaps?: readonly ConfigMapProjection[];
  /**
   * Secrets projected one by one (`spec.secrets`); add more with {@link CustomApp.addSecret}.
   * @default none
   */
  readonly secrets?: readonly SecretProjection[];
  /**
   * Number of pods.
   * @default 1
   */
  readonly replicas?: number;
  /**
   * The container port; a ClusterIP Service of the CustomApp's name exposes it.
   * @default no port and no Service
   */
  readonly port?: number;
  /**
   * An HTTP path probed on `port` before a pod counts as ready. Needs `port`.
   * @default no readiness probe
   */
  readonly readinessPath?: string;
  /**
   * How content rollouts are governed.
   * @default roll at once
   */
  readonly rollout?: CustomAppRollout;
  /**
   * The container's requests and limits (CPU and memory, such as `Cpu.millis(250)`, `Cpu.units(1.5)`, `Size.mebibytes(64)`).
   * @default the operator's: requests 50m CPU and 64Mi memory, a 256Mi memory limit
   */
  readonly resources?: Pick<kplus.ContainerResources, 'cpu' | 'memory'>;
  /**
   * Plain environment variables, set after the envFrom sources (a name here wins).
   * @default none
   */
  readonly env?: Readonly<Record<string, string>>;
}

/** A projection as the spec holds it, with the object's namespace where it is a construct (to check it is the app's). */
interface Projection {
  readonly entry: CustomAppSpecConfigMaps;
  readonly namespace?: string;
}

/**
 * A CustomApp (`app.example.com/v1`): the operator runs it as a Deployment with its ConfigMaps and Secrets, and rolls
 * it when their content changes. Bad props fail `cdk8s synth` with an error that quotes them.
 *
 * @example
 * const config = new kplus.ConfigMap(chart, 'config', { data: { GREETING: 'hello' } });
 * const app = new CustomApp(chart, 'web', { image: 'nginx:1.27', port: 8080, readinessPath: '/healthz' });
 * app.addConfigMap(config, { mountPath: '/etc/web', keys: ['GREETING'] });
 */
export class CustomApp extends Construct {
  /** The `CustomApp` API object (the class `cdk8s import` generated from the CRD). */
  public readonly apiObject: CustomAppResource;
  private readonly configMaps: Projection[] = [];
  private readonly secrets: Projection[] = [];
  private readonly env: Array<[string, string]>;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: CustomAppProps,
  ) {
    super(scope, id);
    this.env = Object.entries(props.env ?? {});
    for (const { configMap, ...options } of props.configMaps ?? []) this.addConfigMap(configMap, options);
    for (const { secret, ...options } of props.secrets ?? []) this.addSecret(secret, options);
    this.apiObject = new CustomAppResource(this, 'Resource', {
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this.renderSpec() }) as unknown as CustomAppSpec,
    });
    this.node.addValidation({ validate: () => this.problems() });
  }

  /** The CustomApp's name, which its Deployment and Service take. */
  public get name(): string {
    return this.apiObject.name;
  }

  /** Projects a ConfigMap into the container (`spec.configMaps[]`): as variables, or as files under `mountPath`. */
  public addConfigMap(configMap: kplus.IConfigMap | string, options: ProjectionOptions = {}): void {
    this.configMaps.push(projection(configMap, options));
  }

  /** Projects a Secret into the container (`spec.secrets[]`): as variables, or as files under `mountPath`. */
  public addSecret(secret: kplus.ISecret | string, options: ProjectionOptions = {}): void {
    this.secrets.push(projection(secret, options));
  }

  /** Sets a plain environment variable (`spec.env[]`). */
  public addEnv(name: string, value: string): void {
    this.env.push([name, value]);
  }

  private renderSpec(): CustomAppSpec {
    const { props } = this;
    const list = <T>(items: readonly T[]): T[] | undefined => (items.length ? [...items] : undefined);
    return {
      image: props.image,
      configMapName: props.configMapName === undefined ? undefined : nameOf(props.configMapName),
      secretName: props.secretName === undefined ? undefined : nameOf(props.secretName),
      configMaps: list(this.configMaps.map((p) => p.entry)),
      secrets: list(this.secrets.map((p) => p.entry)),
      env: list(this.env.map(([name, value]) => ({ name, value }))),
      replicas: props.replicas,
      port: props.port,
      readinessPath: props.readinessPath,
      rollout: props.rollout && {
        debounceSeconds: props.rollout.debounce?.toSeconds({ integral: false }),
        paused: props.rollout.paused,
        progressDeadlineSeconds: props.rollout.progressDeadline?.toSeconds({ integral: false }),
      },
      resources: props.resources && renderResources(props.resources),
    };
  }

  /** Every problem of the props, each quoting the input; empty when the CustomApp would be accepted. */
  private problems(): string[] {
    const { props } = this;
    const problems: string[] = [];
    const name = this.apiObject.name;
    const namespace = namespaceOf(this.apiObject);
    if (props.image.trim() === '') problems.push('image is empty');
    checkName(problems, 'metadata.name', name);
    if (props.port !== undefined && !/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name)) {
      problems.push(
        `metadata.name "${name}" with a port: the Service of that name needs a DNS-1035 label (a-z first, at most 63 characters)`,
      );
    }
    if (props.configMapName !== undefined) checkName(problems, 'configMapName', nameOf(props.configMapName));
    if (props.secretName !== undefined) checkName(problems, 'secretName', nameOf(props.secretName));
    checkProjections(problems, 'configMaps', this.configMaps, namespace);
    checkProjections(problems, 'secrets', this.secrets, namespace);
    if (props.replicas !== undefined && !(Number.isInteger(props.replicas) && props.replicas >= 0)) {
      problems.push(`replicas ${props.replicas} is not a whole number ≥ 0`);
    }
    if (props.port !== undefined && !(Number.isInteger(props.port) && props.port >= 1 && props.port <= 65535)) {
      problems.push(`port ${props.port} is not a whole number from 1 to 65535`);
    }
    if (props.readinessPath !== undefined) {
      if (props.port === undefined) problems.push(`readinessPath "${props.readinessPath}" needs a port to probe: set port`);
      if (!props.readinessPath.startsWith('/')) problems.push(`readinessPath "${props.readinessPath}" does not start with "/"`);
    }
    const debounce = props.rollout?.debounce?.toSeconds({ integral: false });
    if (debounce !== undefined && !(Number.isInteger(debounce) && debounce >= 0 && debounce <= MAX_DEBOUNCE_SECONDS)) {
      problems.push(`rollout.debounce ${debounce}s is not a whole number of seconds from 0 to ${MAX_DEBOUNCE_SECONDS}`);
    }
    const deadline = props.rollout?.progressDeadline?.toSeconds({ integral: false });
    if (deadline !== undefined && !(Number.isInteger(deadline) && deadline >= 1 && deadline <= 86400)) {
      problems.push(`rollout.progressDeadline ${deadline}s is not a whole number of seconds from 1 to 86400`);
    }
    for (const [path, quantity] of Object.entries(quantitiesOf(props.resources))) {
      if (!new RegExp(RESOURCE_QUANTITY).test(quantity))
        problems.push(`${path} "${quantity}" is not a resource quantity such as "250m", "0.5" or "1.5Gi"`);
    }
    if (this.env.length > MAX_ENV) problems.push(`env has ${this.env.length} variables, more than ${MAX_ENV}`);
    const envNames = new Set<string>();
    for (const [variable] of this.env) {
      if (!new RegExp(ENV_NAME).test(variable))
        problems.push(`env "${variable}" is not a variable name (letters, digits, '_', '-', '.', no digit first)`);
      if (envNames.has(variable)) problems.push(`env "${variable}" is set twice`);
      envNames.add(variable);
    }
    return problems.map((problem) => `CustomApp "${name}": ${problem}`);
  }
}

/** The name of a ConfigMap or Secret given as an object or a name. */
function nameOf(ref: kplus.IResource | string): string {
  return typeof ref === 'string' ? ref : ref.name;
}

/** The namespace an API object lands in: its own, or its chart's default. */
function namespaceOf(object: ApiObject): string | undefined {
  return object.metadata.namespace ?? Chart.of(object).namespace;
}

function projection(ref: kplus.IResource | string, options: ProjectionOptions): Projection {
  // A construct in this app (a cdk8s-plus ConfigMap or Secret) has a namespace to compare with the CustomApp's; a
  // reference by name has none, and the CustomApp reads it in its own namespace.
  const namespace =
    typeof ref !== 'string' && Construct.isConstruct(ref) && ref.node.defaultChild ? namespaceOf(ApiObject.of(ref)) : undefined;
  return {
    entry: {
      name: nameOf(ref),
      mountPath: options.mountPath,
      keys: options.keys ? [...options.keys] : undefined,
      optional: options.optional,
    },
    namespace,
  };
}

function checkName(problems: string[], field: string, name: string): void {
  if (!isObjectName(name)) {
    problems.push(
      `${field} "${name}" is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most ${DNS1123_SUBDOMAIN_MAX})`,
    );
  }
}

function checkProjections(problems: string[], field: string, projections: readonly Projection[], namespace: string | undefined): void {
  if (projections.length > MAX_PROJECTED) problems.push(`${field} has ${projections.length} entries, more than ${MAX_PROJECTED}`);
  const seen = new Set<string>();
  for (const { entry, namespace: objectNamespace } of projections) {
    const at = `${field}["${entry.name}"]`;
    checkName(problems, `${field} name`, entry.name);
    if (seen.has(entry.name)) problems.push(`${at} is listed twice (merge its keys into one entry)`);
    seen.add(entry.name);
    if (objectNamespace !== undefined && objectNamespace !== namespace) {
      problems.push(
        `${at} is in namespace "${objectNamespace}", the CustomApp in "${namespace ?? 'default'}": it reads only its own namespace`,
      );
    }
    if (entry.mountPath !== undefined && !(entry.mountPath.startsWith('/') && entry.mountPath.length >= 2)) {
      problems.push(`${at}.mountPath "${entry.mountPath}" is not an absolute path`);
    }
    if (entry.keys === undefined) continue;
    if (entry.keys.length === 0) problems.push(`${at}.keys is empty: list at least one key, or leave keys out for every key`);
    if (entry.keys.length > MAX_PROJECTED_KEYS) problems.push(`${at}.keys has ${entry.keys.length} keys, more than ${MAX_PROJECTED_KEYS}`);
    for (const key of entry.keys) {
      if (!new RegExp(DATA_KEY).test(key)) problems.push(`${at}.keys "${key}" is not a data key (letters, digits, '-', '_', '.')`);
    }
    if (new Set(entry.keys).size !== entry.keys.length) problems.push(`${at}.keys lists a key twice`);
  }
}

/** Memory in the largest binary unit that holds it whole (the form the API server stores). */
function memoryQuantity(size: NonNullable<kplus.MemoryResources['request']>): string {
  const kibibytes = size.toKibibytes();
  if (kibibytes % (1024 * 1024) === 0) return `${kibibytes / (1024 * 1024)}Gi`;
  if (kibibytes % 1024 === 0) return `${kibibytes / 1024}Mi`;
  return `${kibibytes}Ki`;
}

/** Each quantity of the props by its spec path. */
function quantitiesOf(resources: CustomAppProps['resources']): Record<string, string> {
  const quantities: Record<string, string> = {};
  const put = (path: string, value: string | undefined): void => {
    if (value !== undefined) quantities[path] = value;
  };
  put('resources.requests.cpu', resources?.cpu?.request?.amount);
  put('resources.limits.cpu', resources?.cpu?.limit?.amount);
  put('resources.requests.memory', resources?.memory?.request && memoryQuantity(resources.memory.request));
  put('resources.limits.memory', resources?.memory?.limit && memoryQuantity(resources.memory.limit));
  return quantities;
}

function renderResources(resources: NonNullable<CustomAppProps['resources']>): CustomAppSpecResources {
  const q = quantitiesOf(resources);
  const section = (cpu: string | undefined, memory: string | undefined) => (cpu || memory ? { cpu, memory } : undefined);
  return {
    requests: section(q['resources.requests.cpu'], q['resources.requests.memory']),
    limits: section(q['resources.limits.cpu'], q['resources.limits.memory']),
  };
}
