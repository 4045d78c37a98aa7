// The chart that installs the CustomApp API (dist/customapp-crd.k8s.yaml).
import { Chart, type ChartProps } from 'cdk8s';
import type { Construct } from 'constructs';
import { CustomAppCrd } from './custom-app-crd.js';

/** The CRD on its own, so it can be applied (and imported by `cdk8s import`) before anything that uses it. */
export class CrdChart extends Chart {
  public readonly crd: CustomAppCrd;

  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    this.crd = new CustomAppCrd(this, 'CustomApp');
  }
}
