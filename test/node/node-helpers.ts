// Helpers of the real-node tests: the node started for a file, kubectl that must succeed, polling with a deadline, pods and rollouts read as admin.
import type { ExecutionContext, TestFn } from 'ava';
import type { NodeCluster } from '../../envtest/node/harness.js';
import { nodeSelected, type KubectlOptions, startCluster, type TestCluster } from '../support/targets.js';
import { eventually } from '../support/eventually.js';
import { parseJsonLines } from '../support/json-lines.js';

/**
 * Starts the real node for a test file's `before` hook, logging its start phases: the first run builds the node's
 * binaries and images (minutes, hence the hook's timeout); later runs start in about 15 s. A machine that cannot run
 * it is said so, with the cause.
 */
export async function startNodeCluster(t: ExecutionContext): Promise<TestCluster> {
  t.timeout(45 * 60_000);
  try {
    return await startCluster('cluster', {
      cluster: { log: (event, fields) => event !== 'build' && t.log(event, JSON.stringify(fields)) },
    });
  } catch (error) {
    throw new Error(`the real node cannot run on this machine (npm run cluster): ${(error as Error).message}`, { cause: error });
  }
}

/** A real-node test's body. */
export type NodeTestBody = (t: ExecutionContext) => Promise<void>;

/**
 * Declares a real-node test (serial: the tests of a file share its node), or, when `KUBE_TARGET` does not select the
 * node, a skipped test of the same title that says why.
 */
export function nodeTest(test: TestFn, title: string, body: NodeTestBody): void {
  if (nodeSelected()) test.serial(title, body);
  else test.skip(`${title} (KUBE_TARGET="${process.env.KUBE_TARGET ?? ''}" does not select cluster)`, () => undefined);
}

/** What a real-node file does on its node beside its tests. */
export interface NodeSuiteHooks {
  /** Once the node has started: what every test of the file needs on it (an install, a namespace), through its session. */
  readonly started?: (t: ExecutionContext) => Promise<void> | void;
  /** Before the node stops: what the file started against it (an in-process operator), and its files. */
  readonly stopping?: () => Promise<void> | void;
}

/**
 * The node a real-node file's tests share, with the admin reads and the kubectl calls bound to it, so that a test says
 * what it reads and not which cluster. Read it inside a test: the `before` hook of {@link nodeSuite} starts the node.
 */
export class NodeSession {
  constructor(private readonly started: () => TestCluster) {}

  /** The started node as a test target (kubectl, kubeconfigs, ServiceAccounts). */
  get cluster(): TestCluster {
    return this.started();
  }

  /** The node itself (its addresses, timings, `ctr`, admin requests that may fail). */
  get nodeCluster(): NodeCluster {
    return this.started().node!;
  }

  /** The images loaded into the node, by role. */
  get images(): NodeCluster['images'] {
    return this.nodeCluster.images;
  }

  /** An admin GET that must answer 200 ({@link get}). */
  get(path: string): Promise<any> {
    return get(this.nodeCluster, path);
  }

  /** The pods matching a label selector in a namespace, terminating ones included ({@link podsOf}). */
  podsOf(namespace: string, selector: string): Promise<any[]> {
    return podsOf(this.nodeCluster, namespace, selector);
  }

  /** The ReplicaSets owned by a Deployment ({@link replicaSetsOf}). */
  replicaSetsOf(namespace: string, deployment: string): Promise<any[]> {
    return replicaSetsOf(this.nodeCluster, namespace, deployment);
  }

  /** Runs kubectl and returns its stdout, throwing when it fails ({@link kubectlOk}). */
  kubectlOk(args: readonly string[], options?: KubectlOptions): Promise<string> {
    return kubectlOk(this.cluster, args, options);
  }

  /** Applies these objects with one `kubectl apply` ({@link applyObjects}). */
  applyObjects(items: readonly object[]): Promise<void> {
    return applyObjects(this.cluster, items);
  }

  /** A pod's JSON log lines, parsed ({@link podLogLines}). */
  podLogLines(namespace: string, pod: string, options?: PodLogOptions): Promise<Record<string, unknown>[]> {
    return podLogLines(this.cluster, namespace, pod, options);
  }

  /** The value of an environment variable in a pod's container ({@link envInPod}). */
  envInPod(namespace: string, pod: string, name: string): Promise<string> {
    return envInPod(this.cluster, namespace, pod, name);
  }

  /** The demo app's `/` read inside the pod ({@link demoPage}). */
  demoPage(namespace: string, pod: string): Promise<string> {
    return demoPage(this.cluster, namespace, pod);
  }
}

/** A real-node file's tests and the node they share. */
export interface NodeSuite {
  /** Declares a test of the file ({@link nodeTest}). */
  readonly onNode: (title: string, body: NodeTestBody) => void;
  /** The node, once the `before` hook has started it. */
  readonly node: NodeSession;
}

/**
 * The hooks of a real-node file, registered only when `KUBE_TARGET` selects the node: `before` starts the node
 * ({@link startNodeCluster}) and runs `started`, `after.always` runs `stopping` and stops the node. Answers
 * {@link nodeTest} for the file's tests, and the {@link NodeSession} they read the node through.
 */
export function nodeSuite(test: TestFn, hooks: NodeSuiteHooks = {}): NodeSuite {
  let cluster: TestCluster | undefined;
  if (nodeSelected()) {
    test.before(async (t) => {
      cluster = await startNodeCluster(t);
      await hooks.started?.(t);
    });
    test.after.always(async () => {
      await hooks.stopping?.();
      await cluster?.stop();
    });
  }
  const node = new NodeSession(() => {
    if (!cluster) throw new Error('the node is not started: read it inside a test of its nodeSuite');
    return cluster;
  });
  return { onNode: (title, body) => nodeTest(test, title, body), node };
}

/** Runs kubectl and returns its stdout; throws with the command, exit code and stderr when it fails. */
export async function kubectlOk(cluster: TestCluster, args: readonly string[], options?: KubectlOptions): Promise<string> {
  const result = await cluster.kubectl(args, options);
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr.trim() || result.stdout.trim()}`);
  return result.stdout;
}

/** Applies these objects with one `kubectl apply` of a List (a CustomApp and what it reads arrive together). */
export async function applyObjects(cluster: TestCluster, items: readonly object[]): Promise<void> {
  await kubectlOk(cluster, ['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
}

/**
 * {@link eventually} in the argument order the node's tests use (the deadline before the probe): polls `probe` every
 * `intervalMs` (200 by default) until it returns a value other than undefined, `false` included; throws after
 * `timeoutMs` with the last answer and `describe()`.
 */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
  options: { intervalMs?: number; describe?: () => Promise<string> } = {},
): Promise<T> {
  // Boxed, so that a probe answering `false` ends the wait as it says.
  const boxed = await eventually(
    what,
    async () => {
      const value = await probe();
      return value === undefined ? undefined : { value };
    },
    timeoutMs,
    options.intervalMs ?? 200,
    options.describe,
  );
  return boxed.value;
}

/** Options of {@link podLogLines}. */
export interface PodLogOptions {
  /**
   * The previous container's lines first, when the kubelet keeps one (a container restarted: its earlier lines are
   * only there); none when it keeps none.
   */
  readonly withPrevious?: boolean;
}

/** A pod's JSON log lines, parsed (`kubectl logs`; a line that is not JSON, such as a runtime's warning, is left out). */
export async function podLogLines(
  cluster: TestCluster,
  namespace: string,
  pod: string,
  options: PodLogOptions = {},
): Promise<Record<string, unknown>[]> {
  const previous = options.withPrevious ? await cluster.kubectl(['-n', namespace, 'logs', '--previous', pod]) : undefined;
  const current = await kubectlOk(cluster, ['-n', namespace, 'logs', pod]);
  const text = previous?.code === 0 ? `${previous.stdout}\n${current}` : current;
  return parseJsonLines<Record<string, unknown>>(text, () => undefined);
}

/** An admin GET that must answer 200. */
export async function get(node: NodeCluster, path: string): Promise<any> {
  const answer = await node.envtest.request('GET', path);
  if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** A pod's Ready condition. */
export function podReady(pod: any): boolean {
  return pod.status?.conditions?.some((condition: any) => condition.type === 'Ready' && condition.status === 'True') ?? false;
}

/** The pods matching a label selector in a namespace (terminating ones included). */
export async function podsOf(node: NodeCluster, namespace: string, selector: string): Promise<any[]> {
  return (await get(node, `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`)).items;
}

/** The ReplicaSets owned by a Deployment. */
export async function replicaSetsOf(node: NodeCluster, namespace: string, deployment: string): Promise<any[]> {
  const all = (await get(node, `/apis/apps/v1/namespaces/${namespace}/replicasets`)).items as any[];
  return all.filter((rs) => rs.metadata.ownerReferences?.some((owner: any) => owner.kind === 'Deployment' && owner.name === deployment));
}

/**
 * Whether a Deployment's rollout is complete, as `kubectl rollout status` decides it: the controller observed the
 * latest generation, every replica is updated and available, and no old replica is left.
 */
export function rolloutComplete(deployment: any): boolean {
  const want = deployment.spec.replicas ?? 1;
  const status = deployment.status ?? {};
  return (
    (status.observedGeneration ?? 0) >= deployment.metadata.generation &&
    (status.updatedReplicas ?? 0) === want &&
    (status.replicas ?? 0) === want &&
    (status.availableReplicas ?? 0) === want
  );
}

/** The value of an environment variable in a pod's container, read through `kubectl exec … sh -c 'echo $NAME'`. */
export async function envInPod(cluster: TestCluster, namespace: string, pod: string, name: string): Promise<string> {
  if (!/^[A-Z_][A-Z0-9_]*$/.test(name)) throw new Error(`"${name}" is not an environment variable name`);
  return (await kubectlOk(cluster, ['-n', namespace, 'exec', pod, '--', 'sh', '-c', `echo "$${name}"`])).trim();
}

/** The demo app's `/` (its environment, one `NAME=value` a line), read inside the pod through `kubectl exec … wget`. */
export async function demoPage(cluster: TestCluster, namespace: string, pod: string): Promise<string> {
  return kubectlOk(cluster, ['-n', namespace, 'exec', pod, '--', 'wget', '-qO-', 'http://127.0.0.1:8080/']);
}
