// Differential: status codes, reasons and Status bodies of failing (and a few succeeding) requests, emulator vs envtest.
import { readFileSync } from 'node:fs';
import test from 'ava';
import { parse } from 'yaml';
import { eventually } from '../../../test/support/eventually.js';
import { normalize, onBoth, outcome, pairSuite, type Target } from './support.js';

const crd = parse(readFileSync(new URL('../../../dist/customapp-crd.k8s.yaml', import.meta.url), 'utf8'));

const suite = pairSuite(test, (pair) =>
  onBoth(pair, async (target) => {
    const created = await target.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    if (created.status !== 201) throw new Error(`${target.name}: CRD ${created.status}`);
    const served = async () => (await target.request('GET', '/apis/app.example.com/v1/customapps')).status === 200;
    await eventually(`${target.name}: customapps served`, served, 10_000, 100);
  }),
);

/** A namespaced CRD of `group` whose v2 is served and stored, and whose v1 is served when `v1Served`; any field is kept. */
function twoVersionCrd(group: string, names: { plural: string; singular: string; kind: string }, v1Served: boolean) {
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  return {
    metadata: { name: `${names.plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names,
      versions: [
        { name: 'v2', served: true, storage: true, schema },
        { name: 'v1', served: v1Served, storage: false, schema },
      ],
    },
  };
}

type Step = readonly [method: string, path: string, body?: unknown, contentType?: string];

async function run(target: Target, steps: readonly Step[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [method, path, body, contentType] of steps) {
    const answer = await target.request(method, path, body, { contentType });
    out.push({ request: `${method} ${path}`, ...(outcome(answer) as object) });
  }
  return out;
}

async function same(t: import('ava').ExecutionContext, steps: (ns: string) => readonly Step[], ns: string): Promise<void> {
  const [emulator, envtest] = await onBoth(suite.pair, async (target) => {
    await target.request('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    return run(target, steps(ns));
  });
  const a = normalize(emulator) as unknown[];
  const b = normalize(envtest) as unknown[];
  for (let i = 0; i < Math.max(a.length, b.length); i++) t.deepEqual(a[i], b[i]);
}

/** The creation of an events.k8s.io/v1 Event `name` in `ns` with these fields. */
const newEvent = (ns: string, name: string, fields: object): Step => [
  'POST',
  `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
  { metadata: { name }, ...fields },
];
/** The time and object of an events.k8s.io/v1 Event about ConfigMap `x` in `ns`, as a valid one has them. */
const aboutConfigMap = (ns: string) => ({
  eventTime: '2024-01-01T00:00:00.000000Z',
  regarding: { namespace: ns, kind: 'ConfigMap', name: 'x' },
});
const customApp = (name: string, spec: unknown) => ({ apiVersion: 'app.example.com/v1', kind: 'CustomApp', metadata: { name }, spec });

test('object errors: NotFound, AlreadyExists, Invalid names, malformed JSON, missing namespace, name mismatch, stale update', (t) =>
  same(
    t,
    (ns) => [
      ['GET', `/api/v1/namespaces/${ns}/configmaps/missing`],
      ['DELETE', `/api/v1/namespaces/${ns}/configmaps/missing`],
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'dup' }, data: { a: '1' } }],
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'dup' } }],
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'Bad_Name' } }],
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'labels', labels: { 'bad key!': 'x', ok: 'bad value!' } } }],
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: {} }],
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, '{"metadata":{"name":"a"'],
      ['POST', '/api/v1/namespaces/no-such-namespace/configmaps', { metadata: { name: 'x' } }],
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'other-ns', namespace: 'default' } }],
      ['PUT', `/api/v1/namespaces/${ns}/configmaps/dup`, { metadata: { name: 'other' } }],
      ['PUT', `/api/v1/namespaces/${ns}/configmaps/dup`, { metadata: { name: 'dup', resourceVersion: '1' } }],
      ['PUT', `/api/v1/namespaces/${ns}/configmaps/missing`, { metadata: { name: 'missing' } }],
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 'v2' } }],
      ['POST', `/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 'b64' }, data: { k: 'not base64!' } }],
      ['POST', `/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 'fold' }, stringData: { k: 'v' }, data: { j: 'dg==' } }],
      [
        'DELETE',
        `/api/v1/namespaces/${ns}/configmaps/dup`,
        { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: '00000000-0000-0000-0000-000000000000' } },
      ],
      [
        'DELETE',
        `/api/v1/namespaces/${ns}/configmaps/dup`,
        { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } },
      ],
      ['DELETE', `/api/v1/namespaces/${ns}/configmaps/dup?propagationPolicy=Sideways`],
      ['DELETE', '/api/v1/namespaces/kube-system'],
      [
        'POST',
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
        { metadata: { name: 'ms' }, spec: { holderIdentity: 'me', renewTime: '2024-01-01T00:00:00.123Z' } },
      ],
      [
        'POST',
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
        {
          metadata: { name: 'micro' },
          spec: { holderIdentity: 'me', renewTime: '2024-01-01T02:00:00.123456+02:00', acquireTime: '2024-01-01T00:00:00.000001Z' },
        },
      ],
      [
        'POST',
        `/api/v1/namespaces/${ns}/events`,
        {
          metadata: { name: 'times' },
          involvedObject: {},
          firstTimestamp: '2024-01-01T00:00:00.987Z',
          lastTimestamp: '2024-01-01T01:00:00+01:00',
        },
      ],
      ['POST', `/api/v1/namespaces/${ns}/events`, { metadata: { name: 'bad-time' }, involvedObject: {}, firstTimestamp: 'yesterday' }],
      newEvent(ns, 'new-bare', { regarding: { namespace: ns }, type: 'Info' }),
      newEvent(ns, 'new-partial', {
        ...aboutConfigMap(ns),
        reportingController: 'bad controller',
        type: 'Normal',
        deprecatedCount: 2,
        deprecatedSource: { component: 'x' },
        deprecatedFirstTimestamp: '2024-01-01T00:00:00Z',
      }),
      newEvent(ns, 'new-ok', {
        ...aboutConfigMap(ns),
        reportingController: 'example.com/op',
        reportingInstance: 'op-1',
        action: 'Reconcile',
        reason: 'Synced',
        note: 'ok',
        type: 'Normal',
      }),
      [
        'POST',
        `/api/v1/namespaces/${ns}/events`,
        { metadata: { name: 'core-new' }, eventTime: '2024-01-01T00:00:00.000000Z', involvedObject: { namespace: ns }, reason: 'R' },
      ],
      ['POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { metadata: { name: 'dry' } }],
      ['GET', `/api/v1/namespaces/${ns}/configmaps/dry`],
    ],
    'errors-objects',
  ));

test('request errors: methods, media types, selectors and list options', (t) =>
  same(
    t,
    (ns) => [
      ['PUT', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'x' } }],
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, 'metadata: {name: x}', 'text/plain'],
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, 'metadata:\n  name: from-yaml\ndata:\n  on: yes\n', 'application/yaml'],
      ['PATCH', `/api/v1/namespaces/${ns}/configmaps/from-yaml`, '{}', 'text/plain'],
      ['GET', `/api/v1/namespaces/${ns}/configmaps?fieldSelector=foo%3Dbar`],
      ['GET', `/api/v1/namespaces/${ns}/secrets?fieldSelector=foo%3Dbar`],
      ['GET', `/api/v1/namespaces/${ns}/secrets?fieldSelector=type%3DOpaque`],
      ['GET', `/api/v1/namespaces/${ns}/configmaps?fieldSelector=metadata.name%20in%20(a)`],
      ['GET', `/api/v1/namespaces/${ns}/configmaps?labelSelector=a%20in%20(b`],
      ['GET', `/api/v1/namespaces/${ns}/configmaps?labelSelector=A_%25%3Db`],
      ['GET', `/apis/app.example.com/v1/namespaces/${ns}/customapps?fieldSelector=spec.image%3Dx`],
      ['GET', `/api/v1/namespaces/${ns}/configmaps?resourceVersionMatch=Exact`],
      ['GET', `/api/v1/namespaces/${ns}/configmaps?resourceVersion=0&resourceVersionMatch=Exact`],
      ['GET', `/api/v1/namespaces/${ns}/configmaps?watch=1&sendInitialEvents=true`],
      ['GET', '/apis/no.such.group/v1/things'],
      ['GET', '/api/v1/nosuchresource'],
    ],
    'errors-requests',
  ));

test('patch errors: JSON patch test failures, malformed patches, strategic merge on custom resources', (t) =>
  same(
    t,
    (ns) => [
      ['POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'p' }, data: { a: '1' } }],
      ['PATCH', `/api/v1/namespaces/${ns}/configmaps/p`, [{ op: 'test', path: '/data/a', value: '2' }], 'application/json-patch+json'],
      ['PATCH', `/api/v1/namespaces/${ns}/configmaps/p`, [{ op: 'remove', path: '/data/zz' }], 'application/json-patch+json'],
      [
        'PATCH',
        `/api/v1/namespaces/${ns}/configmaps/p`,
        [
          { op: 'test', path: '/data/a', value: '1' },
          { op: 'add', path: '/data/b', value: '2' },
        ],
        'application/json-patch+json',
      ],
      ['PATCH', `/api/v1/namespaces/${ns}/configmaps/p`, '{"data":', 'application/merge-patch+json'],
      ['PATCH', `/api/v1/namespaces/${ns}/configmaps/p`, { metadata: { resourceVersion: '1' } }, 'application/merge-patch+json'],
      ['PATCH', `/api/v1/namespaces/${ns}/configmaps/missing`, {}, 'application/merge-patch+json'],
      ['POST', `/apis/app.example.com/v1/namespaces/${ns}/customapps`, customApp('c', { image: 'x' })],
      [
        'PATCH',
        `/apis/app.example.com/v1/namespaces/${ns}/customapps/c`,
        { spec: { image: 'y' } },
        'application/strategic-merge-patch+json',
      ],
      ['PATCH', `/apis/app.example.com/v1/namespaces/${ns}/customapps/c`, { spec: { port: 'eighty' } }, 'application/merge-patch+json'],
    ],
    'errors-patches',
  ));

test('custom resource validation: types, ranges, patterns, lengths, required, and a PUT without resourceVersion', (t) =>
  same(
    t,
    (ns) => [
      [
        'POST',
        `/apis/app.example.com/v1/namespaces/${ns}/customapps`,
        customApp('bad', { port: 70000, replicas: -1, configMapName: 'Bad_Name', image: '', secretName: 'x'.repeat(254) }),
      ],
      ['POST', `/apis/app.example.com/v1/namespaces/${ns}/customapps`, customApp('types', { port: 'x', replicas: 1.5, image: 5 })],
      [
        'POST',
        `/apis/app.example.com/v1/namespaces/${ns}/customapps`,
        { apiVersion: 'app.example.com/v1', kind: 'CustomApp', metadata: { name: 'nospec' } },
      ],
      ['POST', `/apis/app.example.com/v1/namespaces/${ns}/customapps`, customApp('Bad.Name_', { image: 'x' })],
      // Quantities are int-or-string: a whole number or a string of the pattern; a fraction, a boolean, a negative
      // number, one past the maximum and a string off the pattern are refused.
      [
        'POST',
        `/apis/app.example.com/v1/namespaces/${ns}/customapps`,
        customApp('quantities', {
          image: 'x',
          resources: { requests: { cpu: 0.5, memory: -1 }, limits: { cpu: true, memory: 2 ** 53 } },
        }),
      ],
      [
        'POST',
        `/apis/app.example.com/v1/namespaces/${ns}/customapps`,
        customApp('spellings', { image: 'x', resources: { requests: { cpu: '1e3', memory: '-1' } } }),
      ],
      [
        'POST',
        `/apis/app.example.com/v1/namespaces/${ns}/customapps`,
        customApp('whole', {
          image: 'x',
          resources: { requests: { cpu: 1, memory: 1073741824 }, limits: { cpu: '1.5', memory: 2 ** 53 - 1 } },
        }),
      ],
      ['POST', `/apis/app.example.com/v1/namespaces/${ns}/customapps`, customApp('ok', { image: 'x' })],
      ['PUT', `/apis/app.example.com/v1/namespaces/${ns}/customapps/ok`, customApp('ok', { image: 'y' })],
      ['PUT', `/apis/app.example.com/v1/namespaces/${ns}/customapps/missing`, customApp('missing', { image: 'y' })],
      [
        'PUT',
        `/apis/app.example.com/v1/namespaces/${ns}/customapps/ok/status`,
        { ...customApp('ok', { image: 'x' }), status: { conditions: [{ type: 'Ready' }] } },
      ],
    ],
    'errors-validation',
  ));

test('what is not served: a group no CRD defines, a version a CRD does not serve, a resource no group version has, and RBAC answered before any of them', async (t) => {
  const widgets = twoVersionCrd('unserved.example.com', { plural: 'widgets', singular: 'widget', kind: 'Widget' }, false);
  const paths = [
    '/apis/nothere.example.com',
    '/apis/nothere.example.com/v1',
    '/apis/nothere.example.com/v1/things',
    '/apis/unserved.example.com',
    '/apis/unserved.example.com/v1',
    '/apis/unserved.example.com/v1/widgets',
    '/apis/unserved.example.com/v1/namespaces/default/widgets?watch=1',
    '/apis/unserved.example.com/v2/gadgets',
    '/apis/apps/v9',
    '/apis/apps/v9/deployments',
    '/apis/apps/v1/gadgets',
    '/api/v9',
    '/api/v1/gadgets',
  ];
  const [emulator, envtest] = await onBoth(suite.pair, async (target) => {
    const created = await target.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgets);
    if (created.status !== 201) throw new Error(`${target.name}: CRD ${created.status}`);
    const served = async () => (await target.request('GET', '/apis/unserved.example.com/v2')).status === 200;
    await eventually(`${target.name}: unserved.example.com/v2 served`, served, 10_000, 100);
    await target.request('POST', '/api/v1/namespaces', { metadata: { name: 'customapp-system' } });
    const token = await target.serviceAccountToken('customapp-system', 'not-granted');
    const answers: unknown[] = [];
    for (const path of paths) {
      answers.push({ as: 'admin', path, ...(outcome(await target.request('GET', path)) as object) });
      // Discovery is open to every authenticated user; resource requests are authorized before they are routed.
      answers.push({ as: 'serviceaccount', path, ...(outcome(await target.request('GET', path, undefined, { token })) as object) });
    }
    return answers;
  });
  t.deepEqual(normalize(emulator), normalize(envtest));
});

test('a CRD whose storage is torn down (a version no longer served, the CRD deleted) ends the open watches of its resources; a label change does not', async (t) => {
  const gizmos = (v1Served: boolean) =>
    twoVersionCrd('deleted.example.com', { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' }, v1Served);
  const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.deleted.example.com';
  const [emulator, envtest] = await onBoth(suite.pair, async (target) => {
    await target.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', gizmos(true));
    const listed = async () => {
      const answer = await target.request('GET', '/apis/deleted.example.com/v1/gizmos');
      return answer.status === 200 && answer;
    };
    const list = await eventually(`${target.name}: gizmos listed`, listed, 10_000, 100);
    // Established (its accepted names set) before the watches open: that update rebuilds the storage too.
    await new Promise((r) => setTimeout(r, 1500));
    const rv = list.body.metadata.resourceVersion;
    const v1 = await target.watch(`/apis/deleted.example.com/v1/gizmos?watch=1&resourceVersion=${rv}`);
    const v2 = await target.watch(`/apis/deleted.example.com/v2/gizmos?watch=1&resourceVersion=${rv}`);
    try {
      const labelled = await target.request(
        'PATCH',
        crdPath,
        { metadata: { labels: { a: 'b' } } },
        { contentType: 'application/merge-patch+json' },
      );
      const afterLabel = await v1.ended(2_000);
      const current = await target.request('GET', crdPath);
      const unserved = await target.request('PUT', crdPath, {
        ...gizmos(false),
        metadata: { ...gizmos(false).metadata, resourceVersion: current.body.metadata.resourceVersion },
      });
      const afterUnserved = await v1.ended(10_000);
      const v1After = outcome(await target.request('GET', `/apis/deleted.example.com/v1/gizmos?watch=1&resourceVersion=${rv}`));
      const v2Watch = await target.watch(`/apis/deleted.example.com/v2/gizmos?watch=1&resourceVersion=${rv}`);
      const deleted = await target.request('DELETE', crdPath);
      const afterDelete = await v2Watch.ended(15_000);
      const gone = async () => (await target.request('GET', crdPath)).status === 404;
      await eventually(`${target.name}: the CRD gone`, gone, 15_000, 100);
      const v2After = outcome(await target.request('GET', `/apis/deleted.example.com/v2/gizmos?watch=1&resourceVersion=${rv}`));
      v2Watch.close();
      return {
        labelled: labelled.status,
        afterLabel,
        unserved: unserved.status,
        afterUnserved,
        v1After,
        deleted: deleted.status,
        afterDelete,
        v2After,
        v2Ended: await v2.ended(0),
      };
    } finally {
      v1.close();
      v2.close();
    }
  });
  t.deepEqual(emulator, envtest);
  t.like(envtest, { afterLabel: false, afterUnserved: true, afterDelete: true });
});
