// The Service in front of the operator's HTTPS /metrics (port 8443), for a scraper's service discovery.
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-27';
import { METRICS_SERVICE } from '../api/customapp.js';
import { METRICS_PORT } from './operator-deployment.js';

/** Properties of {@link MetricsService}. */
export interface MetricsServiceProps {
  /** The operator's namespace. */
  readonly namespace: string;
  /** The labels of the operator's pods. */
  readonly selector: Readonly<Record<string, string>>;
  /**
   * Name of the Service.
   * @default 'customapp-operator-metrics'
   */
  readonly name?: string;
  /**
   * The port, on the Service and on the pod (the container port named `metrics`).
   * @default 8443
   */
  readonly port?: number;
  /** Labels on the Service. @default {} */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * A ClusterIP Service, port `https` 8443 → the pods' `metrics` port. Scrape it over HTTPS with a bearer token of an
 * identity bound to `customapp-metrics-reader`; the certificate is self-signed unless one is mounted, so a scraper
 * either skips verification or trusts the mounted certificate's CA.
 */
export class MetricsService extends Construct {
  public readonly name: string;

  constructor(scope: Construct, id: string, props: MetricsServiceProps) {
    super(scope, id);
    this.name = props.name ?? METRICS_SERVICE;
    const port = props.port ?? METRICS_PORT;
    new k8s.KubeService(this, 'Resource', {
      metadata: { name: this.name, namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        selector: { ...props.selector },
        ports: [{ name: 'https', port, targetPort: k8s.IntOrString.fromString('metrics'), protocol: 'TCP' }],
      },
    });
  }
}
