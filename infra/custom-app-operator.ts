// The operator's install as one construct a user adds to a chart: its Namespace, RBAC, Deployment, metrics Service and role, NetworkPolicy, and optionally the CRD.
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { CustomAppCrd, type CustomAppCrdProps } from './custom-app-crd.js';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../api/customapp.js';
import { MetricsReaderRole } from './metrics-reader-role.js';
import { MetricsService } from './metrics-service.js';
import { MIN_REPLICAS_FOR_DISRUPTION_BUDGET, OperatorDisruptionBudget } from './operator-disruption-budget.js';
import { OperatorServiceMonitor, type OperatorServiceMonitorOptions } from './operator-service-monitor.js';
import { OperatorDeployment } from './operator-deployment.js';
import { OperatorNetworkPolicy, type OperatorNetworkPolicyProps } from './operator-network-policy.js';
import { OperatorRbac } from './operator-rbac.js';
import {
  OPERATOR_PERMISSIONS,
  type Permission,
  SHARDING_PERMISSIONS,
  watchedNamespacesProblem,
  workloadPermissions,
} from './permissions.js';
import type { WorkloadResource } from '../api/workload.js';

/** Operator replicas with `sharding` when `replicas` is not given (the Helm chart's default too). */
export const DEFAULT_SHARDED_REPLICAS = 3;

/** Properties of {@link CustomAppOperator}. */
export interface CustomAppOperatorProps {
  /**
   * The namespace the operator runs in: its ServiceAccount, Deployment, Lease, metrics Service and NetworkPolicy.
   * @default 'customapp-system'
   */
  readonly namespace?: string;
  /**
   * Create that namespace (labelled for the restricted Pod Security Standard). Turn it off when the namespace is
   * managed elsewhere.
   * @default true
   */
  readonly createNamespace?: boolean;
  /**
   * Install the `customapps.app.example.com` CRD with the operator, or tune it. The CRD is cluster-wide and usually
   * the cluster admin's, applied once before any chart that holds a CustomApp, so it is left out unless asked for.
   * @default false
   */
  readonly crd?: boolean | CustomAppCrdProps;
  /**
   * The operator image.
   * @default DEFAULT_OPERATOR_IMAGE
   */
  readonly image?: string;
  /**
   * Operator replicas (leader election keeps one active; with `sharding`, all of them work). Two or more add a
   * PodDisruptionBudget.
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
  readonly networkPolicy?: Omit<OperatorNetworkPolicyProps, 'namespace' | 'podLabels' | 'metrics'> | false;
  /**
   * Existing workload kinds that roll, by annotation, on the ConfigMaps and Secrets they use (the operator's
   * `--workloads`); each adds list, watch and patch on its kind to the ClusterRole, and nothing else. Opt a workload in
   * with {@link reloadOnChange}.
   * @default none (a CustomApp-only install)
   */
  readonly workloads?: readonly WorkloadResource[];
  /**
   * Serve /metrics over HTTPS on :8443, with the Service in front of it, the `customapp-metrics-reader` ClusterRole a
   * scraper is bound to and the NetworkPolicy's metrics ingress; `false` turns the endpoint off and leaves those out.
   * @default true
   */
  readonly metrics?: boolean;
  /**
   * The only namespaces the operator lists and watches (the operator's `--namespaces`), with its namespaced grants in
   * Roles of exactly those namespaces and no cluster-wide read of ConfigMaps or Secrets.
   * @default every namespace
   */
  readonly namespaces?: readonly string[];
  /**
   * Every replica works on its share of the CustomApps and workloads (the operator's `--sharding`: a Lease per
   * replica in the operator's namespace, rendezvous hashing over the live ones), instead of one active leader and
   * standbys: adds `--sharding`, 3 replicas unless `replicas` says otherwise, and the Lease grants it needs there.
   * @default false (leader election)
   */
  readonly sharding?: boolean;
  /**
   * A prometheus-operator ServiceMonitor (monitoring.coreos.com/v1) for the metrics Service (`true`, or its options);
   * it needs the `monitoring.coreos.com` CRDs installed, so it is off unless asked for.
   * @default false
   */
  readonly serviceMonitor?: boolean | OperatorServiceMonitorOptions;
}

/** The labels on every object of the install. */
const INSTALL_LABELS = {
  'app.kubernetes.io/name': OPERATOR_NAME,
  'app.kubernetes.io/component': 'operator',
  'app.kubernetes.io/part-of': 'customapp-operator',
  'app.kubernetes.io/managed-by': 'cdk8s',
};

/**
 * The operator: Namespace, ServiceAccount, ClusterRole and ClusterRoleBinding, Role and RoleBinding in its namespace
 * (its Lease), Deployment, the metrics Service (HTTPS 8443), the `customapp-metrics-reader` ClusterRole for scrapers,
 * a NetworkPolicy; a PodDisruptionBudget with 2 replicas or more; the CRD and a ServiceMonitor when asked for.
 *
 * @example
 * new CustomAppOperator(chart, 'operator', { crd: true, workloads: ['deployments'] });
 */
export class CustomAppOperator extends Construct {
  /** The namespace the operator runs in. */
  public readonly namespace: string;
  /** The CRD, when `crd` asked for it. */
  public readonly crd?: CustomAppCrd;
  /** The operator's ServiceAccount (the identity its grants are bound to). */
  public readonly serviceAccountName: string;

  constructor(scope: Construct, id: string, props: CustomAppOperatorProps = {}) {
    super(scope, id);
    const namespace = (this.namespace = props.namespace ?? OPERATOR_NAMESPACE);
    const labels = INSTALL_LABELS;
    if (props.crd) this.crd = new CustomAppCrd(this, 'Crd', props.crd === true ? {} : props.crd);
    if (props.createNamespace ?? true) {
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
    }
    const base = props.permissions ?? OPERATOR_PERMISSIONS;
    const permissions = [...base, ...workloadPermissions(props.workloads, base), ...(props.sharding ? SHARDING_PERMISSIONS : [])];
    const problem = props.namespaces && watchedNamespacesProblem(props.namespaces);
    if (problem) throw new Error(`CustomAppOperator namespaces: ${problem}`);
    const rbac = new OperatorRbac(this, 'Rbac', { namespace, permissions, labels, namespaces: props.namespaces });
    const replicas = props.replicas ?? (props.sharding ? DEFAULT_SHARDED_REPLICAS : 1);
    const extraArgs = [
      ...(props.workloads?.length ? [`--workloads=${[...new Set(props.workloads)].join(',')}`] : []),
      ...(props.namespaces ? [`--namespaces=${props.namespaces.join(',')}`] : []),
      ...(props.sharding ? ['--sharding'] : []),
    ];
    this.serviceAccountName = rbac.serviceAccountName;
    const metrics = props.metrics ?? true;
    new OperatorDeployment(this, 'Deployment', {
      namespace,
      metrics,
      serviceAccountName: rbac.serviceAccountName,
      image: props.image,
      replicas,
      labels,
      ...(extraArgs.length > 0 ? { extraArgs } : {}),
    });
    const podLabels = { 'app.kubernetes.io/name': OPERATOR_NAME };
    if (metrics) {
      const service = new MetricsService(this, 'MetricsService', { namespace, selector: podLabels, labels });
      if (props.serviceMonitor) {
        const options = props.serviceMonitor === true ? {} : props.serviceMonitor;
        new OperatorServiceMonitor(this, 'ServiceMonitor', { ...options, namespace, serviceName: service.name, serviceLabels: labels });
      }
    }
    if (replicas >= MIN_REPLICAS_FOR_DISRUPTION_BUDGET)
      new OperatorDisruptionBudget(this, 'DisruptionBudget', { namespace, selector: podLabels, labels });
    if (metrics) new MetricsReaderRole(this, 'MetricsReaderRole', { labels });
    if (props.networkPolicy !== false) {
      new OperatorNetworkPolicy(this, 'NetworkPolicy', { ...props.networkPolicy, metrics, namespace, podLabels, labels });
    }
  }
}
