// A user's cdk8s app, wiring only: the shop's namespace, the operator's install (with the CRD: this cluster is ours; serving opted-in Deployments too), then the shop.
import { App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { CustomAppOperator } from 'customapp-operator';
import { ShopChart } from './shop-chart.js';

const app = new App();
new kplus.Namespace(new Chart(app, 'shop-namespace'), 'shop', { metadata: { name: 'shop' } });
new CustomAppOperator(new Chart(app, 'operator'), 'operator', { crd: true, workloads: ['deployments'] });
// SHOP_IMAGE: the image the shop runs (its default is a public nginx; a cluster without a registry passes one it has).
new ShopChart(app, 'shop', { image: process.env.SHOP_IMAGE });
app.synth();
