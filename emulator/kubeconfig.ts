// Kubeconfig files (YAML) for the emulator: plain http, skipTLSVerify, bearer-token users; for kubectl and client-node.
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  readonly server: string;
  readonly token: string;
  /** The cluster, user and context name (default "emulator"). */
  readonly name?: string;
  /** The context's default namespace. */
  readonly namespace?: string;
}

export function kubeconfigYaml(options: KubeconfigOptions): string {
  const name = options.name ?? 'emulator';
  const context: Record<string, string> = { cluster: name, user: name };
  if (options.namespace !== undefined) context.namespace = options.namespace;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: options.server, 'insecure-skip-tls-verify': true } }],
    users: [{ name, user: { token: options.token } }],
    contexts: [{ name, context }],
    'current-context': name,
    preferences: {},
  });
}
