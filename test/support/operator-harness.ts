// Runs the operator in-process against a test cluster, as its own ServiceAccount, and collects its log lines.
import { resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { KubeClient } from '../../operator/kube/client.js';
import type { RequestSample } from '../../operator/kube/options.js';
import type { KubeObject } from '../../operator/kube/objects.js';
import { ApiError, isAlreadyExists } from '../../operator/kube/errors.js';
import { CONFIGMAPS, SECRETS, type Resource } from '../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import { UNGOVERNED } from '../../operator/governance/governance.js';
import { createOperator, type Operator, type OperatorOptions } from '../../operator/operator.js';
import type { ExecutionContext, TestFn } from 'ava';
import { type ApiTarget, selectedTargets, startCluster, type ClusterOptions, type Target, type TestCluster } from './targets.js';
import { JsonLineReader } from './json-lines.js';
import { getIfExists, NamespaceReads } from './cluster-reads.js';
import { createNamespace } from '../../operator/kube/testing/admin-cluster.js';

export { eventually } from './eventually.js';
export { createNamespace } from '../../operator/kube/testing/admin-cluster.js';
export { getIfExists } from './cluster-reads.js';
import { policyRules, roleScopes } from '../../infra/operator-rbac.js';
import { type Permission, SHARDING_PERMISSIONS, workloadPermissions } from '../../infra/permissions.js';
import type { WorkloadResource } from '../../api/workload.js';

const DIST = resolve(import.meta.dirname, '../../dist');

/** Log lines of one operator, parsed. */
export class LogLines {
  readonly lines: Record<string, unknown>[] = [];
  readonly raw: string[] = [];
  private readonly reader = new JsonLineReader<Record<string, unknown>>((line) => this.lines.push(line));

  /** A pino destination that keeps every line. */
  readonly destination = {
    write: (line: string): void => {
      this.raw.push(line);
      this.reader.push(line);
    },
  };

  /** The lines whose `msg` is `msg` and whose fields include `fields`. */
  find(msg: string, fields: Readonly<Record<string, unknown>> = {}): Record<string, unknown>[] {
    return this.lines.filter((line) => line.msg === msg && Object.entries(fields).every(([name, value]) => line[name] === value));
  }

  /** Everything logged, as one string (to look for a value that must never appear). */
  text(): string {
    return this.raw.join('');
  }
}

/**
 * Applies dist/ (the CRD, namespace, RBAC and the operator Deployment object), or another install synthesized into
 * `dir`, and waits for the CRD.
 */
export async function installOperatorResources(cluster: TestCluster, dir = DIST): Promise<void> {
  const applied = await cluster.kubectl(['apply', '-f', dir]);
  if (applied.code !== 0) throw new Error(`kubectl apply -f ${dir} failed: ${applied.stderr}`);
  const established = await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=30s', 'crd/customapps.app.example.com']);
  if (established.code !== 0) throw new Error(`the CRD is not established: ${established.stderr}`);
}

/** An admin API client that counts its requests. */
export async function adminClient(cluster: TestCluster): Promise<KubeClient> {
  return KubeClient.fromKubeConfig(cluster.adminKubeConfig());
}

/** A running in-process operator and what it logged. */
export interface TestOperator {
  readonly operator: Operator;
  readonly logs: LogLines;
  /** Every API request the operator made. */
  readonly requests: RequestSample[];
}

/** How {@link startTestOperator} connects and what it waits for. */
export interface TestOperatorConnection {
  /** Reach the API server through this URL instead (for example a fault proxy in front of it). @default the cluster's */
  readonly server?: string;
  /** Wait until the operator reconciles. @default true */
  readonly waitForStart?: boolean;
}

/** The ServiceAccount's client configuration, pointed at `server` when given. */
async function operatorKubeConfig(cluster: TestCluster, server: string | undefined): Promise<KubeConfig> {
  const { kubeConfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
  if (!server) return kubeConfig;
  const redirected = new KubeConfig();
  redirected.loadFromOptions({
    // client-node refuses a plain http:// server unless told to skip TLS verification (there is no TLS to verify).
    clusters: kubeConfig.clusters.map((entry) => ({ ...entry, server, ...(server.startsWith('http:') ? { skipTLSVerify: true } : {}) })),
    users: kubeConfig.users,
    contexts: kubeConfig.contexts,
    currentContext: kubeConfig.currentContext,
  });
  return redirected;
}

/**
 * Starts an operator authenticated as the ServiceAccount that dist/ binds (so its RBAC is what is exercised),
 * logging at debug into a {@link LogLines}, and (unless told otherwise) waits until it reconciles. Stop it with
 * `operator.stop()`. The rollout governance is off unless `options.rollouts` turns it on.
 */
export async function startTestOperator(
  cluster: TestCluster,
  options: Partial<OperatorOptions> = {},
  connection: TestOperatorConnection = {},
): Promise<TestOperator> {
  const logs = new LogLines();
  const requests: RequestSample[] = [];
  const kubeConfig = await operatorKubeConfig(cluster, connection.server);
  const metricsHolder: { onRequest?: (sample: RequestSample) => void } = {};
  const client = await KubeClient.fromKubeConfig(kubeConfig, {
    userAgent: OPERATOR_NAME,
    onRequest: (sample) => {
      requests.push(sample);
      metricsHolder.onRequest?.(sample);
    },
  });
  const operator = await createOperator({
    client,
    logger: pino({ level: 'debug' }, logs.destination),
    maxConcurrentReconciles: 4,
    // No Deployment ever completes on the API targets (no Deployment controller runs there): the governance would hold
    // every rollout past the budget forever. Its own tests turn it on (`rollouts`).
    rollouts: UNGOVERNED,
    ...options,
  });
  metricsHolder.onRequest = operator.metrics.onRequest;
  if (connection.waitForStart ?? true) await withTimeout(operator.started, 30_000, 'the operator did not start reconciling');
  return { operator, logs, requests };
}

const CLUSTER_ROLES: Resource = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural: 'clusterroles',
  kind: 'ClusterRole',
  namespaced: false,
};
const CLUSTER_ROLE_BINDINGS: Resource = { ...CLUSTER_ROLES, plural: 'clusterrolebindings', kind: 'ClusterRoleBinding' };
const ROLES: Resource = { ...CLUSTER_ROLES, plural: 'roles', kind: 'Role', namespaced: true };
const ROLE_BINDINGS: Resource = { ...CLUSTER_ROLES, plural: 'rolebindings', kind: 'RoleBinding', namespaced: true };

/**
 * Grants the operator's ServiceAccount what the operator chart's `workloads` prop adds for `resources` (the same rules,
 * `workloadPermissions`; or `permissions`, to narrow them), as a ClusterRole of its own and its binding, or, for an
 * operator that watches `namespace` alone, as a Role there and its binding: what applying a chart with that prop (and
 * `namespaces`) grants. A second call replaces the rules.
 */
export async function grantWorkloadPermissions(
  admin: KubeClient,
  resources: readonly WorkloadResource[],
  permissions: readonly Permission[] = workloadPermissions(resources),
  namespace?: string,
): Promise<void> {
  const name = `${OPERATOR_NAME}-workloads`;
  // The scopes the chart puts in the ClusterRole, or in the Role of a watched namespace.
  const { cluster, roles } = roleScopes(OPERATOR_NAMESPACE, namespace === undefined ? undefined : [namespace]);
  const scopes = namespace === undefined ? cluster : roles.get(namespace)!;
  const role = namespace === undefined ? CLUSTER_ROLES : ROLES;
  const existing = await getIfExists<KubeObject>(admin, role, namespace ?? '', name);
  if (existing) await admin.delete(role, namespace, name);
  await bindToOperator(admin, name, policyRules(permissions, scopes), namespace);
}

/**
 * Creates `rules` as a ClusterRole named `name` (a Role in `namespace` when given) and its binding to the operator's
 * ServiceAccount; one that exists already is kept as it is.
 */
async function bindToOperator(admin: KubeClient, name: string, rules: unknown[], namespace?: string): Promise<void> {
  const [role, binding] = namespace === undefined ? [CLUSTER_ROLES, CLUSTER_ROLE_BINDINGS] : [ROLES, ROLE_BINDINGS];
  const metadata = { name, ...(namespace === undefined ? {} : { namespace }) };
  const rbac = { apiVersion: 'rbac.authorization.k8s.io/v1' };
  for (const [resource, object] of [
    [role, { ...rbac, kind: role.kind, metadata, rules }],
    [
      binding,
      {
        ...rbac,
        kind: binding.kind,
        metadata,
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: role.kind, name },
        subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: OPERATOR_NAMESPACE }],
      },
    ],
  ] as const) {
    await admin.create(resource, namespace, object as unknown as KubeObject).catch((error: unknown) => {
      if (!isAlreadyExists(error)) throw error;
    });
  }
}

/** The HTTP status of a request's answer: 2xx when it succeeded, the API error's code when it was refused. */
export async function statusOf(request: Promise<unknown>): Promise<number> {
  try {
    await request;
    return 200;
  } catch (error) {
    if (error instanceof ApiError) return error.statusCode;
    throw error;
  }
}

/**
 * Grants the operator's ServiceAccount, in its own namespace, what the operator chart's `sharding` prop adds
 * (`SHARDING_PERMISSIONS`), as a Role of its own and its binding: what applying a chart with that prop grants.
 */
export async function grantShardingPermissions(admin: KubeClient): Promise<void> {
  await bindToOperator(admin, `${OPERATOR_NAME}-sharding`, policyRules(SHARDING_PERMISSIONS, 'operator-namespace'), OPERATOR_NAMESPACE);
}

/** Resolves `promise`, or rejects after `ms` with `what`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface ConfigMapLike extends KubeObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  type?: string;
}

/** Object builders for tests. */
export const objects = {
  configMap: (namespace: string, name: string, data: Record<string, string>): ConfigMapLike => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
    data,
  }),
  secret: (namespace: string, name: string, data: Record<string, string>): ConfigMapLike => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'Opaque',
    data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')])),
  }),
  customApp: (namespace: string, name: string, spec: CustomApp['spec']): CustomApp => ({
    apiVersion: 'app.example.com/v1',
    kind: 'CustomApp',
    metadata: { name, namespace },
    spec,
  }),
};

/** Creates objects in order. */
export async function createAll(client: KubeClient, ...items: readonly KubeObject[]): Promise<void> {
  for (const item of items) await client.create(resourceOf(item), item.metadata.namespace, item);
}

function resourceOf(object: KubeObject): Resource {
  switch (object.kind) {
    case 'ConfigMap':
      return CONFIGMAPS;
    case 'Secret':
      return SECRETS;
    case 'CustomApp':
      return CUSTOM_APPS;
    default:
      throw new Error(`test helper: no resource for kind "${object.kind}"`);
  }
}

/** What a scenario file that starts its own operators shares: the cluster with dist/ applied, and an admin client. */
export interface ClusterScenario {
  cluster: TestCluster;
  admin: KubeClient;
  /**
   * Creates the namespace `namespace` (fine if it exists), then `items` in it in order, through the admin client, and
   * answers the admin's reads of it: the start of a test that works in a namespace of its own.
   */
  createNamespace(namespace: string, ...items: readonly KubeObject[]): Promise<NamespaceReads>;
}

/** The cluster a scenario starts, and what it installs there. */
export interface ScenarioOptions extends ClusterOptions {
  /**
   * Installs the operator's resources in place of dist/: a partial install, one synthesized with the chart's props, or
   * nothing (a file that applies its own charts). It runs once the admin client is made.
   * @default dist/ applied and its CRD established ({@link installOperatorResources})
   */
  readonly install?: (scenario: ClusterScenario) => Promise<void>;
}

/**
 * Starts a cluster of `target`, makes an admin client and installs the operator's resources, filling `scenario` as each
 * is made, so that whoever stops it afterwards stops what was started even when a later step failed.
 */
async function startScenario(scenario: Partial<ClusterScenario>, target: Target, options: ScenarioOptions = {}): Promise<void> {
  const { install = ({ cluster }: ClusterScenario) => installOperatorResources(cluster), ...clusterOptions } = options;
  scenario.cluster = await startCluster(target, clusterOptions);
  const admin = await adminClient(scenario.cluster);
  scenario.admin = admin;
  scenario.createNamespace = async (namespace, ...items) => {
    await createNamespace(admin, namespace);
    await createAll(admin, ...items);
    return new NamespaceReads(admin, namespace);
  };
  await install(scenario as ClusterScenario);
}

/** Closes the admin client and stops the cluster of a scenario, as far as it was started. */
async function stopScenario(scenario: Partial<ClusterScenario>): Promise<void> {
  scenario.admin?.close();
  await scenario.cluster?.stop();
}

/**
 * Registers `before` and `after.always` hooks that start a cluster of `target`, make an admin client, apply dist/ (or
 * what `options.install` installs) and run `prepare` (what every test of the file needs beside them: a token, a
 * kubeconfig, an operator); and stop them afterwards, what `prepare` returned first (stopping what it started). The
 * returned object is filled in by the `before` hook.
 */
export function clusterScenario(
  test: TestFn,
  target: Target,
  options?: ScenarioOptions,
  prepare?: (scenario: ClusterScenario) => Promise<(() => Promise<void>) | void>,
): ClusterScenario {
  const scenario = {} as ClusterScenario;
  let cleanup: (() => Promise<void>) | void;
  test.before(async () => {
    await startScenario(scenario, target, options);
    cleanup = await prepare?.(scenario);
  });
  test.after.always(async () => {
    await cleanup?.();
    await stopScenario(scenario);
  });
  return scenario;
}

/** The tests of a file that runs on one API target only, and the scenario they share there. */
export interface TargetSuite {
  /** Declares a serial test on the target, or, when `KUBE_TARGET` does not select it, a skipped test of the same title that says why. */
  readonly onTarget: (title: string, body: (t: ExecutionContext) => Promise<void>) => void;
  /** The scenario ({@link clusterScenario}), filled in by the `before` hook; its hooks are registered only when the target is selected. */
  readonly scenario: ClusterScenario;
}

/**
 * A file's {@link clusterScenario} on `target` alone (a test that needs a real API server's schema or its
 * controllers): started only when `KUBE_TARGET` selects `target`, each test declared on it or skipped saying why.
 */
export function targetSuite(
  test: TestFn,
  target: ApiTarget,
  options?: ScenarioOptions,
  prepare?: (scenario: ClusterScenario) => Promise<(() => Promise<void>) | void>,
): TargetSuite {
  const selected = selectedTargets().includes(target);
  const scenario = selected ? clusterScenario(test, target, options, prepare) : ({} as ClusterScenario);
  return {
    scenario,
    onTarget: (title, body) => {
      if (selected) test.serial(title, body);
      else test.skip(`${title} (KUBE_TARGET="${process.env.KUBE_TARGET ?? ''}" does not select ${target})`, () => undefined);
    },
  };
}

/**
 * A cluster of `target` for one test (one that needs its own: a process it kills, a fault proxy in front, emulator
 * options of its own): started, an admin client made and dist/ applied (or what `options.install` installs), all
 * stopped when the test ends.
 */
export async function clusterForTest(t: ExecutionContext, target: Target, options?: ScenarioOptions): Promise<ClusterScenario> {
  const scenario: Partial<ClusterScenario> = {};
  t.teardown(() => stopScenario(scenario));
  await startScenario(scenario, target, options);
  return scenario as ClusterScenario;
}

/** What a scenario file shares: the cluster, an admin client, and the operator under test (replaceable, for restarts). */
export interface OperatorScenario extends ClusterScenario {
  running: TestOperator;
}

/**
 * Registers `before` and `after.always` hooks that start a cluster of `target` (with garbage collection on
 * envtest), apply dist/, make an admin client and start the operator with `operatorOptions` (granting what its
 * `workloads` need, as the chart's prop would); and stop all of it afterwards. The returned
 * object is filled in by the `before` hook.
 */
export function operatorScenario(
  test: TestFn,
  target: Target,
  options: ScenarioOptions = { envtest: { controllerManager: true } },
  operatorOptions: Partial<OperatorOptions> = {},
): OperatorScenario {
  const scenario = clusterScenario(test, target, options, async (started) => {
    if (operatorOptions.workloads?.length) await grantWorkloadPermissions(started.admin, operatorOptions.workloads);
    scenario.running = await startTestOperator(started.cluster, operatorOptions);
    // The operator running at the end: a test may have replaced it (a restart).
    return () => scenario.running.operator.stop();
  }) as OperatorScenario;
  return scenario;
}

/** The operator's /readyz answer (started with a `healthProbeBindAddress`). */
export async function readyz(running: TestOperator): Promise<{ status: number; text: string }> {
  const answer = await fetch(`${running.operator.healthUrl}/readyz`);
  return { status: answer.status, text: await answer.text() };
}
