// Differential: what objects look like after writes (defaults, CRD status, custom resource defaulting and pruning,
// generation, strategic merge and apply patches, finalizers), watch event sequences, lists, tables and discovery.
import { readFileSync } from 'node:fs';
import test from 'ava';
import { parseAllDocuments } from 'yaml';
import { eventually } from '../../../test/support/eventually.js';
import { normalize, onBoth, outcome, pairSuite, type Target } from './support.js';

const dist = (file: string) =>
  parseAllDocuments(readFileSync(new URL(`../../../dist/${file}`, import.meta.url), 'utf8')).map((d) => d.toJSON());
const [crd] = dist('customapp-crd.k8s.yaml');
const operator = dist('customapp-operator.k8s.yaml');
const deployment = operator.find((o) => o.kind === 'Deployment');
const clusterRole = operator.find((o) => o.kind === 'ClusterRole');
const clusterRoleBinding = operator.find((o) => o.kind === 'ClusterRoleBinding');
const role = operator.find((o) => o.kind === 'Role');
const roleBinding = operator.find((o) => o.kind === 'RoleBinding');

/** Waits until `path` answers 200 with a body that `check` accepts. */
async function waitFor(target: Target, path: string, check: (body: any) => boolean): Promise<void> {
  await eventually(
    `${target.name}: ${path} to match`,
    async () => {
      const answer = await target.request('GET', path);
      return answer.status === 200 && check(answer.body);
    },
    5000,
    50,
  );
}

const suite = pairSuite(test);
const { same } = suite;

const customApps = (ns: string) => `/apis/app.example.com/v1/namespaces/${ns}/customapps`;

// Serial and first: the CRD is created here and used by the later tests.
test.serial('a created CRD: its create answer, the Established status, and discovery of its resource', async (t) => {
  const [emulator, envtest] = await onBoth(suite.pair, async (target) => {
    const created = await target.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    await waitFor(target, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, (b) =>
      (b.status?.conditions ?? []).some((c: any) => c.type === 'Established' && c.status === 'True'),
    );
    await waitFor(target, '/apis/app.example.com/v1', () => true);
    const established = await target.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
    const group = await target.request('GET', '/apis/app.example.com');
    const resources = await target.request('GET', '/apis/app.example.com/v1');
    const aggregated = await target.request('GET', '/apis', undefined, {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    });
    const entry = aggregated.body.items.find((g: any) => g.metadata.name === 'app.example.com');
    return [outcome(created), outcome(established), outcome(group), outcome(resources), normalize(entry)];
  });
  for (let i = 0; i < emulator.length; i++) t.deepEqual(emulator[i], envtest[i], `step ${i}`);
});

test('built-in kinds come back with the apiserver defaults (Deployment, Service, Secret, Namespace, RBAC, Lease, Events)', (t) =>
  same(t, 'defaults', async (target, ns) => {
    const out: unknown[] = [];
    const post = async (path: string, body: unknown) => out.push(outcome(await target.request('POST', path, body)));
    await post(`/apis/apps/v1/namespaces/${ns}/deployments`, { ...deployment, metadata: { ...deployment.metadata, namespace: ns } });
    await post(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      metadata: { name: 'recreate' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        strategy: { type: 'Recreate' },
        template: {
          metadata: { labels: { a: 'b' } },
          spec: {
            volumes: [{ name: 'v' }, { name: 'c', configMap: { name: 'x' } }, { name: 's', secret: { secretName: 'x' } }],
            initContainers: [{ name: 'i', image: 'busybox' }],
            containers: [
              {
                name: 'c',
                image: 'nginx:latest',
                ports: [{ containerPort: 80 }],
                env: [{ name: 'A', value: '' }],
                livenessProbe: { tcpSocket: { port: 80 } },
                lifecycle: { preStop: { httpGet: { port: 80 } } },
              },
            ],
          },
        },
      },
    });
    await post(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'svc' },
      spec: { ports: [{ port: 80, targetPort: 8080 }], selector: { a: 'b' } },
    });
    await post(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'nodeport' },
      spec: {
        type: 'NodePort',
        ports: [
          { port: 80, name: 'http' },
          { port: 443, name: 'https', protocol: 'UDP' },
        ],
      },
    });
    await post(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 'secret' }, stringData: { a: 'b' } });
    await post(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'sa' } });
    await post(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, {
      metadata: { name: 'lease' },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15 },
    });
    await post(`/api/v1/namespaces/${ns}/events`, {
      metadata: { name: 'ev' },
      involvedObject: { kind: 'ConfigMap', name: 'a', namespace: ns },
      reason: 'R',
      message: 'm',
      type: 'Normal',
      source: { component: 'me' },
      count: 1,
    });
    out.push(outcome(await target.request('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events/ev`)));
    await post(`/apis/events.k8s.io/v1/namespaces/${ns}/events`, {
      metadata: { name: 'ev2' },
      eventTime: '2024-01-01T00:00:00.000000Z',
      reason: 'R',
      note: 'n',
      type: 'Normal',
      action: 'Act',
      reportingController: 'example.com/c',
      reportingInstance: 'i',
      regarding: { kind: 'ConfigMap', name: 'a', namespace: ns },
    });
    out.push(outcome(await target.request('GET', `/api/v1/namespaces/${ns}/events/ev2`)));
    await post('/apis/rbac.authorization.k8s.io/v1/clusterroles', { ...clusterRole, metadata: { name: `${ns}-role` } });
    await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'rb' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-role` },
      subjects: [
        { kind: 'ServiceAccount', name: 'sa', namespace: ns },
        { kind: 'User', name: 'u' },
      ],
    });
    out.push(outcome(await target.request('GET', `/api/v1/namespaces/${ns}`)));
    return out;
  }));

test('custom resources: schema defaults, pruning with warnings, status reset on create, and Strict field validation', (t) =>
  same(t, 'defaulting', async (target, ns) => {
    const out: unknown[] = [];
    const created = await target.request('POST', customApps(ns), {
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      metadata: { name: 'a', labels: { x: 'y' } },
      spec: { image: 'i', extra: 1 },
      status: { readyReplicas: 2 },
      top: true,
    });
    out.push(outcome(created), [created.headers.warning].flat().sort());
    const strict = await target.request('POST', `${customApps(ns)}?fieldValidation=Strict`, {
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      metadata: { name: 'b', bogus: 1 },
      spec: { image: 'i', extra: 1 },
    });
    out.push(outcome(strict));
    const ignored = await target.request('POST', `${customApps(ns)}?fieldValidation=Ignore`, {
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      metadata: { name: 'c' },
      spec: { image: 'i', extra: 1 },
    });
    out.push(outcome(ignored), ignored.headers.warning ?? null);
    const builtin = await target.request('POST', `/api/v1/namespaces/${ns}/configmaps?fieldValidation=Strict`, {
      metadata: { name: 'cm', foo: 1 },
      data: { a: 'b' },
      bar: 1,
    });
    out.push(outcome(builtin));
    const warned = await target.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'cm' },
      data: { a: 'b' },
      bar: 1,
    });
    out.push(outcome(warned), warned.headers.warning);
    const status = await target.request('PUT', `${customApps(ns)}/a/status`, {
      ...created.body,
      spec: { image: 'changed' },
      status: { readyReplicas: 1, observedGeneration: 1 },
    });
    out.push(outcome(status));
    return out;
  }));

test('the scale subresource of a CustomApp: no spec.replicas is a failed GET, a merge patch and a PUT set them, a negative count is refused', (t) =>
  same(t, 'scaling', async (target, ns) => {
    const scale = `${customApps(ns)}/a/scale`;
    const out: unknown[] = [];
    const created = await target.request('POST', customApps(ns), {
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      metadata: { name: 'a' },
      spec: { image: 'i' },
    });
    out.push(outcome(created), outcome(await target.request('GET', scale)));
    const patched = await target.request('PATCH', scale, { spec: { replicas: 3 } }, { contentType: 'application/merge-patch+json' });
    out.push(outcome(patched), outcome(await target.request('GET', scale)));
    out.push(outcome(await target.request('PUT', scale, { ...patched.body, spec: { replicas: 1 } })));
    out.push(outcome(await target.request('PUT', scale, { ...patched.body, metadata: { name: 'a' }, spec: { replicas: -1 } })));
    const app = await target.request('GET', `${customApps(ns)}/a`);
    // managedFields after a scale write are a known divergence (emulator/README.md, Known divergences, managedFields).
    const { managedFields: _scaleOwnership, ...metadata } = app.body.metadata;
    out.push(outcome({ ...app, body: { ...app.body, metadata } }));
    out.push(outcome(await target.request('PUT', `${customApps(ns)}/a`, { ...app.body, spec: { image: 'i', replicas: 'three' } })));
    return out;
  }));

test('generation: spec changes bump it, metadata and status do not, deletion with a finalizer does', (t) =>
  same(t, 'generation', async (target, ns) => {
    const out: unknown[] = [];
    const merge = async (path: string, body: unknown) =>
      out.push(outcome(await target.request('PATCH', path, body, { contentType: 'application/merge-patch+json' })));
    await target.request('POST', customApps(ns), {
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      metadata: { name: 'g' },
      spec: { image: 'a' },
    });
    await merge(`${customApps(ns)}/g`, { metadata: { labels: { a: 'b' }, annotations: { c: 'd' } } });
    await merge(`${customApps(ns)}/g/status`, { status: { readyReplicas: 1 } });
    await merge(`${customApps(ns)}/g`, { spec: { image: 'b' } });
    await merge(`${customApps(ns)}/g`, { spec: { image: 'b' } });
    await merge(`${customApps(ns)}/g`, { metadata: { finalizers: ['example.com/f'] } });
    out.push(outcome(await target.request('DELETE', `${customApps(ns)}/g`)));
    out.push(outcome(await target.request('DELETE', `${customApps(ns)}/g`)));
    await merge(`${customApps(ns)}/g`, { metadata: { finalizers: ['example.com/f', 'example.com/g'] } });
    await merge(`${customApps(ns)}/g`, { metadata: { finalizers: null } });
    out.push(outcome(await target.request('GET', `${customApps(ns)}/g`)));
    const d = `/apis/apps/v1/namespaces/${ns}/deployments`;
    await target.request('POST', d, { ...deployment, metadata: { name: 'd' } });
    await merge(`${d}/d`, { metadata: { labels: { x: 'y' } } });
    await merge(`${d}/d`, { metadata: { annotations: { x: 'y' } } });
    await merge(`${d}/d/status`, { status: { replicas: 3 } });
    await merge(`${d}/d`, { spec: { replicas: 2 } });
    return out;
  }));

test('strategic merge patches of a Deployment: merge keys, $patch delete and replace, $retainKeys, $setElementOrder', (t) =>
  same(t, 'strategic', async (target, ns) => {
    const out: unknown[] = [];
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/customapp-operator`;
    await target.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
      ...deployment,
      metadata: { ...deployment.metadata, namespace: ns },
    });
    const smp = async (body: unknown) =>
      out.push(outcome(await target.request('PATCH', path, body, { contentType: 'application/strategic-merge-patch+json' })));
    await smp({
      spec: { template: { spec: { containers: [{ name: 'operator', image: 'new:1', env: [{ name: 'EXTRA', value: '1' }] }] } } },
    });
    await smp({ spec: { template: { spec: { containers: [{ name: 'operator', ports: [{ containerPort: 8081, $patch: 'delete' }] }] } } } });
    await smp({ spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'busybox' }], $setElementOrder: undefined } } } });
    await smp({ spec: { template: { spec: { $setElementOrder: undefined, containers: [{ name: 'sidecar', $patch: 'delete' }] } } } });
    await smp({
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'operator' }],
            containers: [
              {
                name: 'operator',
                env: [{ name: 'Z', value: 'z' }],
                '$setElementOrder/env': [{ name: 'Z' }, { name: 'POD_NAMESPACE' }, { name: 'POD_NAME' }, { name: 'EXTRA' }],
              },
            ],
          },
        },
      },
    });
    await smp({ spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    await smp({ metadata: { labels: { 'app.kubernetes.io/managed-by': null, extra: 'x' } } });
    await smp({ spec: { template: { spec: { containers: [{ name: 'operator', args: ['--only'] }] } } } });
    await smp({
      spec: { template: { spec: { containers: [{ name: 'operator', resources: { $patch: 'replace', limits: { cpu: '1' } } }] } } },
    });
    return out;
  }));

test('server-side apply of a Deployment: create, update, ownership, conflicts, force, and pruning of dropped fields', (t) =>
  same(t, 'apply', async (target, ns) => {
    const out: unknown[] = [];
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/web`;
    const config = (image: string, extraLabel?: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: { app: 'web', ...(extraLabel ? { [extraLabel]: 'yes' } : {}) } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image, ports: [{ containerPort: 80 }] }] } },
      },
    });
    const apply = async (body: unknown, manager: string, force = false) =>
      out.push(
        outcome(
          await target.request('PATCH', `${path}?fieldManager=${manager}${force ? '&force=true' : ''}`, body, {
            contentType: 'application/apply-patch+yaml',
          }),
        ),
      );
    await apply(config('nginx:1', 'extra'), 'alice');
    await apply(config('nginx:1', 'extra'), 'alice');
    await apply(config('nginx:2'), 'alice');
    await apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3 } }, 'bob');
    await apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3 } }, 'bob', true);
    out.push(
      outcome(
        await target.request(
          'PATCH',
          path,
          { spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx:3' }] } } } },
          { contentType: 'application/strategic-merge-patch+json' },
        ),
      ),
    );
    await apply(config('nginx:2'), 'alice');
    out.push(outcome(await target.request('PATCH', `${path}`, config('x'), { contentType: 'application/apply-patch+yaml' })));
    await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web' } }, 'alice');
    return out;
  }));

test('watch sequences: label-selector transitions, finalizer deletion, and bookmarks with sendInitialEvents', (t) =>
  same(t, 'watching', async (target, ns) => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    const start = await target.request('GET', base);
    const rv = start.body.metadata.resourceVersion;
    const selected = await target.watch(`${base}?watch=1&labelSelector=tier%3Dfront&resourceVersion=${rv}`);
    const everything = await target.watch(`${base}?watch=1&resourceVersion=${rv}`);
    const merge = (name: string, body: unknown) =>
      target.request('PATCH', `${base}/${name}`, body, { contentType: 'application/merge-patch+json' });
    await target.request('POST', base, { metadata: { name: 'a', labels: { tier: 'front' } } });
    await target.request('POST', base, { metadata: { name: 'b', labels: { tier: 'back' } } });
    await merge('a', { metadata: { labels: { tier: 'back' } } });
    await merge('b', { metadata: { labels: { tier: 'front' } } });
    await merge('b', { data: { k: 'v' } });
    await merge('b', { metadata: { finalizers: ['example.com/f'] } });
    await target.request('DELETE', `${base}/b`);
    await merge('b', { metadata: { finalizers: null } });
    await target.request('DELETE', `${base}/a`);
    const front = await selected.take(6);
    const all = await everything.take(9);
    selected.close();
    everything.close();
    const initial = await target.watch(`${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    await target.request('POST', base, { metadata: { name: 'c' } });
    const seen = await initial.take(2);
    initial.close();
    return [front, all, seen];
  }));

test('lists: pagination with limit and continue, remainingItemCount, resourceVersion=0, selectors and Table output', (t) =>
  same(t, 'listing', async (target, ns) => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    for (const name of ['c', 'a', 'e', 'b', 'd'])
      await target.request('POST', base, { metadata: { name, labels: { n: name } }, data: { k: name } });
    const out: unknown[] = [];
    const first = await target.request('GET', `${base}?limit=2`);
    const second = await target.request('GET', `${base}?limit=2&continue=${first.body.metadata.continue}`);
    await target.request('DELETE', `${base}/e`);
    const third = await target.request('GET', `${base}?limit=2&continue=${second.body.metadata.continue}`);
    out.push(outcome(first), outcome(second), outcome(third));
    out.push(outcome(await target.request('GET', `${base}?resourceVersion=0&limit=1`)));
    out.push(outcome(await target.request('GET', `${base}?labelSelector=n%20in%20(a,b),n!%3Db&limit=5`)));
    const table = await target.request('GET', `${base}?labelSelector=n%3Da`, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    out.push(normalize({ ...table.body, rows: table.body.rows.map((r: any) => ({ ...r, cells: r.cells.slice(0, -1) })) }));
    await target.request('POST', customApps(ns), {
      apiVersion: 'app.example.com/v1',
      kind: 'CustomApp',
      metadata: { name: 'x' },
      spec: { image: 'img', configMapName: 'a' },
      status: {},
    });
    await target.request(
      'PATCH',
      `${customApps(ns)}/x/status`,
      {
        status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'R', message: 'm' }] },
      },
      { contentType: 'application/merge-patch+json' },
    );
    const crTable = await target.request('GET', customApps(ns), undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    out.push(normalize({ ...crTable.body, rows: crTable.body.rows.map((r: any) => ({ ...r, cells: r.cells.slice(0, 4) })) }));
    return out;
  }));

test("RBAC: what the operator ServiceAccount with dist/'s ClusterRole and Role may and may not do", async (t) => {
  const questions: [verb: string, group: string, resource: string, subresource?: string, namespace?: string, name?: string][] = [
    ['get', '', 'configmaps', '', 'default'],
    ['watch', '', 'configmaps'],
    ['list', '', 'secrets'],
    ['create', '', 'secrets', '', 'default'],
    ['update', 'app.example.com', 'customapps'],
    ['delete', 'app.example.com', 'customapps'],
    ['patch', 'app.example.com', 'customapps', 'status'],
    ['update', 'app.example.com', 'customapps', 'finalizers'],
    ['create', 'apps', 'deployments', '', 'x'],
    ['deletecollection', 'apps', 'deployments'],
    ['create', '', 'events', '', 'x'],
    ['patch', 'events.k8s.io', 'events'],
    ['list', 'coordination.k8s.io', 'leases'],
    ['update', 'coordination.k8s.io', 'leases', '', 'x'],
    // The Role: its own Lease by name, create (which no name can limit) in its namespace, and nothing elsewhere.
    ['get', 'coordination.k8s.io', 'leases', '', 'customapp-system', 'customapp-operator-leader'],
    ['update', 'coordination.k8s.io', 'leases', '', 'customapp-system', 'customapp-operator-leader'],
    ['get', 'coordination.k8s.io', 'leases', '', 'customapp-system'],
    ['update', 'coordination.k8s.io', 'leases', '', 'customapp-system', 'other'],
    ['delete', 'coordination.k8s.io', 'leases', '', 'customapp-system', 'customapp-operator-leader'],
    ['create', 'coordination.k8s.io', 'leases', '', 'customapp-system'],
    ['list', 'coordination.k8s.io', 'leases', '', 'customapp-system'],
    ['create', 'coordination.k8s.io', 'leases', '', 'kube-system'],
    ['update', 'coordination.k8s.io', 'leases', '', 'kube-system', 'kube-controller-manager'],
    ['update', 'coordination.k8s.io', 'leases', '', 'kube-node-lease', 'customapp-operator-leader'],
    ['get', '', 'namespaces'],
    ['create', '', 'services', '', 'x'],
  ];
  const leases = (namespace: string) => `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
  const lease = (name: string) => ({ metadata: { name }, spec: { holderIdentity: 'someone' } });
  const [emulator, envtest] = await onBoth(suite.pair, async (target) => {
    await target.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', clusterRole);
    await target.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', clusterRoleBinding);
    await target.request('POST', '/api/v1/namespaces', { metadata: { name: 'customapp-system' } });
    await target.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/customapp-system/roles', role);
    await target.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/customapp-system/rolebindings', roleBinding);
    const token = await target.serviceAccountToken('customapp-system', 'customapp-operator');
    const answers: unknown[] = [];
    for (const [verb, group, resource, subresource, namespace, name] of questions) {
      const review = await target.request(
        'POST',
        '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        { spec: { resourceAttributes: { verb, group, resource, subresource, namespace, name } } },
        { token },
      );
      answers.push(`${verb} ${resource}/${subresource ?? ''} ${namespace ?? ''}/${name ?? ''}: ${review.body.status?.allowed}`);
    }
    const denied = await target.request('GET', '/api/v1/namespaces/default/secrets?watch=0', undefined, { token });
    const forbidden = await target.request('DELETE', '/apis/app.example.com/v1/namespaces/default/customapps/x', undefined, { token });
    answers.push(denied.status, outcome(forbidden));
    // Real requests on Leases: its own is created, read and renewed; any other is refused with the authorizer's text.
    await target.request('POST', leases('kube-system'), lease('kube-controller-manager'));
    await target.request('POST', leases('customapp-system'), lease('other'));
    const own = await target.request('POST', leases('customapp-system'), lease('customapp-operator-leader'), { token });
    answers.push(outcome(own));
    const read = await target.request('GET', `${leases('customapp-system')}/customapp-operator-leader`, undefined, { token });
    answers.push(outcome(read));
    const renewed = { ...read.body, spec: { ...read.body.spec, holderIdentity: 'operator' } };
    answers.push(outcome(await target.request('PUT', `${leases('customapp-system')}/customapp-operator-leader`, renewed, { token })));
    for (const [namespace, name] of [
      ['kube-system', 'kube-controller-manager'],
      ['customapp-system', 'other'],
    ]) {
      const taken = (await target.request('GET', `${leases(namespace!)}/${name}`)).body;
      const body = { ...taken, spec: { ...taken.spec, holderIdentity: 'operator' } };
      answers.push(outcome(await target.request('PUT', `${leases(namespace!)}/${name}`, body, { token })));
    }
    answers.push(outcome(await target.request('POST', leases('kube-node-lease'), lease('node-1'), { token })));
    answers.push(outcome(await target.request('GET', leases('customapp-system'), undefined, { token })));
    return answers;
  });
  t.deepEqual(normalize(emulator), normalize(envtest));
  // The agreement is about the install as dist/ ships it: its own Lease by name, and no Lease of anyone else.
  for (const answer of [
    'get leases/ customapp-system/customapp-operator-leader: true',
    'update leases/ customapp-system/customapp-operator-leader: true',
    'update leases/ customapp-system/other: false',
    'create leases/ kube-system/: false',
    'update leases/ kube-system/kube-controller-manager: false',
  ])
    t.true(envtest.includes(answer), answer);
});

test('discovery documents of the served built-in resources match', async (t) => {
  const [emulator, envtest] = await onBoth(suite.pair, async (target) => {
    const pick = (list: any, names: string[]) => list.resources.filter((r: any) => names.includes(r.name));
    const core = await target.request('GET', '/api/v1');
    const apps = await target.request('GET', '/apis/apps/v1');
    const rbac = await target.request('GET', '/apis/rbac.authorization.k8s.io/v1');
    const version = await target.request('GET', '/api');
    return [
      pick(core.body, [
        'configmaps',
        'secrets',
        'namespaces',
        'namespaces/status',
        'namespaces/finalize',
        'services',
        'services/status',
        'serviceaccounts',
        'serviceaccounts/token',
        'events',
      ]),
      pick(apps.body, ['deployments', 'deployments/status', 'deployments/scale']),
      rbac.body,
      { ...version.body, serverAddressByClientCIDRs: undefined },
    ];
  });
  t.deepEqual(normalize(emulator), normalize(envtest));
});

test('idempotent writes: re-sending the same desired object changes nothing, a PUT without clusterIP keeps it', (t) =>
  same(t, 'idempotent', async (target, ns) => {
    const out: unknown[] = [];
    const d = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const desired = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27', envFrom: [{ configMapRef: { name: 'cfg' } }] }] },
        },
      },
    };
    out.push(outcome(await target.request('POST', d, desired)));
    out.push(outcome(await target.request('PUT', `${d}/web`, desired)));
    out.push(
      outcome(await target.request('PATCH', `${d}/web`, { spec: { replicas: 1 } }, { contentType: 'application/merge-patch+json' })),
    );
    out.push(
      outcome(
        await target.request('PATCH', `${d}/web?fieldManager=op&force=true`, desired, { contentType: 'application/apply-patch+yaml' }),
      ),
    );
    out.push(
      outcome(
        await target.request('PATCH', `${d}/web?fieldManager=op&force=true`, desired, { contentType: 'application/apply-patch+yaml' }),
      ),
    );
    const s = `/api/v1/namespaces/${ns}/services`;
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    };
    const created = await target.request('POST', s, service);
    out.push(outcome(created));
    const replaced = await target.request('PUT', `${s}/web`, {
      ...service,
      metadata: { name: 'web', resourceVersion: created.body.metadata.resourceVersion },
    });
    out.push(outcome(replaced), replaced.body.spec?.clusterIP === created.body.spec.clusterIP);
    out.push(
      outcome(
        await target.request(
          'PATCH',
          `${s}/web`,
          { spec: { ports: [{ name: 'http', port: 81, targetPort: 8080 }] } },
          { contentType: 'application/strategic-merge-patch+json' },
        ),
      ),
    );
    return out;
  }));
