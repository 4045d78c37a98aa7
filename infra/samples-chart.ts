// The samples chart: a ConfigMap, a Secret and a CustomApp that uses them (dist/samples/customapp-samples.k8s.yaml).
import { Chart, type ChartProps } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import type { Construct } from 'constructs';
import { CustomApp } from './custom-app.js';

/** Properties of {@link SamplesChart}. */
export interface SamplesChartProps extends ChartProps {
  /**
   * Name of the sample CustomApp; its ConfigMap and Secret are `<name>-config` and `<name>-secret`.
   * @default 'hello'
   */
  readonly appName?: string;
  /**
   * Image of the sample app.
   * @default 'nginxinc/nginx-unprivileged:1.27-alpine'
   */
  readonly image?: string;
}

/** A ready-to-apply example, built with the library's {@link CustomApp} construct. */
export class SamplesChart extends Chart {
  constructor(scope: Construct, id: string, props: SamplesChartProps = {}) {
    super(scope, id, { namespace: 'default', ...props });
    const name = props.appName ?? 'hello';
    const labels = { 'app.kubernetes.io/part-of': 'customapp-samples' };
    const configMap = new k8s.KubeConfigMap(this, 'ConfigMap', {
      metadata: { name: `${name}-config`, labels },
      data: { GREETING: 'hello, world', LOG_LEVEL: 'info' },
    });
    const secret = new k8s.KubeSecret(this, 'Secret', {
      metadata: { name: `${name}-secret`, labels },
      type: 'Opaque',
      stringData: { API_TOKEN: 'change-me' },
    });
    new CustomApp(this, 'CustomApp', {
      metadata: { name, labels },
      image: props.image ?? 'nginxinc/nginx-unprivileged:1.27-alpine',
      configMapName: configMap.name,
      secretName: secret.name,
      replicas: 1,
      port: 8080,
    });
  }
}
