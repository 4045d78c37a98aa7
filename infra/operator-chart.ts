// The chart that installs the operator (dist/customapp-operator.k8s.yaml): the CustomAppOperator construct, without the CRD.
import { Chart, type ChartProps } from 'cdk8s';
import type { Construct } from 'constructs';
import { CustomAppOperator, type CustomAppOperatorProps } from './custom-app-operator.js';

/** Properties of {@link OperatorChart}: the construct's, less the CRD (dist/ ships it in its own chart). */
export interface OperatorChartProps extends ChartProps, Omit<CustomAppOperatorProps, 'namespace' | 'crd'> {
  /**
   * Namespace to install into (created by this chart).
   * @default 'customapp-system'
   */
  readonly operatorNamespace?: string;
}

/** The operator's install as dist/ ships it, one {@link CustomAppOperator}. */
export class OperatorChart extends Chart {
  public readonly operator: CustomAppOperator;

  constructor(scope: Construct, id: string, props: OperatorChartProps = {}) {
    super(scope, id, props);
    // The chart's own `namespace` (a default for objects without one) is not the operator's: operatorNamespace is.
    const { operatorNamespace, ...rest } = props;
    // The id `Default` leaves the construct out of the path-derived names (the pod label cdk8s-plus derives from the
    // construct path), so the objects are those of a chart that builds them directly.
    this.operator = new CustomAppOperator(this, 'Default', { ...rest, namespace: operatorNamespace });
  }
}
