// The shop chart of the example app: a ConfigMap, a Secret, and two CustomApps that read them in different ways.
import { Chart, type ChartProps, Duration } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import type { Construct } from 'constructs';
import { CustomApp, reloadOnChange } from 'customapp-operator';

/** Properties of {@link ShopChart}. */
export interface ShopChartProps extends ChartProps {
  /**
   * The image both apps run.
   * @default 'nginxinc/nginx-unprivileged:1.27-alpine'
   */
  readonly image?: string;
}

/**
 * The shop: `web` reads the whole ConfigMap and Secret as variables, `worker` one key of each (the ConfigMap's as a
 * file); and `assets`, a plain cdk8s-plus Deployment, rolls on the ConfigMap too, opted in with reloadOnChange.
 */
export class ShopChart extends Chart {
  public readonly web: CustomApp;
  public readonly worker: CustomApp;
  public readonly assets: kplus.Deployment;

  constructor(scope: Construct, id: string, props: ShopChartProps = {}) {
    super(scope, id, { namespace: 'shop', ...props });
    const image = props.image ?? 'nginxinc/nginx-unprivileged:1.27-alpine';
    const config = new kplus.ConfigMap(this, 'config', {
      metadata: { name: 'shop-config' },
      data: { GREETING: 'hello', 'feature-flags.yaml': 'checkout: true\n' },
    });
    const secret = new kplus.Secret(this, 'secret', { metadata: { name: 'shop-secret' }, stringData: { API_TOKEN: 'change-me' } });
    this.web = new CustomApp(this, 'web', {
      metadata: { name: 'web' },
      image,
      configMapName: config,
      secretName: secret,
      replicas: 2,
      port: 8080,
      readinessPath: '/',
      env: { LOG_LEVEL: 'info' },
    });
    this.worker = new CustomApp(this, 'worker', { metadata: { name: 'worker' }, image, rollout: { debounce: Duration.seconds(0) } });
    this.worker.addConfigMap(config, { mountPath: '/etc/shop', keys: ['feature-flags.yaml'] });
    this.worker.addSecret(secret, { keys: ['API_TOKEN'] });
    this.assets = new kplus.Deployment(this, 'assets', {
      metadata: { name: 'assets' },
      containers: [{ image, portNumber: 8080, envFrom: [kplus.Env.fromConfigMap(config)] }],
    });
    reloadOnChange(this.assets, 'auto');
  }
}
