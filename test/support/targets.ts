// Hands out a test cluster of any target behind one interface: the emulator, envtest (a real kube-apiserver), or the
// real node (`npm run cluster`: a kubelet that runs pods).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { startEnvtest, type EnvtestOptions } from '../../envtest/harness.js';
import type { NodeCluster, NodeClusterOptions } from '../../envtest/node/harness.js';
import type { Emulator, EmulatorOptions } from '../../emulator/index.js';

/**
 * Where a test runs: our emulator, the real kube-apiserver built by envtest, or the real node of `npm run cluster`
 * (envtest's control plane plus a kubelet, containerd and kube-proxy: pods run, probes are polled, rollouts roll).
 */
export type Target = 'emulator' | 'envtest' | 'cluster';
/** The API servers the dual-target tests run on. They need no kubelet, so they never run on the slower-starting node. */
export type ApiTarget = Exclude<Target, 'cluster'>;
export const API_TARGETS: readonly ApiTarget[] = ['emulator', 'envtest'];
export const ALL_TARGETS: readonly Target[] = [...API_TARGETS, 'cluster'];

function parseTargets(env: NodeJS.ProcessEnv): Target[] {
  const raw = env.KUBE_TARGET?.trim();
  if (!raw) return [...ALL_TARGETS];
  const targets = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  for (const target of targets) {
    if (!ALL_TARGETS.includes(target as Target)) {
      throw new Error(`KUBE_TARGET="${raw}": "${target}" is not one of ${ALL_TARGETS.join(', ')}`);
    }
  }
  return targets as Target[];
}

/**
 * The API targets selected by `KUBE_TARGET` (`emulator`, `envtest`, `cluster`, or a comma-separated list; all three
 * by default), for the dual-target tests: `npm test` runs every integration scenario against both API servers.
 * `cluster` selects the real-node tests alone ({@link nodeSelected}); it adds no API target.
 */
export function selectedTargets(env: NodeJS.ProcessEnv = process.env): ApiTarget[] {
  return parseTargets(env).filter((target): target is ApiTarget => target !== 'cluster');
}

/** Whether `KUBE_TARGET` selects the real node (it does when unset): the tests under test/node/ run only then. */
export function nodeSelected(env: NodeJS.ProcessEnv = process.env): boolean {
  return parseTargets(env).includes('cluster');
}

/** The result of one kubectl run. */
export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of one kubectl run. */
export interface KubectlOptions {
  /** The kubeconfig file. @default the cluster's admin kubeconfig */
  readonly kubeconfig?: string;
  /** Standard input (for `-f -`). @default none */
  readonly input?: string;
  /** Kill it after this long. @default 60_000 */
  readonly timeoutMs?: number;
}

/** A running test cluster. */
export interface TestCluster {
  readonly target: Target;
  /** The API server URL. */
  readonly server: string;
  /** The admin kubeconfig file. */
  readonly kubeconfigPath: string;
  /** The in-process emulator (counters, fault injection), when the target is the emulator. */
  readonly emulator?: Emulator;
  /** The node (its images, its namespaces, containerd's ctr), when the target is the cluster. */
  readonly node?: NodeCluster;
  /** Whether ownerReference garbage collection runs (always on the emulator; with kube-controller-manager on envtest). */
  readonly garbageCollection: boolean;
  /** A fresh admin client configuration. */
  adminKubeConfig(): KubeConfig;
  /** A kubeconfig file and client configuration for a ServiceAccount (created if missing). */
  serviceAccount(namespace: string, name: string): Promise<{ path: string; kubeConfig: KubeConfig }>;
  /** Runs the real kubectl against this cluster with a fresh --cache-dir. */
  kubectl(args: readonly string[], options?: KubectlOptions): Promise<KubectlResult>;
  /** Stops the cluster and removes its files. */
  stop(): Promise<void>;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** Passed to the emulator. */
  readonly emulator?: EmulatorOptions;
  /** Passed to envtest (for example `controllerManager: true` for garbage collection). */
  readonly envtest?: EnvtestOptions;
  /** Passed to the node cluster. */
  readonly cluster?: NodeClusterOptions;
}

function kubeConfigFrom(yaml: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(yaml);
  return kubeConfig;
}

/** Runs /usr/bin/kubectl (the version dispatcher) with its own fresh discovery cache. */
export function runKubectl(kubeconfig: string, args: readonly string[], options: KubectlOptions = {}): Promise<KubectlResult> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'kubectl-cache-'));
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', options.kubeconfig ?? kubeconfig, '--cache-dir', cacheDir, ...args],
      {
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 64 << 20,
        env: { ...process.env, KUBECONFIG: '' },
      },
      (error, stdout, stderr) => {
        rmSync(cacheDir, { recursive: true, force: true });
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin!.end(options.input);
    else child.stdin!.end();
  });
}

/** Starts a cluster of the given target. Stop it in `t.teardown` or `test.after.always`. */
export async function startCluster(target: Target, options: ClusterOptions = {}): Promise<TestCluster> {
  if (target === 'cluster') {
    const { startNodeCluster } = await import('../../envtest/node/harness.js');
    const node = await startNodeCluster(options.cluster);
    return {
      target,
      server: node.server,
      kubeconfigPath: node.kubeconfigPath,
      node,
      garbageCollection: true,
      adminKubeConfig: () => kubeConfigFrom(node.kubeconfig),
      serviceAccount: async (namespace, name) => {
        const { kubeconfig, path } = await node.envtest.serviceAccountKubeconfig(namespace, name);
        return { path, kubeConfig: kubeConfigFrom(kubeconfig) };
      },
      kubectl: (args, kubectlOptions) => runKubectl(node.kubeconfigPath, args, kubectlOptions),
      stop: () => node.stop(),
    };
  }
  if (target === 'envtest') {
    const env = await startEnvtest(options.envtest);
    return {
      target,
      server: env.server,
      kubeconfigPath: env.kubeconfigPath,
      garbageCollection: env.controllerManager,
      adminKubeConfig: () => kubeConfigFrom(env.kubeconfig),
      serviceAccount: async (namespace, name) => {
        const { kubeconfig, path } = await env.serviceAccountKubeconfig(namespace, name);
        return { path, kubeConfig: kubeConfigFrom(kubeconfig) };
      },
      kubectl: (args, kubectlOptions) => runKubectl(env.kubeconfigPath, args, kubectlOptions),
      stop: () => env.stop(),
    };
  }
  const { startEmulator } = await import('../../emulator/index.js');
  const emulator = await startEmulator({ port: 0, ...options.emulator });
  const dir = mkdtempSync(join(tmpdir(), 'customapp-emulator-'));
  const kubeconfigPath = join(dir, 'admin.kubeconfig');
  writeFileSync(kubeconfigPath, emulator.adminKubeconfig());
  return {
    target,
    server: emulator.url,
    kubeconfigPath,
    emulator,
    garbageCollection: true,
    adminKubeConfig: () => kubeConfigFrom(emulator.adminKubeconfig()),
    serviceAccount: async (namespace, name) => {
      const yaml = emulator.serviceAccountKubeconfig(namespace, name);
      const path = join(dir, `sa-${namespace}-${name}.kubeconfig`);
      writeFileSync(path, yaml);
      return { path, kubeConfig: kubeConfigFrom(yaml) };
    },
    kubectl: (args, kubectlOptions) => runKubectl(kubeconfigPath, args, kubectlOptions),
    stop: async () => {
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
