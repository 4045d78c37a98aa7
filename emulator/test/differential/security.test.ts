// Differential: NetworkPolicies (defaults, generation, validation, tables, discovery) and the review APIs the operator's
// secure metrics use (TokenReview, SubjectAccessReview on a non-resource URL), emulator vs envtest.
import test from 'ava';
import { normalize, onBoth, outcome, pairSuite } from './support.js';

const suite = pairSuite(test);
const { same } = suite;

const policies = (ns: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`;

test('NetworkPolicies come back with the apiserver defaults (policyTypes from the rules, TCP ports) and generation', (t) =>
  same(t, 'netpol-defaults', async (target, ns) => {
    const out: unknown[] = [];
    const post = async (body: unknown) => out.push(outcome(await target.request('POST', policies(ns), body)));
    await post({ metadata: { name: 'deny-all' }, spec: { podSelector: {} } });
    await post({
      metadata: { name: 'metrics', labels: { app: 'x' } },
      spec: {
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'customapp-operator' } },
        ingress: [
          { from: [{ namespaceSelector: { matchLabels: { 'app.example.com/metrics': 'enabled' } } }], ports: [{ port: 8443 }] },
          {
            ports: [
              { port: 'health', protocol: 'TCP' },
              { port: 9000, endPort: 9100, protocol: 'UDP' },
            ],
          },
        ],
      },
    });
    await post({
      metadata: { name: 'egress' },
      spec: {
        podSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] },
        egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }], ports: [{ port: 443 }] }, {}],
      },
    });
    await post({ metadata: { name: 'explicit' }, spec: { podSelector: {}, policyTypes: ['Egress'], ingress: [{}] } });
    const replaced = (await target.request('GET', `${policies(ns)}/deny-all`)).body;
    out.push(
      outcome(
        await target.request('PUT', `${policies(ns)}/deny-all`, { ...replaced, metadata: { ...replaced.metadata, labels: { a: 'b' } } }),
      ),
    );
    const labelled = (await target.request('GET', `${policies(ns)}/deny-all`)).body;
    out.push(
      outcome(
        await target.request('PUT', `${policies(ns)}/deny-all`, {
          ...labelled,
          spec: { ...labelled.spec, podSelector: { matchLabels: { a: 'b' } } },
        }),
      ),
    );
    out.push(outcome(await target.request('GET', policies(ns))));
    // The Age cell depends on when the second turned on each server: left out.
    const table = await target.request('GET', policies(ns), undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    out.push(
      outcome({ ...table, body: { ...table.body, rows: table.body.rows.map((row: any) => ({ ...row, cells: row.cells.slice(0, -1) })) } }),
    );
    return out;
  }));

test('invalid NetworkPolicies are refused with the apiserver texts', (t) =>
  same(t, 'netpol-invalid', async (target, ns) => {
    const bodies: unknown[] = [
      { podSelector: {}, ingress: [{ ports: [{ port: 0 }, { port: 70000, protocol: 'ICMP' }] }] },
      { podSelector: {}, ingress: [{ ports: [{ port: 90, endPort: 80 }, { port: 'http', endPort: 90 }, { endPort: 90 }] }] },
      { podSelector: {}, ingress: [{ ports: [{ port: 'Bad_Name' }, { port: 'a--b' }, { port: 'waytoolongportname' }] }] },
      { podSelector: {}, ingress: [{ from: [{}, { ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }] }] },
      { podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: '' } }, { ipBlock: { cidr: 'not-a-cidr' } }] }] },
      {
        podSelector: {},
        egress: [
          { to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24', '10.0.0.0/16', '10.0.5.0/24', 'bad', 'fd00::/64'] } }] },
          { to: [{ ipBlock: { cidr: 'fd00::/48', except: ['fd00:0:0:1::/64', 'fd01::/64'] } }] },
        ],
      },
      { podSelector: {}, policyTypes: ['Ingress', 'Sideways'] },
      { podSelector: {}, policyTypes: ['Ingress', 'Egress', 'Ingress'] },
      {
        podSelector: {
          matchLabels: { 'bad key!': 'ok', ok: 'bad value!' },
          matchExpressions: [
            { key: 'a', operator: 'In' },
            { key: 'b', operator: 'Exists', values: ['x'] },
            { key: 'c', operator: 'Near', values: ['x'] },
          ],
        },
      },
    ];
    const out: unknown[] = [];
    for (const [index, spec] of bodies.entries()) {
      out.push(outcome(await target.request('POST', policies(ns), { metadata: { name: `bad-${index}` }, spec })));
    }
    return out;
  }));

test('discovery lists networkpolicies in networking.k8s.io/v1 as the apiserver does', async (t) => {
  const [emulator, envtest] = await onBoth(suite.pair, async (target) => {
    const list = await target.request('GET', '/apis/networking.k8s.io/v1');
    return list.body.resources.filter((resource: { name: string }) => resource.name === 'networkpolicies');
  });
  t.deepEqual(normalize(emulator), normalize(envtest));
});

test('TokenReview and SubjectAccessReview: who a token is, and whether that user may get /metrics', (t) =>
  same(t, 'reviews', async (target, ns) => {
    const out: unknown[] = [];
    const reader = await target.serviceAccountToken(ns, 'reader');
    const nobody = await target.serviceAccountToken(ns, 'nobody');
    const reviewer = await target.serviceAccountToken(ns, 'reviewer');
    await target.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: `${ns}-metrics-reader` },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
    await target.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: `${ns}-metrics-reader` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-metrics-reader` },
      subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
    });
    await target.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: `${ns}-reviewer` },
      rules: [
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ],
    });
    await target.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: `${ns}-reviewer` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-reviewer` },
      subjects: [{ kind: 'ServiceAccount', name: 'reviewer', namespace: ns }],
    });
    const tokenReview = (token: string) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    const reviewed = await target.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', tokenReview(reader), { token: reviewer });
    out.push(outcome({ ...reviewed, body: { ...reviewed.body, spec: { token: '<token>' } } }));
    const forged = await target.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', tokenReview(`${reader.slice(0, -4)}AAAA`), {
      token: reviewer,
    });
    out.push({ status: forged.status, status_: forged.body.status, metadata: forged.body.metadata });
    const garbage = await target.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', tokenReview('not-a-token'), {
      token: reviewer,
    });
    out.push({ status: garbage.status, status_: garbage.body.status });
    const self = await target.request(
      'POST',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      { spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' } } },
      { token: reader },
    );
    out.push(outcome(self));
    out.push(outcome(await target.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {}, { token: reader })));
    for (const user of ['reader', 'nobody']) {
      const access = await target.request(
        'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: `system:serviceaccount:${ns}:${user}`,
            groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
            extra: {},
            nonResourceAttributes: { path: '/metrics', verb: 'get' },
          },
        },
        { token: reviewer },
      );
      out.push(outcome(access));
    }
    // Without the grants: a ServiceAccount may not ask.
    out.push(outcome(await target.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', tokenReview(reader), { token: nobody })));
    out.push(
      outcome(
        await target.request(
          'POST',
          '/apis/authorization.k8s.io/v1/subjectaccessreviews',
          { spec: { user: 'x', nonResourceAttributes: { path: '/metrics', verb: 'get' } } },
          { token: nobody },
        ),
      ),
    );
    return out;
  }));
