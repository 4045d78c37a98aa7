// The operator's NetworkPolicy: ingress only to /metrics from labelled namespaces and to the probe port; egress open by default.
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-27';
import { METRICS_NAMESPACE_LABEL, OPERATOR_NAME } from '../api/customapp.js';
import { HEALTH_PORT, METRICS_PORT } from './operator-deployment.js';

/** Properties of {@link OperatorNetworkPolicy}. */
export interface OperatorNetworkPolicyProps {
  /** The operator's namespace. */
  readonly namespace: string;
  /**
   * The operator's pods.
   * @default { 'app.kubernetes.io/name': 'customapp-operator' }
   */
  readonly podLabels?: Readonly<Record<string, string>>;
  /**
   * The labels a namespace needs for its pods to reach /metrics (all of them must match).
   * @default { 'app.example.com/metrics': 'enabled' }
   */
  readonly metricsNamespaceLabels?: Readonly<Record<string, string>>;
  /**
   * The metrics port (HTTPS).
   * @default 8443
   */
  readonly metricsPort?: number;
  /**
   * The probe port (/healthz, /readyz over HTTP), open to any source: the kubelet probes from the node, whose address
   * a policy cannot name portably (most network plugins let node traffic through anyway).
   * @default 8081
   */
  readonly healthPort?: number;
  /**
   * Egress rules. Unset, egress is not restricted: the API server's address (a Service IP that the network plugin may
   * or may not translate before policy applies, and endpoints outside the cluster) is not known at synth time. Set,
   * the policy also covers egress and allows exactly these rules (`[]` denies all egress, which stops the operator).
   * For example, to the API server's endpoints and DNS:
   * `[{ to: [{ ipBlock: { cidr: '10.0.0.1/32' } }], ports: [{ port: k8s.IntOrString.fromNumber(6443), protocol: 'TCP' }] },
   *   { to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], ports: [{ port: k8s.IntOrString.fromNumber(53), protocol: 'UDP' }] }]`
   * @default undefined (egress open)
   */
  readonly egress?: readonly k8s.NetworkPolicyEgressRule[];
  /**
   * Admit scrapes of /metrics; `false` (an operator that serves no metrics) admits only the probe port.
   * @default true
   */
  readonly metrics?: boolean;
  /** Labels on the NetworkPolicy. @default {} */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Name of the NetworkPolicy.
   * @default 'customapp-operator'
   */
  readonly name?: string;
}

/**
 * Selects the operator's pods and admits ingress only (a) to the metrics port from pods of namespaces labelled
 * `app.example.com/metrics=enabled` (kubebuilder's `allow-metrics-traffic` does the same with `metrics: enabled`)
 * and (b) to the probe port. The operator serves nothing else, and it needs no ingress to reconcile: it only makes
 * outgoing connections to the API server. A policy only takes effect with a network plugin that enforces it.
 */
export class OperatorNetworkPolicy extends Construct {
  constructor(scope: Construct, id: string, props: OperatorNetworkPolicyProps) {
    super(scope, id);
    const tcp = (port: number): k8s.NetworkPolicyPort => ({ port: k8s.IntOrString.fromNumber(port), protocol: 'TCP' });
    const metricsLabels = props.metricsNamespaceLabels ?? { [METRICS_NAMESPACE_LABEL.key]: METRICS_NAMESPACE_LABEL.value };
    if (Object.keys(metricsLabels).length === 0) {
      throw new Error('OperatorNetworkPolicy: metricsNamespaceLabels {} would admit metrics scrapes from every namespace; name a label');
    }
    new k8s.KubeNetworkPolicy(this, 'Resource', {
      metadata: { name: props.name ?? OPERATOR_NAME, namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        podSelector: { matchLabels: { ...(props.podLabels ?? { 'app.kubernetes.io/name': OPERATOR_NAME }) } },
        policyTypes: props.egress === undefined ? ['Ingress'] : ['Ingress', 'Egress'],
        ingress: [
          ...((props.metrics ?? true)
            ? [{ from: [{ namespaceSelector: { matchLabels: { ...metricsLabels } } }], ports: [tcp(props.metricsPort ?? METRICS_PORT)] }]
            : []),
          { ports: [tcp(props.healthPort ?? HEALTH_PORT)] },
        ],
        ...(props.egress === undefined ? {} : { egress: [...props.egress] }),
      },
    });
  }
}
