// An optional prometheus-operator ServiceMonitor for the operator's metrics Service (HTTPS, authenticated scrapes).
import { Construct } from 'constructs';
import {
  ServiceMonitor,
  ServiceMonitorSpecEndpointsScheme,
  type ServiceMonitorSpecEndpointsTlsConfig,
} from '../imports/monitoring.coreos.com.js';

/** The tunable parts of {@link OperatorServiceMonitor} (`OperatorChart`'s `serviceMonitor` prop). */
export interface OperatorServiceMonitorOptions {
  /**
   * Labels on the ServiceMonitor, for a Prometheus whose `serviceMonitorSelector` selects by label (for example
   * kube-prometheus-stack's `release: <release name>`).
   * @default the chart's labels
   */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * The scrape interval.
   * @default Prometheus' own (its `scrapeInterval`)
   */
  readonly interval?: string;
  /**
   * How to verify the operator's certificate: a CA and a server name when the operator serves a certificate mounted
   * with `--metrics-cert-dir`.
   * @default `{ insecureSkipVerify: true }` (the operator's certificate is self-signed at start)
   */
  readonly tlsConfig?: ServiceMonitorSpecEndpointsTlsConfig;
}

/** Properties of {@link OperatorServiceMonitor}. */
export interface OperatorServiceMonitorProps extends OperatorServiceMonitorOptions {
  /** The namespace of the operator and its metrics Service. */
  readonly namespace: string;
  /** The name of the metrics Service, which the ServiceMonitor is named after. */
  readonly serviceName: string;
  /** The metrics Service's labels, which the ServiceMonitor selects it by. */
  readonly serviceLabels: Readonly<Record<string, string>>;
}

/** The ServiceAccount token Prometheus runs with: what the operator's /metrics authenticates and authorizes. */
const SCRAPER_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * A `monitoring.coreos.com/v1` ServiceMonitor: Prometheus scrapes the Service's `https` port at `/metrics` with its
 * own ServiceAccount token (kubebuilder's scaffold does the same). `bearerTokenFile` is deprecated in favour of
 * `authorization`, which reads a token from a Secret: a long-lived token Secret for Prometheus is what this avoids.
 * Prometheus' identity needs the `customapp-metrics-reader` ClusterRole, and its namespace the label the
 * NetworkPolicy admits (README, Scraping the metrics).
 */
export class OperatorServiceMonitor extends Construct {
  constructor(scope: Construct, id: string, props: OperatorServiceMonitorProps) {
    super(scope, id);
    new ServiceMonitor(this, 'Resource', {
      metadata: { name: props.serviceName, namespace: props.namespace, labels: { ...(props.labels ?? props.serviceLabels) } },
      spec: {
        selector: { matchLabels: { ...props.serviceLabels } },
        namespaceSelector: { matchNames: [props.namespace] },
        endpoints: [
          {
            port: 'https',
            scheme: ServiceMonitorSpecEndpointsScheme.HTTPS,
            path: '/metrics',
            ...(props.interval ? { interval: props.interval } : {}),
            bearerTokenFile: SCRAPER_TOKEN_FILE,
            tlsConfig: props.tlsConfig ?? { insecureSkipVerify: true },
          },
        ],
      },
    });
  }
}
