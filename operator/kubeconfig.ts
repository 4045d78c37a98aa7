// Finds the cluster to talk to: --kubeconfig, then KUBECONFIG, then in-cluster, then ~/.kube/config (controller-runtime's order).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
// The module itself, not the package's index: the index loads every client-node helper (exec, attach, cp with its tar
// and WebSocket libraries) at start, 5 MiB of RSS the operator never uses.
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';

/** Where the configuration came from. */
export type KubeConfigSource = 'flag' | 'env' | 'in-cluster' | 'home';

/** A loaded kubeconfig and where it came from. */
export interface ResolvedKubeConfig {
  readonly source: KubeConfigSource;
  /** The file, except for in-cluster configuration. */
  readonly path?: string;
  readonly kubeConfig: KubeConfig;
}

/** What resolution looks at; every field is injectable for tests. */
export interface KubeConfigEnvironment {
  /** The `--kubeconfig` flag. */
  readonly flag?: string;
  /** @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** @default os.homedir() */
  readonly home?: string;
  /** @default fs.existsSync */
  readonly exists?: (path: string) => boolean;
  /** The ServiceAccount token mounted in a pod. @default /var/run/secrets/kubernetes.io/serviceaccount/token */
  readonly serviceAccountTokenPath?: string;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

function fromFile(source: KubeConfigSource, path: string): ResolvedKubeConfig {
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromFile(path);
  } catch (error) {
    throw new Error(
      `kubeconfig "${path}" (from ${source === 'flag' ? '--kubeconfig' : source === 'env' ? 'KUBECONFIG' : '~/.kube/config'}) cannot be loaded: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return { source, path, kubeConfig };
}

/**
 * Resolves the kubeconfig in controller-runtime's order:
 * 1. `--kubeconfig` (a missing file is an error: it was asked for);
 * 2. `KUBECONFIG`: the first existing file of its list (client-go merges the list; we take its first file);
 * 3. in-cluster: `KUBERNETES_SERVICE_HOST`/`_PORT` and the mounted ServiceAccount token;
 * 4. `~/.kube/config`.
 * Returns undefined when none applies: `npm start` then runs the embedded emulator.
 */
export function resolveKubeConfig(environment: KubeConfigEnvironment = {}): ResolvedKubeConfig | undefined {
  const env = environment.env ?? process.env;
  const exists = environment.exists ?? existsSync;
  if (environment.flag !== undefined) {
    if (!exists(environment.flag)) throw new Error(`--kubeconfig: "${environment.flag}" does not exist`);
    return fromFile('flag', environment.flag);
  }
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  const first = listed.find((path) => exists(path));
  if (first) return fromFile('env', first);
  const tokenPath = environment.serviceAccountTokenPath ?? SERVICE_ACCOUNT_TOKEN;
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && exists(tokenPath)) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromCluster();
    return { source: 'in-cluster', kubeConfig };
  }
  const home = join(environment.home ?? homedir(), '.kube', 'config');
  if (exists(home)) return fromFile('home', home);
  return undefined;
}
