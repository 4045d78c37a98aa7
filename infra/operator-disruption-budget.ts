// The operator's PodDisruptionBudget: a drain evicts its replicas one at a time, so a standby is left to take the Lease.
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-27';
import { OPERATOR_NAME } from '../api/customapp.js';

/** The operator replicas from which `OperatorChart` adds the budget. */
export const MIN_REPLICAS_FOR_DISRUPTION_BUDGET = 2;

/** Properties of {@link OperatorDisruptionBudget}. */
export interface OperatorDisruptionBudgetProps {
  /** The operator's namespace. */
  readonly namespace: string;
  /** The labels of the operator's pods (the Deployment's selector). */
  readonly selector: Readonly<Record<string, string>>;
  /** Labels on the budget. @default {} */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * `maxUnavailable: 1` rather than `minAvailable: 1`: with leader election one replica works and the others stand by,
 * and a voluntary disruption (a node drain, a cluster upgrade) should never take the leader and all its standbys
 * at once, so that the Lease passes within its duration. `maxUnavailable` follows the replica count (with 3, two stay),
 * where `minAvailable: 1` would let a drain evict all but one. Only for 2 replicas or more: with one, any budget
 * either blocks every drain or allows the eviction anyway. `unhealthyPodEvictionPolicy: AlwaysAllow` lets a pod that
 * is not Ready (crash-looping, or waiting on an API it cannot reach) be evicted, so that it never blocks a drain.
 * Sharded, the same budget lets each stopping replica hand its share over (drain, release its Lease) before the next goes.
 */
export class OperatorDisruptionBudget extends Construct {
  constructor(scope: Construct, id: string, props: OperatorDisruptionBudgetProps) {
    super(scope, id);
    new k8s.KubePodDisruptionBudget(this, 'Resource', {
      metadata: { name: OPERATOR_NAME, namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        maxUnavailable: k8s.IntOrString.fromNumber(1),
        selector: { matchLabels: { ...props.selector } },
        unhealthyPodEvictionPolicy: 'AlwaysAllow',
      },
    });
  }
}
