// A ValidatingAdmissionPolicy bound to one namespace: on a real API server, an admission (a quota, a policy) that
// refuses what a test names, with its message.
import type { TestCluster } from './targets.js';

/** What a {@link applyDenyingPolicy} refuses, and where. */
export interface DenyingPolicy {
  /** The name of the policy and of its binding. */
  readonly name: string;
  /** The one namespace it applies in (its binding's namespace selector). */
  readonly namespace: string;
  /** The requests it sees: `spec.matchConstraints.resourceRules`. */
  readonly resourceRules: readonly object[];
  /** The CEL expression each request must satisfy, and the message and reason of a refusal. */
  readonly validation: { readonly expression: string; readonly message: string; readonly reason: string };
}

/**
 * Applies the policy and its binding (failure policy Fail, action Deny) with kubectl, and answers a function that
 * deletes both. The API server enforces it a moment later: probe until a request is refused.
 */
export async function applyDenyingPolicy(cluster: TestCluster, policy: DenyingPolicy): Promise<() => Promise<void>> {
  const apiVersion = 'admissionregistration.k8s.io/v1';
  const metadata = { name: policy.name };
  const items = [
    {
      apiVersion,
      kind: 'ValidatingAdmissionPolicy',
      metadata,
      spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: policy.resourceRules }, validations: [policy.validation] },
    },
    {
      apiVersion,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata,
      spec: {
        policyName: policy.name,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': policy.namespace } } },
      },
    },
  ];
  const applied = await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
  if (applied.code !== 0) throw new Error(`kubectl apply of the admission policy ${policy.name} failed: ${applied.stderr}`);
  return async () => {
    await cluster.kubectl(['delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', policy.name]);
  };
}
