// The embedded default of `npm start`: the emulator, with dist/ and the samples applied, and kubeconfigs to reach it.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
// The module itself, not the package's index: the index loads every client-node helper (exec, attach, cp with its tar
// and WebSocket libraries) at start, 5 MiB of RSS the operator never uses.
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { parseAllDocuments } from 'yaml';
import { CRD_NAME, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../api/customapp.js';
import { KubeClient } from './kube/client.js';
import type { KubeObject } from './kube/objects.js';
import { isAlreadyExists } from './kube/errors.js';
import { CONFIGMAPS, DEPLOYMENTS, NAMESPACES, SECRETS, SERVICES, type Resource } from './kube/resources.js';
import { CUSTOM_APPS } from './customapp/custom-app.js';
import type { Logger } from './log.js';

/** Where dist/ is, relative to this file. */
export const DIST_DIR = resolve(import.meta.dirname, '..', 'dist');

/** An rbac.authorization.k8s.io/v1 resource. */
function rbacResource(plural: string, kind: string, namespaced: boolean): Resource {
  return { group: 'rbac.authorization.k8s.io', version: 'v1', plural, kind, namespaced };
}

/** The kinds dist/ and its samples hold, and where they go. */
const RESOURCES: Readonly<Record<string, Resource>> = {
  'v1/Namespace': NAMESPACES,
  'v1/ConfigMap': CONFIGMAPS,
  'v1/Secret': SECRETS,
  'v1/ServiceAccount': { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  'v1/Service': SERVICES,
  'networking.k8s.io/v1/NetworkPolicy': {
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'networkpolicies',
    kind: 'NetworkPolicy',
    namespaced: true,
  },
  'apps/v1/Deployment': DEPLOYMENTS,
  'rbac.authorization.k8s.io/v1/ClusterRole': rbacResource('clusterroles', 'ClusterRole', false),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': rbacResource('clusterrolebindings', 'ClusterRoleBinding', false),
  'rbac.authorization.k8s.io/v1/Role': rbacResource('roles', 'Role', true),
  'rbac.authorization.k8s.io/v1/RoleBinding': rbacResource('rolebindings', 'RoleBinding', true),
  'apiextensions.k8s.io/v1/CustomResourceDefinition': {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
  },
  'app.example.com/v1/CustomApp': CUSTOM_APPS,
};

/** The objects of every `*.yaml` file directly in `dir`, file by file in name order. */
export function manifestsIn(dir: string): KubeObject[] {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort();
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8'))
      .map((document) => document.toJS() as KubeObject | null)
      .filter((object): object is KubeObject => object !== null),
  );
}

/** Creates each object (an existing one is left as it is). Throws with the object's kind and name on other errors. */
export async function createObjects(client: KubeClient, objects: readonly KubeObject[]): Promise<string[]> {
  const created: string[] = [];
  for (const object of objects) {
    const resource = RESOURCES[`${object.apiVersion}/${object.kind}`];
    if (!resource) throw new Error(`no resource known for ${object.apiVersion} ${object.kind} "${object.metadata.name}"`);
    try {
      await client.create(resource, resource.namespaced ? (object.metadata.namespace ?? 'default') : undefined, object);
      created.push(`${object.kind}/${object.metadata.name}`);
    } catch (error) {
      if (!isAlreadyExists(error))
        throw new Error(`creating ${object.kind} "${object.metadata.name}" failed: ${(error as Error).message}`, { cause: error });
    }
  }
  return created;
}

/** Waits until the CRD's Established condition is True. */
async function waitEstablished(client: KubeClient, timeoutMs = 30_000): Promise<void> {
  const crds = RESOURCES['apiextensions.k8s.io/v1/CustomResourceDefinition']!;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const crd = await client.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(crds, undefined, CRD_NAME);
    if (crd.status?.conditions?.some((condition) => condition.type === 'Established' && condition.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`CRD ${CRD_NAME} is not established after ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** A running embedded cluster. */
export interface EmbeddedCluster {
  /** The emulator's URL. */
  readonly url: string;
  /** An admin kubeconfig file for kubectl. */
  readonly kubeconfigPath: string;
  /** The operator's own identity: its ServiceAccount from dist/, so dist/'s RBAC is what it runs with. */
  readonly operatorKubeConfig: KubeConfig;
  /** Stops the emulator and removes the kubeconfig. */
  stop(): Promise<void>;
}

/** Options of {@link startEmbeddedCluster}. */
export interface EmbeddedOptions {
  readonly logger: Logger;
  /** The emulator's port. @default 0 (a free one) */
  readonly port?: number;
}

/**
 * Starts the emulator, applies dist/ (the CRD, the namespace, RBAC and the operator Deployment object; no pod runs
 * it, the operator runs here), waits for the CRD, applies dist/samples/, and writes an admin kubeconfig.
 */
export async function startEmbeddedCluster(options: EmbeddedOptions): Promise<EmbeddedCluster> {
  const { startEmulator } = await import('../emulator/index.js').catch((error: unknown) => {
    throw new Error(
      'no cluster is configured (--kubeconfig, KUBECONFIG, in-cluster, ~/.kube/config) and the embedded emulator is not part of this build',
      { cause: error },
    );
  });
  // Simulated Deployment status: READY turns True and `kubectl rollout status` completes, as on a cluster (no pod runs).
  const emulator = await startEmulator({ port: options.port ?? 0, simulateDeploymentStatus: true });
  const dir = mkdtempSync(join(tmpdir(), 'customapp-operator-'));
  try {
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, emulator.adminKubeconfig(), { mode: 0o600 });
    const adminConfig = new KubeConfig();
    adminConfig.loadFromString(emulator.adminKubeconfig());
    const admin = await KubeClient.fromKubeConfig(adminConfig);
    try {
      const installed = await createObjects(admin, manifestsIn(DIST_DIR));
      await waitEstablished(admin);
      const samples = await createObjects(admin, manifestsIn(join(DIST_DIR, 'samples')));
      options.logger.info({ url: emulator.url, installed, samples }, 'embedded cluster ready');
    } finally {
      admin.close();
    }
    const operatorKubeConfig = new KubeConfig();
    operatorKubeConfig.loadFromString(emulator.serviceAccountKubeconfig(OPERATOR_NAMESPACE, OPERATOR_NAME));
    return {
      url: emulator.url,
      kubeconfigPath,
      operatorKubeConfig,
      stop: async () => {
        await emulator.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Where the operator's endpoints listen, and the ports that were asked for. */
export interface ServedEndpoints {
  /** `https://host:port` of /metrics (`http://` with --metrics-secure=false), when served. */
  readonly metricsUrl?: string;
  /** `http://host:port` of /healthz and /readyz, when served. */
  readonly healthUrl?: string;
  /** The ports the addresses asked for (a different port means that one was busy). */
  readonly requested: { readonly metrics?: number; readonly probes?: number };
}

/**
 * `  /metrics  https://127.0.0.1:8080/metrics`, and why the port is not the one asked for, when it is not; for HTTPS
 * metrics, a curl with the admin kubeconfig's token (a TokenReview and SubjectAccessReview guard them).
 */
function endpointLines(endpoints: ServedEndpoints, kubeconfigPath?: string): string[] {
  const busy = (url: string, requested: number | undefined): string => {
    const port = Number(new URL(url).port);
    return requested !== undefined && requested !== 0 && port !== requested ? `   (port ${requested} is in use: a free port instead)` : '';
  };
  const lines: string[] = [];
  if (endpoints.metricsUrl) {
    lines.push(`  /metrics           ${endpoints.metricsUrl}/metrics${busy(endpoints.metricsUrl, endpoints.requested.metrics)}`);
    // Secure metrics (the default) want a token allowed to get /metrics: the admin kubeconfig's is.
    if (endpoints.metricsUrl.startsWith('https:') && kubeconfigPath) {
      const token = `$(kubectl --kubeconfig ${kubeconfigPath} config view --raw -o jsonpath='{.users[0].user.token}')`;
      lines.push(`                     curl -sk -H "Authorization: Bearer ${token}" ${endpoints.metricsUrl}/metrics`);
    }
  }
  if (endpoints.healthUrl) {
    const { healthUrl } = endpoints;
    lines.push(`  /healthz, /readyz  ${healthUrl}/healthz, ${healthUrl}/readyz${busy(healthUrl, endpoints.requested.probes)}`);
  }
  return lines.length === 0 ? [] : ['', 'The operator serves:', ...lines];
}

/** What `npm start` prints in embedded mode: how to reach the cluster with kubectl, and where the operator listens. */
export function embeddedInstructions(cluster: EmbeddedCluster, endpoints: ServedEndpoints = { requested: {} }): string {
  const kubectl = `kubectl --kubeconfig ${cluster.kubeconfigPath}`;
  return [
    '',
    `No cluster configured (--kubeconfig, KUBECONFIG, in-cluster, ~/.kube/config): running the embedded API emulator at ${cluster.url}`,
    'with dist/ and dist/samples/ applied. The operator runs as its ServiceAccount customapp-system/customapp-operator.',
    '',
    `  export KUBECONFIG=${cluster.kubeconfigPath}`,
    `  ${kubectl} get ca`,
    `  ${kubectl} get deployment hello -o jsonpath='{.spec.template.metadata.annotations}'`,
    `  ${kubectl} edit cm hello-config          # then watch the rollout in the trace below`,
    `  ${kubectl} patch cm hello-config -p '{"data":{"GREETING":"hi"}}'`,
    ...endpointLines(endpoints, cluster.kubeconfigPath),
    '',
    'Stop with Ctrl-C. Logs are pretty on a terminal and JSON otherwise (--log-format=json|pretty to choose).',
    '',
  ].join('\n');
}
