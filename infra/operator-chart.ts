// The chart that installs the operator: its Namespace, RBAC and Deployment (dist/customapp-operator.k8s.yaml).
import { Chart, type ChartProps } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import type { Construct } from 'constructs';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from './customapp-api.js';
import { MetricsReaderRole } from './metrics-reader-role.js';
import { MetricsService } from './metrics-service.js';
import { MIN_REPLICAS_FOR_DISRUPTION_BUDGET, OperatorDisruptionBudget } from './operator-disruption-budget.js';
import { OperatorServiceMonitor, type OperatorServiceMonitorOptions } from './operator-service-monitor.js';
import { OperatorDeployment } from './operator-deployment.js';
import { OperatorNetworkPolicy, type OperatorNetworkPolicyProps } from './operator-network-policy.js';
import { OperatorRbac } from './operator-rbac.js';
import { OPERATOR_PERMISSIONS, type Permission, workloadPermissions } from './permissions.js';
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
   * Operator replicas (leader election keeps one active).
   * @default 1
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
   * A prometheus-operator ServiceMonitor for the metrics Service (`true`, or its options); it needs the
   * `monitoring.coreos.com` CRDs installed, so it is off unless asked for.
   * @default false
   */
  readonly serviceMonitor?: boolean | OperatorServiceMonitorOptions;
}

/**
 * The operator: Namespace, ServiceAccount, ClusterRole and ClusterRoleBinding, Role and RoleBinding in its namespace
 * (its Lease), Deployment, the metrics Service (HTTPS 8443), the `customapp-metrics-reader` ClusterRole for scrapers,
 * and a NetworkPolicy; a PodDisruptionBudget with 2 replicas or more, and a ServiceMonitor when asked.
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
    const permissions = [...base, ...workloadPermissions(props.workloads, base)];
    const rbac = new OperatorRbac(this, 'Rbac', { namespace, permissions, labels });
    new OperatorDeployment(this, 'Deployment', {
      namespace,
      serviceAccountName: rbac.serviceAccountName,
      image: props.image,
      replicas: props.replicas,
      labels,
      ...(props.workloads?.length ? { extraArgs: [`--workloads=${[...new Set(props.workloads)].join(',')}`] } : {}),
    });
    const podLabels = { 'app.kubernetes.io/name': OPERATOR_NAME };
    const metrics = new MetricsService(this, 'MetricsService', { namespace, selector: podLabels, labels });
    if (props.serviceMonitor) {
      const options = props.serviceMonitor === true ? {} : props.serviceMonitor;
      new OperatorServiceMonitor(this, 'ServiceMonitor', { ...options, namespace, serviceName: metrics.name, serviceLabels: labels });
    }
    if ((props.replicas ?? 1) >= MIN_REPLICAS_FOR_DISRUPTION_BUDGET)
      new OperatorDisruptionBudget(this, 'DisruptionBudget', { namespace, selector: podLabels, labels });
    new MetricsReaderRole(this, 'MetricsReaderRole', { labels });
    if (props.networkPolicy !== false) {
      new OperatorNetworkPolicy(this, 'NetworkPolicy', { ...props.networkPolicy, namespace, podLabels, labels });
    }
  }
}
