// The operator's identity and permissions: a ServiceAccount bound to a ClusterRole and to a Role in its own namespace,
// both generated from permissions.ts.
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-27';
import { OPERATOR_NAME } from './customapp-api.js';
import { OPERATOR_PERMISSIONS, type Permission, type PermissionScope } from './permissions.js';

/** Properties of {@link OperatorRbac}. */
export interface OperatorRbacProps {
  /** The namespace of the ServiceAccount, and of the Role that holds the `operator-namespace` permissions. */
  readonly namespace: string;
  /**
   * Name of the ServiceAccount, ClusterRole, ClusterRoleBinding, Role and RoleBinding.
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

/**
 * Turns the permissions of one scope into RBAC rules: one rule per row, verbs as listed, `resourceNames` where the
 * row has them.
 */
export function policyRules(permissions: readonly Permission[], scope: PermissionScope): k8s.PolicyRule[] {
  return permissions
    .filter((permission) => permission.scope === scope)
    .map((permission) => ({
      apiGroups: [permission.apiGroup],
      resources: [permission.resource],
      verbs: [...permission.verbs],
      ...(permission.resourceNames ? { resourceNames: [...permission.resourceNames] } : {}),
    }));
}

/**
 * A ServiceAccount; a ClusterRole with the operator's cluster-wide permissions and its ClusterRoleBinding; a Role with
 * the permissions it needs only in its own namespace (its Lease) and its RoleBinding.
 */
export class OperatorRbac extends Construct {
  public readonly serviceAccountName: string;

  constructor(scope: Construct, id: string, props: OperatorRbacProps) {
    super(scope, id);
    const name = props.name ?? OPERATOR_NAME;
    const { namespace } = props;
    const labels = { ...props.labels };
    const permissions = props.permissions ?? OPERATOR_PERMISSIONS;
    const subjects = [{ kind: 'ServiceAccount', name, namespace }];
    this.serviceAccountName = name;
    new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: { name, namespace, labels },
    });
    new k8s.KubeClusterRole(this, 'ClusterRole', {
      metadata: { name, labels },
      rules: policyRules(permissions, 'cluster'),
    });
    new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects,
    });
    new k8s.KubeRole(this, 'Role', {
      metadata: { name, namespace, labels },
      rules: policyRules(permissions, 'operator-namespace'),
    });
    new k8s.KubeRoleBinding(this, 'RoleBinding', {
      metadata: { name, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects,
    });
  }
}
