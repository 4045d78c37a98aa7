// The operator's PodDisruptionBudget when it runs sharded: a drain takes its replicas one at a time.
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { OPERATOR_NAME } from './customapp-api.js';

/** Properties of {@link OperatorDisruptionBudget}. */
export interface OperatorDisruptionBudgetProps {
  readonly namespace: string;
  /** The operator pods' labels (the selector). */
  readonly podLabels: Readonly<Record<string, string>>;
  /** Labels on the budget. @default {} */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * At most one operator pod disrupted at a time (a node drain, a cluster upgrade): each sharded replica that stops hands
 * its share over (SIGTERM: drain, release its Lease), and the others take it before the next one goes.
 */
export class OperatorDisruptionBudget extends Construct {
  constructor(scope: Construct, id: string, props: OperatorDisruptionBudgetProps) {
    super(scope, id);
    new k8s.KubePodDisruptionBudget(this, 'Resource', {
      metadata: { name: OPERATOR_NAME, namespace: props.namespace, labels: { ...props.labels } },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: { ...props.podLabels } } },
    });
  }
}
