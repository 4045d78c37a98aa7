// The operator's identity and permissions: a ServiceAccount bound to a ClusterRole, to a Role in its own namespace and,
// when it watches some namespaces, to a Role in each of them, all generated from permissions.ts.
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-27';
import { OPERATOR_NAME } from '../api/customapp.js';
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
  /**
   * The namespaces the operator watches (its `--namespaces`): the `watched-namespaces` permissions go into a Role of
   * each, bound to the ServiceAccount, and the ClusterRole keeps only the `cluster` ones.
   * @default every namespace: the `watched-namespaces` permissions are in the ClusterRole
   */
  readonly namespaces?: readonly string[];
}

/**
 * Turns the permissions of the scopes given into RBAC rules, in the table's order: one rule per row, verbs as listed,
 * `resourceNames` where the row has them.
 */
export function policyRules(permissions: readonly Permission[], scopes: PermissionScope | readonly PermissionScope[]): k8s.PolicyRule[] {
  const wanted: readonly PermissionScope[] = typeof scopes === 'string' ? [scopes] : scopes;
  return permissions
    .filter((permission) => wanted.includes(permission.scope))
    .map((permission) => ({
      apiGroups: [permission.apiGroup],
      resources: [permission.resource],
      verbs: [...permission.verbs],
      ...(permission.resourceNames ? { resourceNames: [...permission.resourceNames] } : {}),
    }));
}

/**
 * The scopes of each role: the ClusterRole's, and each namespace's Role's. Watching every namespace, the
 * `watched-namespaces` permissions are cluster-wide; watching some, they go into a Role of each, which in the operator's
 * own namespace is the same Role as its Lease's.
 */
export function roleScopes(
  namespace: string,
  namespaces?: readonly string[],
): { cluster: PermissionScope[]; roles: Map<string, PermissionScope[]> } {
  if (!namespaces) return { cluster: ['cluster', 'watched-namespaces'], roles: new Map([[namespace, ['operator-namespace']]]) };
  const roles = new Map<string, PermissionScope[]>([[namespace, ['operator-namespace']]]);
  for (const watched of namespaces) roles.set(watched, [...(roles.get(watched) ?? []), 'watched-namespaces']);
  return { cluster: ['cluster'], roles };
}

/**
 * A ServiceAccount; a ClusterRole with the operator's cluster-wide permissions and its ClusterRoleBinding; a Role with
 * the permissions it needs only in its own namespace (its Lease) and its RoleBinding; and, when it watches some
 * namespaces, a Role and RoleBinding in each with what it needs there (all named as the ServiceAccount).
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
    const scopes = roleScopes(namespace, props.namespaces);
    this.serviceAccountName = name;
    new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: { name, namespace, labels },
    });
    new k8s.KubeClusterRole(this, 'ClusterRole', {
      metadata: { name, labels },
      rules: policyRules(permissions, scopes.cluster),
    });
    new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects,
    });
    for (const [roleNamespace, roleScope] of scopes.roles) {
      // The operator's own namespace keeps the construct ids it always had, so that its objects keep their names.
      const suffix = roleNamespace === namespace ? '' : `-${roleNamespace}`;
      new k8s.KubeRole(this, `Role${suffix}`, {
        metadata: { name, namespace: roleNamespace, labels },
        rules: policyRules(permissions, roleScope),
      });
      new k8s.KubeRoleBinding(this, `RoleBinding${suffix}`, {
        metadata: { name, namespace: roleNamespace, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects,
      });
    }
  }
}
