// The chart that installs the operator: its Namespace, RBAC and Deployment (dist/customapp-operator.k8s.yaml).
import { Chart, type ChartProps } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import type { Construct } from 'constructs';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from './customapp-api.js';
import { MetricsReaderRole } from './metrics-reader-role.js';
import { MetricsService } from './metrics-service.js';
import { OperatorDeployment } from './operator-deployment.js';
import { OperatorNetworkPolicy, type OperatorNetworkPolicyProps } from './operator-network-policy.js';
import { OperatorRbac } from './operator-rbac.js';
import { OperatorDisruptionBudget } from './operator-disruption-budget.js';
import { OPERATOR_PERMISSIONS, type Permission, SHARDING_PERMISSIONS, workloadPermissions } from './permissions.js';
import type { WorkloadResource } from './workload-api.js';

/** Properties of {@link OperatorChart}. */
export interface OperatorChartProps extends ChartProps {
  /**
   * Namespace to install into (created by this chart).
   * @default 'customapp-system'
   */
  readonly operatorNamespace?: string;
  /**
   * The operator image.
   * @default DEFAULT_OPERATOR_IMAGE
   */
  readonly image?: string;
  /**
   * Operator replicas (leader election keeps one active; with `sharding`, all of them work).
   * @default 1, or 3 with `sharding`
   */
  readonly replicas?: number;
  /**
   * The permissions granted (tests narrow it to prove each rule is needed).
   * @default OPERATOR_PERMISSIONS
   */
  readonly permissions?: readonly Permission[];
  /**
   * The operator's NetworkPolicy (ingress to /metrics from labelled namespaces and to the probe port), tuned by these
   * props, or `false` for none.
   * @default {} (the policy with its defaults: egress open)
   */
  readonly networkPolicy?: Omit<OperatorNetworkPolicyProps, 'namespace' | 'podLabels'> | false;
  /**
   * Existing workload kinds that roll, by annotation, on the ConfigMaps and Secrets they use (the operator's
   * `--workloads`); each adds list, watch and patch on its kind to the ClusterRole, and nothing else.
   * @default none (a CustomApp-only install)
   */
  readonly workloads?: readonly WorkloadResource[];
  /**
   * Every replica works on its share of the objects (the operator's `--sharding`: a Lease per replica in the operator's
   * namespace, rendezvous hashing over the live ones): adds `--sharding`, 3 replicas unless `replicas` says otherwise,
   * get, list, watch and update on Leases in the operator's namespace, and a PodDisruptionBudget of one pod at a time.
   * @default false (one active leader)
   */
  readonly sharding?: boolean;
}

/**
 * The operator: Namespace, ServiceAccount, ClusterRole and ClusterRoleBinding, Role and RoleBinding in its namespace
 * (its Lease), Deployment, the metrics Service (HTTPS 8443), the `customapp-metrics-reader` ClusterRole for scrapers,
 * and a NetworkPolicy.
 */
export class OperatorChart extends Chart {
  constructor(scope: Construct, id: string, props: OperatorChartProps = {}) {
    super(scope, id, props);
    const namespace = props.operatorNamespace ?? OPERATOR_NAMESPACE;
    const labels = {
      'app.kubernetes.io/name': OPERATOR_NAME,
      'app.kubernetes.io/component': 'operator',
      'app.kubernetes.io/part-of': 'customapp-operator',
      'app.kubernetes.io/managed-by': 'cdk8s',
    };
    new k8s.KubeNamespace(this, 'Namespace', {
      metadata: {
        name: namespace,
        labels: {
          ...labels,
          'pod-security.kubernetes.io/enforce': 'restricted',
          'pod-security.kubernetes.io/enforce-version': 'latest',
        },
      },
    });
    const base = props.permissions ?? OPERATOR_PERMISSIONS;
    const permissions = [...base, ...workloadPermissions(props.workloads, base), ...(props.sharding ? SHARDING_PERMISSIONS : [])];
    const rbac = new OperatorRbac(this, 'Rbac', { namespace, permissions, labels });
    new OperatorDeployment(this, 'Deployment', {
      namespace,
      serviceAccountName: rbac.serviceAccountName,
      image: props.image,
      replicas: props.replicas ?? (props.sharding ? 3 : undefined),
      labels,
      extraArgs: [
        ...(props.workloads?.length ? [`--workloads=${[...new Set(props.workloads)].join(',')}`] : []),
        ...(props.sharding ? ['--sharding'] : []),
      ],
    });
    const podLabels = { 'app.kubernetes.io/name': OPERATOR_NAME };
    if (props.sharding) new OperatorDisruptionBudget(this, 'DisruptionBudget', { namespace, podLabels, labels });
    new MetricsService(this, 'MetricsService', { namespace, selector: podLabels, labels });
    new MetricsReaderRole(this, 'MetricsReaderRole', { labels });
    if (props.networkPolicy !== false) {
      new OperatorNetworkPolicy(this, 'NetworkPolicy', { ...props.networkPolicy, namespace, podLabels, labels });
    }
  }
}
