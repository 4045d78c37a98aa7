// The Deployment a CustomApp should have: a pure function of the CustomApp and the dependency hashes it rolls out with.
import { CONFIG_HASH_ANNOTATION, KEY_DIGESTS_ANNOTATION, ROLLOUT_ANNOTATION, SECRET_HASH_ANNOTATION } from '../../api/customapp.js';
import { TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import type { CustomApp, Quantity } from '../customapp/custom-app.js';
import type { Container, Deployment, EnvFromSource } from '../kube/objects.js';
import { ownedLabels, ownedMetadata, selectorLabels } from '../customapp/labels.js';
import { decodeHashes, encodeHashes, type RunningHashes } from '../podtemplate/hash-annotation.js';
import { decodeKeyDigests, encodeKeyDigests, type KeyDigests, type Projection, projectedSources, projectionKey } from './projections.js';
import { canonicalQuantity } from './quantity.js';

/** A referenced object the Deployment rolls out with: its name and content hash. */
export interface RolloutDependency {
  readonly name: string;
  readonly hash: string;
}

/** An entry of `spec.configMaps` or `spec.secrets` and the hash it rolls out with (of its keys alone when it lists keys). */
export interface ProjectedDependency extends Projection {
  /** Null for an optional object that is missing: the pods start without it. */
  readonly hash: string | null;
  /** For a projection with keys: the digest of each listed key it has (to name the keys a later change touches). */
  readonly keyDigests?: ReadonlyMap<string, string>;
}

/** What the Deployment is built from. */
export interface DeploymentInput {
  readonly app: CustomApp;
  /** The ConfigMap to inject, when the CustomApp references one. */
  readonly configMap?: RolloutDependency;
  /** The Secret to inject, when the CustomApp references one. */
  readonly secret?: RolloutDependency;
  /** The entries of `spec.configMaps` and `spec.secrets`, in spec order, with their hashes. */
  readonly projected?: readonly ProjectedDependency[];
  /**
   * The `app.example.com/rollout` annotation (the cause of this pod template), set when the template changes; left
   * out otherwise, so that the live value stays (it is not compared).
   */
  readonly rolloutCause?: string;
}

/**
 * Keys the operator sets only sometimes: when the desired Deployment lacks one, the live one must lack it too
 * (a removed reference or port is drift), for `driftPaths` and `withDesired`.
 */
export const DEPLOYMENT_OPTIONAL_KEYS: ReadonlyMap<string, readonly string[]> = new Map([
  [
    'spec.template.metadata.annotations',
    [CONFIG_HASH_ANNOTATION, SECRET_HASH_ANNOTATION, TEMPLATE_HASHES_ANNOTATION, KEY_DIGESTS_ANNOTATION],
  ],
  ['spec.template.spec', ['volumes']],
  ['spec.template.spec.containers[0]', ['env', 'envFrom', 'ports', 'readinessProbe', 'volumeMounts']],
  ['spec.template.spec.containers[0].resources', ['requests', 'limits']],
  ['spec.template.spec.containers[0].resources.requests', ['cpu', 'memory']],
  ['spec.template.spec.containers[0].resources.limits', ['cpu', 'memory']],
]);

/** Kubernetes' default `progressDeadlineSeconds`, set explicitly so that removing `spec.rollout.progressDeadlineSeconds` is drift. */
export const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;

/** The readiness probe's timing: every 5 s, un-Ready after 3 failures (Kubernetes' defaults but a shorter period). */
export const READINESS_PROBE = { periodSeconds: 5, failureThreshold: 3 } as const;

/** The name of the one container. */
export const APP_CONTAINER = 'app';

/**
 * Requests sized for a small web app, and a memory limit so that a leak stays local. No CPU limit: throttling hurts
 * latency more than it protects neighbours, and the request already reserves the share.
 */
export const DEFAULT_RESOURCES = {
  requests: { cpu: '50m', memory: '64Mi' },
  limits: { memory: '256Mi' },
} as const;

/**
 * The desired Deployment: named after the CustomApp, owned by it (controller ownerReference with
 * blockOwnerDeletion), labelled app.kubernetes.io/*, with envFrom for the ConfigMap and the Secret, `spec.env` after them, their content
 * hashes as pod-template annotations (a change rolls the pods), `spec.replicas` only when set, an httpGet readiness probe on `spec.readinessPath`
 * when set, `spec.rollout.progressDeadlineSeconds` (Kubernetes' 600 by default), and defaults that pass the restricted
 * Pod Security Standard: non-root, no privilege escalation, every capability dropped, RuntimeDefault seccomp, and no
 * ServiceAccount token.
 */
export function desiredDeployment(input: DeploymentInput): Deployment {
  const { app, configMap, secret, rolloutCause, projected = [] } = input;
  const name = app.metadata.name!;
  const sources = projectedSources(projected);
  const envFrom: EnvFromSource[] = [];
  if (configMap) envFrom.push({ configMapRef: { name: configMap.name } });
  if (secret) envFrom.push({ secretRef: { name: secret.name } });
  envFrom.push(...sources.envFrom);
  const annotations: Record<string, string> = {};
  if (configMap) annotations[CONFIG_HASH_ANNOTATION] = configMap.hash;
  if (secret) annotations[SECRET_HASH_ANNOTATION] = secret.hash;
  if (projected.length > 0) {
    annotations[TEMPLATE_HASHES_ANNOTATION] = encodeHashes(new Map(projected.map((each) => [projectionKey(each), each.hash])));
  }
  const keyDigests: KeyDigests = new Map(projected.flatMap((each) => (each.keyDigests ? [[projectionKey(each), each.keyDigests]] : [])));
  if (keyDigests.size > 0) annotations[KEY_DIGESTS_ANNOTATION] = encodeKeyDigests(keyDigests);
  // The API server drops an empty value (omitempty): leaving it out keeps the desired env equal to the stored one.
  // spec.env comes last: of two variables of one name the kubelet keeps the last, so a plain value wins over a key.
  const env = [
    ...sources.env,
    ...(app.spec.env ?? []).map(({ name: variable, value }) => (value ? { name: variable, value } : { name: variable })),
  ];
  const container: Container = {
    name: APP_CONTAINER,
    image: app.spec.image,
    ...(envFrom.length > 0 ? { envFrom } : {}),
    ...(env.length > 0 ? { env } : {}),
    ...(sources.volumeMounts.length > 0 ? { volumeMounts: sources.volumeMounts } : {}),
    ...(app.spec.port ? { ports: [{ name: 'http', containerPort: app.spec.port, protocol: 'TCP' }] } : {}),
    // Without a port there is nothing to probe: the schema (anyOf) refuses readinessPath without port on a real API server.
    ...(app.spec.port && app.spec.readinessPath
      ? { readinessProbe: { httpGet: { path: app.spec.readinessPath, port: app.spec.port }, ...READINESS_PROBE } }
      : {}),
    resources: app.spec.resources ? canonicalResources(app.spec.resources) : DEFAULT_RESOURCES,
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    },
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { ...ownedMetadata(app), ...(rolloutCause ? { annotations: { [ROLLOUT_ANNOTATION]: rolloutCause } } : {}) },
    spec: {
      // Unset replicas are left out: drift compares only the fields set here, so another writer's count (an HPA on
      // the Deployment) stands, and a created Deployment gets the API server's default of 1.
      ...(app.spec.replicas !== undefined ? { replicas: app.spec.replicas } : {}),
      progressDeadlineSeconds: app.spec.rollout?.progressDeadlineSeconds ?? DEFAULT_PROGRESS_DEADLINE_SECONDS,
      selector: { matchLabels: selectorLabels(name) },
      template: {
        metadata: { labels: ownedLabels(name), annotations },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [container],
          ...(sources.volumes.length > 0 ? { volumes: sources.volumes } : {}),
        },
      },
    },
  };
}

/** One section of `spec.resources`. */
type Quantities = { readonly cpu?: Quantity; readonly memory?: Quantity } | undefined;

/**
 * `spec.resources` with each quantity in the form the API server stores (`1000m` is stored as `1`): the desired
 * Deployment then equals the stored one, and an unusual spelling is no drift to write again and again.
 */
function canonicalResources(resources: { readonly requests?: Quantities; readonly limits?: Quantities }): Container['resources'] {
  const section = (quantities: Quantities) =>
    quantities &&
    // A quantity left out is absent or null (a server-side apply may write null); 0, a whole number, is a quantity.
    Object.fromEntries(
      Object.entries(quantities).flatMap(([name, value]) =>
        value === undefined || value === null ? [] : [[name, canonicalQuantity(value)]],
      ),
    );
  const requests = section(resources.requests);
  const limits = section(resources.limits);
  return {
    ...(requests && Object.keys(requests).length > 0 ? { requests } : {}),
    ...(limits && Object.keys(limits).length > 0 ? { limits } : {}),
  };
}

/** The ConfigMap and Secret a Deployment runs with. */
export interface RunningWith {
  readonly configMap?: RolloutDependency;
  readonly secret?: RolloutDependency;
  /** The listed objects' hashes by `Kind/name` (null: an optional object that was missing); empty when none. */
  readonly projected: RunningHashes;
  /** The digests of the listed keys the pods run with, by `Kind/name`, for the objects read by keys. */
  readonly keyDigests: KeyDigests;
}

/**
 * What a Deployment of ours runs with, read back from it: the names in the app container's `envFrom` and the hashes
 * in the pod template's annotations (the inverse of {@link desiredDeployment}). The Deployment is the truth of what
 * the pods read, whatever the status says: a status write that failed (a 409 after a spec change, say) loses nothing.
 */
export function runningWith(deployment: Deployment): RunningWith {
  const container = deployment.spec.template.spec.containers.find((each) => each.name === APP_CONTAINER);
  const annotations = deployment.spec.template.metadata?.annotations ?? {};
  const configMapName = container?.envFrom?.find((source) => source.configMapRef)?.configMapRef?.name;
  const secretName = container?.envFrom?.find((source) => source.secretRef)?.secretRef?.name;
  const configHash = annotations[CONFIG_HASH_ANNOTATION];
  const secretHash = annotations[SECRET_HASH_ANNOTATION];
  return {
    configMap: configMapName && configHash ? { name: configMapName, hash: configHash } : undefined,
    secret: secretName && secretHash ? { name: secretName, hash: secretHash } : undefined,
    projected: decodeHashes(annotations[TEMPLATE_HASHES_ANNOTATION]) ?? new Map(),
    keyDigests: decodeKeyDigests(annotations[KEY_DIGESTS_ANNOTATION]),
  };
}
