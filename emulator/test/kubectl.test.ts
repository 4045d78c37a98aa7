// The real kubectl against the emulator: apply of dist/, client- and server-side apply, printer columns, watches,
// finalizers and `auth can-i`, each run with a fresh --cache-dir.
import { readFileSync } from 'node:fs';
import test from 'ava';
import { parseAllDocuments } from 'yaml';
import { eventually } from '../../test/support/eventually.js';
import { distDir, emulatorFixture, type EmulatorFixture, kubectl, kubectlBackground } from './support.js';

let fx: EmulatorFixture;

test.before(async () => {
  fx = await emulatorFixture();
  await fx.apply(distDir, `${distDir}samples/`);
});

test.after.always(async () => {
  await fx?.close();
});

test.serial('kubectl apply -f dist/ creates the CRD, updates discovery and then accepts a CustomApp', async (t) => {
  const resources = await fx.kubectl(['api-resources', '--api-group=app.example.com']);
  t.is(resources.code, 0, resources.stderr);
  t.regex(resources.stdout, /customapps\s+ca\s+app\.example\.com\/v1\s+true\s+CustomApp/);
  const app = await fx.kubectl(['get', 'customapp', 'hello', '-n', 'default', '-o', 'jsonpath={.spec.image} {.metadata.generation}']);
  t.is(app.stdout, 'nginxinc/nginx-unprivileged:1.27-alpine 1');
  const before = await fx.admin('GET', '/apis/apps/v1/namespaces/customapp-system/deployments/customapp-operator');
  const again = await fx.kubectl(['apply', '-f', distDir]);
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /customresourcedefinition.apiextensions.k8s.io\/customapps.app.example.com unchanged/);
  // dist/ sets hostNetwork: false and minReadySeconds: 0, which the server drops (Go omitempty), so kubectl's
  // three-way patch is never empty and it says "configured" (envtest too); the write itself is a no-op.
  t.regex(again.stdout, /deployment.apps\/customapp-operator configured/);
  const after = await fx.admin('GET', '/apis/apps/v1/namespaces/customapp-system/deployments/customapp-operator');
  t.is(after.body.metadata.resourceVersion, before.body.metadata.resourceVersion);
});

test.serial('kubectl get ca prints the CRD printer columns, the Ready condition included', async (t) => {
  await fx.admin(
    'PATCH',
    '/apis/app.example.com/v1/namespaces/default/customapps/hello/status',
    {
      status: {
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'Ready', message: 'ok' }],
      },
    },
    'application/merge-patch+json',
  );
  const out = await fx.kubectl(['get', 'ca', '-n', 'default']);
  t.is(out.code, 0, out.stderr);
  const [header, row] = out.stdout.trim().split('\n');
  t.deepEqual(header.split(/\s+/), ['NAME', 'IMAGE', 'CONFIGMAP', 'READY', 'ROLLOUT', 'WAITING', 'AGE']);
  t.deepEqual(row.split(/\s+/).slice(0, 4), ['hello', 'nginxinc/nginx-unprivileged:1.27-alpine', 'hello-config', 'True']);
});

test.serial('re-applying a changed Deployment with client-side apply keeps its ports, resources and securityContext', async (t) => {
  const manifest = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: ${image}
          ports:
            - containerPort: 8080
              name: http
            - containerPort: 9090
              name: metrics
          resources:
            limits: {cpu: 500m, memory: 128Mi}
            requests: {cpu: 50m, memory: 64Mi}
          securityContext:
            runAsNonRoot: true
            allowPrivilegeEscalation: false
        - name: sidecar
          image: busybox:1.36
`;
  t.is((await fx.kubectl(['apply', '-f', '-'], manifest('nginx:1.25'))).code, 0);
  const applied = await fx.kubectl(['apply', '-f', '-'], manifest('nginx:1.27'));
  t.is(applied.code, 0, applied.stderr);
  t.regex(applied.stdout, /deployment.apps\/web configured/);
  const got = await fx.admin('GET', '/apis/apps/v1/namespaces/default/deployments/web');
  const [web, sidecar] = got.body.spec.template.spec.containers;
  t.is(web.image, 'nginx:1.27');
  t.deepEqual(web.ports, [
    { containerPort: 8080, name: 'http', protocol: 'TCP' },
    { containerPort: 9090, name: 'metrics', protocol: 'TCP' },
  ]);
  t.deepEqual(web.resources, { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '50m', memory: '64Mi' } });
  t.deepEqual(web.securityContext, { runAsNonRoot: true, allowPrivilegeEscalation: false });
  t.is(sidecar.name, 'sidecar');
  t.is(got.body.metadata.generation, 2);
});

test.serial('kubectl apply --server-side creates, then updates with field ownership, and reports conflicts', async (t) => {
  const cm = (value: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: default\ndata:\n  key: "${value}"\n`;
  const created = await fx.kubectl(['apply', '--server-side', '-f', '-'], cm('one'));
  t.is(created.code, 0, created.stderr);
  t.regex(created.stdout, /configmap\/ssa serverside-applied/);
  const other = await fx.kubectl(['apply', '--server-side', '--field-manager=other', '-f', '-'], cm('two'));
  t.not(other.code, 0);
  t.regex(other.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.data\.key/);
  const forced = await fx.kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=other', '-f', '-'], cm('two'));
  t.is(forced.code, 0, forced.stderr);
  const got = await fx.admin('GET', '/api/v1/namespaces/default/configmaps/ssa');
  t.is(got.body.data.key, 'two');
  const managers = got.body.metadata.managedFields.map((m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`);
  // kubectl lost its only field to the forced apply, so its entry is gone (as on envtest).
  t.deepEqual(managers, ['other/Apply']);
});

test.serial('kubectl get cm -w sees a change made after it started', async (t) => {
  await fx.admin('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'watched' }, data: { a: '1' } });
  const watch = kubectlBackground(fx.kubeconfigPath, ['get', 'cm', '-n', 'default', '-w', '--output-watch-events']);
  t.teardown(() => watch.stop());
  await eventually('the initial listing', () => (watch.output().includes('watched') ? true : undefined), 20_000);
  await fx.admin('PATCH', '/api/v1/namespaces/default/configmaps/watched', { data: { b: '2' } }, 'application/merge-patch+json');
  const line = await eventually(
    'the MODIFIED line',
    () =>
      watch
        .output()
        .split('\n')
        .find((l) => l.startsWith('MODIFIED') && l.includes('watched')),
    10_000,
  );
  t.regex(line, /^MODIFIED\s+watched\s+2\s+/);
});

test.serial('kubectl delete of an object with a finalizer leaves it Terminating until the finalizer is removed', async (t) => {
  await fx.admin('POST', '/api/v1/namespaces', { metadata: { name: 'fin' } });
  await fx.admin('POST', '/apis/app.example.com/v1/namespaces/fin/customapps', {
    apiVersion: 'app.example.com/v1',
    kind: 'CustomApp',
    metadata: { name: 'held', finalizers: ['example.com/hold'] },
    spec: { image: 'x' },
  });
  const deleted = await fx.kubectl(['delete', 'customapp', 'held', '-n', 'fin', '--wait=false']);
  t.is(deleted.code, 0, deleted.stderr);
  const held = await fx.admin('GET', '/apis/app.example.com/v1/namespaces/fin/customapps/held');
  t.is(held.status, 200);
  t.truthy(held.body.metadata.deletionTimestamp);
  t.is(held.body.metadata.generation, 2);
  const patched = await fx.kubectl(['patch', 'customapp', 'held', '-n', 'fin', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  t.is(patched.code, 0, patched.stderr);
  const gone = await fx.admin('GET', '/apis/app.example.com/v1/namespaces/fin/customapps/held');
  t.is(gone.status, 404);
});

test.serial('kubectl auth can-i as the operator ServiceAccount answers as the applied RBAC in dist/ says', async (t) => {
  const role = parseAllDocuments(readFileSync(`${distDir}customapp-operator.k8s.yaml`, 'utf8'))
    .map((d) => d.toJSON())
    .find((o) => o.kind === 'ClusterRole');
  const as = ['--as', 'system:serviceaccount:customapp-system:customapp-operator'];
  const ask = async (verb: string, resource: string) => {
    const [name, subresource] = resource.split('/');
    const args = ['auth', 'can-i', verb, name, ...(subresource ? [`--subresource=${subresource}`] : []), '-n', 'default', ...as];
    return (await fx.kubectl(args)).stdout.trim();
  };
  const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
  let asked = 0;
  for (const rule of role.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]) {
    const group = rule.apiGroups[0];
    for (const resource of rule.resources) {
      const [name, subresource] = resource.split('/');
      const qualified = `${group === '' ? name : `${name}.${group}`}${subresource ? `/${subresource}` : ''}`;
      const granted = rule.verbs[0];
      const denied = verbs.find(
        (v) =>
          !(role.rules as { resources: string[]; apiGroups: string[]; verbs: string[] }[]).some(
            (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(v),
          ),
      );
      t.is(await ask(granted, qualified), 'yes', `${granted} ${qualified}`);
      if (denied !== undefined) t.is(await ask(denied, qualified), 'no', `${denied} ${qualified}`);
      asked++;
    }
  }
  t.true(asked >= 5, 'dist/ grants the operator several resources');
  t.is(await ask('create', 'secrets'), 'no');
  const sa = fx.file('operator.kubeconfig', fx.emulator.serviceAccountKubeconfig('customapp-system', 'customapp-operator'));
  const direct = await kubectl(sa, ['auth', 'can-i', 'watch', 'configmaps', '-n', 'default']);
  t.is(direct.stdout.trim(), 'yes');
});
