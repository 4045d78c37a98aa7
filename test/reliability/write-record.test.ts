// The write record on each API target: the emulator's and kube-apiserver's audit log tell the same writes, by user.
import test from 'ava';
import { OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { KubeClient } from '../../operator/kube/client.js';
import type { KubeObject } from '../../operator/kube/objects.js';
import { CONFIGMAPS, NAMESPACES, type Resource } from '../../operator/kube/resources.js';
import { selectedTargets } from '../support/targets.js';
import { adminClient, createAll, eventually, objects } from '../support/operator-harness.js';
import { startRecordingCluster } from '../support/write-record.js';

const rbacResource = (plural: string, kind: string): Resource => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural,
  kind,
  namespaced: true,
});

for (const target of selectedTargets()) {
  test(`[${target}] the writes of the recorded group's ServiceAccounts are recorded with user, object, times and code; others' are not`, async (t) => {
    const recording = await startRecordingCluster(target, [`system:serviceaccounts:${OPERATOR_NAMESPACE}`]);
    t.teardown(() => recording.stop());
    const admin = await adminClient(recording.cluster);
    t.teardown(() => admin.close());
    await admin.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OPERATOR_NAMESPACE } });
    await createAll(admin, objects.configMap(OPERATOR_NAMESPACE, 'by-admin', { V: '1' }));
    const writer = await KubeClient.fromKubeConfig((await recording.cluster.serviceAccount(OPERATOR_NAMESPACE, 'writer')).kubeConfig);
    t.teardown(() => writer.close());

    const rbac = 'rbac.authorization.k8s.io';
    const metadata = { name: 'writer', namespace: OPERATOR_NAMESPACE };
    await admin.create(rbacResource('roles', 'Role'), OPERATOR_NAMESPACE, {
      apiVersion: `${rbac}/v1`,
      kind: 'Role',
      metadata,
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'patch', 'delete'] }],
    } as KubeObject);
    await admin.create(rbacResource('rolebindings', 'RoleBinding'), OPERATOR_NAMESPACE, {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata,
      roleRef: { apiGroup: rbac, kind: 'Role', name: 'writer' },
      subjects: [{ kind: 'ServiceAccount', name: 'writer', namespace: OPERATOR_NAMESPACE }],
    } as KubeObject);

    const before = Date.now();
    // Refused until the RoleBinding reaches the authorizer: each refusal is a recorded write too.
    await eventually('the writer may create ConfigMaps', () =>
      writer.create(CONFIGMAPS, OPERATOR_NAMESPACE, objects.configMap(OPERATOR_NAMESPACE, 'by-writer', { V: '1' })),
    );
    await writer.patch(CONFIGMAPS, OPERATOR_NAMESPACE, 'by-writer', 'merge', { data: { V: '2' } });
    await admin.patch(CONFIGMAPS, OPERATOR_NAMESPACE, 'by-admin', 'merge', { data: { V: '2' } });
    await writer.delete(CONFIGMAPS, OPERATOR_NAMESPACE, 'by-writer');
    const after = Date.now();

    const writes = await recording.writes();
    const user = `system:serviceaccount:${OPERATOR_NAMESPACE}:writer`;
    const object = { user, group: '', resource: 'configmaps', subresource: '', namespace: OPERATOR_NAMESPACE };
    t.deepEqual(
      writes
        .filter((write) => write.code !== 403)
        .map(({ user, verb, group, resource, subresource, namespace, name, code }) => ({
          user,
          verb,
          group,
          resource,
          subresource,
          namespace,
          name,
          code,
        })),
      [
        { ...object, verb: 'create', name: 'by-writer', code: 201 },
        { ...object, verb: 'patch', name: 'by-writer', code: 200 },
        { ...object, verb: 'delete', name: 'by-writer', code: 200 },
      ],
      "the ServiceAccount's writes are recorded in order, a create with the name it made; the admin's are not",
    );
    t.true(writes.every((write) => write.user === user));
    for (const write of writes) {
      // The audit log's timestamps have microseconds; the test's clock has milliseconds.
      t.true(
        before - 1 <= write.receivedMs && write.receivedMs <= write.completedMs && write.completedMs <= after + 1,
        JSON.stringify(write),
      );
    }
  });
}
