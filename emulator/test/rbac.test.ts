// RBAC as the real authorizer decides it: ServiceAccount tokens against applied Roles, ClusterRoles and bindings,
// resourceNames, subresources, non-resource URLs, aggregation, and the OwnerReferencesPermissionEnforcement check.
import test from 'ava';
import { call, distDir, emulatorFixture, type EmulatorFixture, openWatch } from './support.js';

let fx: EmulatorFixture;

test.before(async () => {
  fx = await emulatorFixture();
  await fx.apply(distDir, `${distDir}samples/`);
  await fx.admin('POST', '/api/v1/namespaces', { metadata: { name: 'team' } });
  await fx.admin('POST', '/api/v1/namespaces/team/serviceaccounts', { metadata: { name: 'reader' } });
  await fx.admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles', {
    metadata: { name: 'reader' },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['allowed'] },
    ],
  });
  await fx.admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings', {
    metadata: { name: 'reader' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
    subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'team' }],
  });
  for (const name of ['allowed', 'denied'])
    await fx.admin('POST', '/api/v1/namespaces/team/secrets', { metadata: { name }, stringData: { k: 'v' } });
});

test.after.always(async () => {
  await fx?.close();
});

const as = (namespace: string, name: string) => fx.emulator.serviceAccountToken(namespace, name);

/** Binds the ClusterRole `role` to the user `user` (a ClusterRoleBinding of the role's name). */
const bindClusterRole = (role: string, user: string) =>
  fx.admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: role },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'User', name: user }],
  });

test('a ServiceAccount without watch on configmaps gets 403 on a watch, with the apiserver message', async (t) => {
  const token = as('team', 'reader');
  t.is((await call(fx.emulator.url, token, 'GET', '/api/v1/namespaces/team/configmaps')).status, 200);
  const denied = await call(fx.emulator.url, token, 'GET', '/api/v1/namespaces/team/configmaps?watch=true');
  t.is(denied.status, 403);
  t.deepEqual(denied.body, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message:
      'configmaps is forbidden: User "system:serviceaccount:team:reader" cannot watch resource "configmaps" in API group "" in the namespace "team"',
    reason: 'Forbidden',
    details: { kind: 'configmaps' },
    code: 403,
  });
});

test('the operator ServiceAccount with the ClusterRole from dist/ may watch configmaps and secrets in any namespace', async (t) => {
  const token = as('customapp-system', 'customapp-operator');
  for (const path of [
    '/api/v1/configmaps?watch=true&timeoutSeconds=1',
    '/api/v1/namespaces/default/secrets?watch=1&timeoutSeconds=1',
    '/apis/app.example.com/v1/customapps?watch=1&timeoutSeconds=1',
  ]) {
    const watch = await openWatch(fx.emulator.url, token, path);
    t.teardown(() => watch.close());
    t.is(watch.status, 200, path);
  }
  const deny = await call(fx.emulator.url, token, 'DELETE', '/apis/app.example.com/v1/namespaces/default/customapps/hello');
  t.is(deny.status, 403);
  t.is(
    deny.body.message,
    'customapps.app.example.com "hello" is forbidden: User "system:serviceaccount:customapp-system:customapp-operator" cannot delete resource "customapps" in API group "app.example.com" in the namespace "default"',
  );
  const status = await call(
    fx.emulator.url,
    token,
    'PATCH',
    '/apis/app.example.com/v1/namespaces/default/customapps/hello/status',
    { status: { readyReplicas: 1 } },
    'application/merge-patch+json',
  );
  t.is(status.status, 200, 'customapps/status patch is granted');
  const lease = await call(fx.emulator.url, token, 'POST', '/apis/coordination.k8s.io/v1/namespaces/customapp-system/leases', {
    metadata: { name: 'leader' },
    spec: { holderIdentity: 'me' },
  });
  t.is(lease.status, 201);
  const list = await call(fx.emulator.url, token, 'GET', '/apis/coordination.k8s.io/v1/namespaces/customapp-system/leases');
  t.is(list.status, 403, 'leases: get, create and update only');
});

test('resourceNames is honoured: the named object only, and never for list', async (t) => {
  const token = as('team', 'reader');
  t.is((await call(fx.emulator.url, token, 'GET', '/api/v1/namespaces/team/secrets/allowed')).status, 200);
  const other = await call(fx.emulator.url, token, 'GET', '/api/v1/namespaces/team/secrets/denied');
  t.is(other.status, 403);
  t.is(other.body.details.name, 'denied');
  t.is((await call(fx.emulator.url, token, 'GET', '/api/v1/namespaces/team/secrets')).status, 403);
});

test('a RoleBinding to a ClusterRole grants it only in the binding namespace', async (t) => {
  await fx.admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: 'lease-reader' },
    rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list'] }],
  });
  await fx.admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings', {
    metadata: { name: 'lease-reader' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'lease-reader' },
    subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'team' }],
  });
  const token = as('team', 'reader');
  t.is((await call(fx.emulator.url, token, 'GET', '/apis/coordination.k8s.io/v1/namespaces/team/leases')).status, 200);
  t.is((await call(fx.emulator.url, token, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases')).status, 403);
  t.is((await call(fx.emulator.url, token, 'GET', '/apis/coordination.k8s.io/v1/leases')).status, 403);
});

test('an aggregated ClusterRole carries the rules of the ClusterRoles its selector matches', async (t) => {
  await fx.admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: 'aggregate' },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate': 'true' } }] },
    rules: [],
  });
  await fx.admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: 'piece', labels: { 'example.com/aggregate': 'true' } },
    rules: [{ apiGroups: [''], resources: ['services'], verbs: ['list'] }],
  });
  await bindClusterRole('aggregate', 'jane');
  const token = fx.emulator.userToken({ username: 'jane', groups: [] });
  t.is((await call(fx.emulator.url, token, 'GET', '/api/v1/services')).status, 200);
  t.is((await call(fx.emulator.url, token, 'GET', '/api/v1/configmaps')).status, 403);
});

test('discovery is open to every authenticated user, other paths are not; bad tokens get 401, no token is anonymous', async (t) => {
  const token = as('team', 'reader');
  t.is((await call(fx.emulator.url, token, 'GET', '/apis')).status, 200);
  const metrics = await call(fx.emulator.url, token, 'GET', '/metrics');
  t.is(metrics.status, 403);
  t.is(metrics.body.message, 'forbidden: User "system:serviceaccount:team:reader" cannot get path "/metrics"');
  t.is((await call(fx.emulator.url, 'not-a-token', 'GET', '/api/v1/namespaces')).status, 401);
  t.is((await call(fx.emulator.url, undefined, 'GET', '/version')).status, 200);
  const anonymous = await call(fx.emulator.url, undefined, 'GET', '/api/v1/namespaces');
  t.is(anonymous.status, 403);
  t.regex(anonymous.body.message, /User "system:anonymous" cannot list resource "namespaces"/);
});

test('setting a blocking ownerReference needs update on the owner finalizers (OwnerReferencesPermissionEnforcement)', async (t) => {
  const app = await fx.admin('GET', '/apis/app.example.com/v1/namespaces/default/customapps/hello');
  const ownerReferences = [
    {
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      name: 'hello',
      uid: app.body.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
  const deployment = (name: string) => ({
    metadata: { name, ownerReferences },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  });
  const operator = await call(
    fx.emulator.url,
    as('customapp-system', 'customapp-operator'),
    'POST',
    '/apis/apps/v1/namespaces/default/deployments',
    deployment('owned'),
  );
  t.is(operator.status, 201, 'the operator role has customapps/finalizers update');

  await fx.admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: 'deployer' },
    rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['create'] }],
  });
  await bindClusterRole('deployer', 'deployer');
  const token = fx.emulator.userToken({ username: 'deployer', groups: [] });
  const denied = await call(fx.emulator.url, token, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('blocked'));
  t.is(denied.status, 403);
  t.is(
    denied.body.message,
    'deployments.apps "blocked" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can\'t set finalizers on: , <nil>',
  );
  const nonBlocking = await call(fx.emulator.url, token, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
    ...deployment('loose'),
    metadata: { name: 'loose', ownerReferences: [{ ...ownerReferences[0], blockOwnerDeletion: false }] },
  });
  t.is(nonBlocking.status, 201);
});
