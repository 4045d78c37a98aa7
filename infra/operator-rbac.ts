// The operator's identity and permissions: a ServiceAccount bound to a ClusterRole generated from permissions.ts.
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-27';
import { OPERATOR_NAME } from './customapp-api.js';
import { OPERATOR_PERMISSIONS, type Permission } from './permissions.js';

/** Properties of {@link OperatorRbac}. */
export interface OperatorRbacProps {
  /** The namespace of the ServiceAccount. */
  readonly namespace: string;
  /**
   * Name of the ServiceAccount, ClusterRole and ClusterRoleBinding.
   * @default 'customapp-operator'
   */
  readonly name?: string;
  /**
   * The permissions granted.
   * @default OPERATOR_PERMISSIONS
   */
  readonly permissions?: readonly Permission[];
  /** Labels on every object. @default {} */
  readonly labels?: Readonly<Record<string, string>>;
}

/** Turns the permission table into ClusterRole rules: one rule per (group, resource), verbs as listed. */
export function policyRules(permissions: readonly Permission[]): k8s.PolicyRule[] {
  return permissions.map((permission) => ({
    apiGroups: [permission.apiGroup],
    resources: [permission.resource],
    verbs: [...permission.verbs],
  }));
}

/** A ServiceAccount, a ClusterRole with exactly the operator's permissions, and the binding between them. */
export class OperatorRbac extends Construct {
  public readonly serviceAccountName: string;

  constructor(scope: Construct, id: string, props: OperatorRbacProps) {
    super(scope, id);
    const name = props.name ?? OPERATOR_NAME;
    const labels = { ...props.labels };
    this.serviceAccountName = name;
    new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: { name, namespace: props.namespace, labels },
    });
    new k8s.KubeClusterRole(this, 'ClusterRole', {
      metadata: { name, labels },
      rules: policyRules(props.permissions ?? OPERATOR_PERMISSIONS),
    });
    new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: props.namespace }],
    });
  }
}
