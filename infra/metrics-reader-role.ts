// The ClusterRole a scraper needs to read the operator's /metrics: get on the non-resource URL /metrics.
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-27';
import { METRICS_READER_ROLE } from '../api/customapp.js';

/** Properties of {@link MetricsReaderRole}. */
export interface MetricsReaderRoleProps {
  /**
   * Name of the ClusterRole.
   * @default 'customapp-metrics-reader'
   */
  readonly name?: string;
  /** Labels on the ClusterRole. @default {} */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * `customapp-metrics-reader`: `get` on `/metrics`, which the operator's metrics server checks with a
 * SubjectAccessReview for every scrape (kubebuilder's `metrics-reader`). It is not bound to anyone: bind it to the
 * scraper's identity, for example
 * `kubectl create clusterrolebinding prometheus-customapp-metrics --clusterrole=customapp-metrics-reader --serviceaccount=monitoring:prometheus`.
 */
export class MetricsReaderRole extends Construct {
  public readonly name: string;

  constructor(scope: Construct, id: string, props: MetricsReaderRoleProps = {}) {
    super(scope, id);
    this.name = props.name ?? METRICS_READER_ROLE;
    new k8s.KubeClusterRole(this, 'Resource', {
      metadata: { name: this.name, labels: { ...props.labels } },
      rules: [{ nonResourceUrLs: ['/metrics'], verbs: ['get'] }],
    });
  }
}
