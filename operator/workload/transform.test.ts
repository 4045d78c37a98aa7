// The workload cache's trim: it keeps every field the reconcile reads (same references, same record) and little else.
import test from 'ava';
import type { Deployment } from '../kube/objects.js';
import type { ArgoRollout } from './argo-rollout.js';
import { lastWorkloadRollout } from './last-rollout.js';
import { reloadSpec } from './reload-annotations.js';
import { trimWorkload } from './transform.js';

/** A Deployment as a Helm chart makes it, with the server's managedFields and status. */
function helmDeployment(annotations: Record<string, string>): Deployment {
  const container = (name: string) => ({
    name,
    image: `registry.example.com/team/${name}:1.2.3`,
    args: ['--config=/etc/app/app.yaml', '--log-level=info'],
    ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
    env: [
      { name: 'PLAIN', value: 'x'.repeat(40) },
      { name: 'FROM_MAP', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'mode' } } },
      { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    envFrom: [{ secretRef: { name: 'db' } }],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 5 },
    volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'ns',
      uid: 'uid-1',
      resourceVersion: '42',
      generation: 3,
      labels: { 'app.kubernetes.io/name': 'web', 'helm.sh/chart': 'web-1.2.3' },
      annotations: { 'meta.helm.sh/release-name': 'web', 'deployment.kubernetes.io/revision': '3', ...annotations },
      managedFields: [{ manager: 'helm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:template': {} } } }],
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' }, annotations: { 'prometheus.io/scrape': 'true' } },
        spec: {
          containers: [container('web'), container('sidecar')],
          volumes: [
            { name: 'config', configMap: { name: 'app-files' } },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    },
    status: { observedGeneration: 3, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 },
  } as Deployment;
}

test('the trimmed workload selects the same references, and keeps identity, resourceVersion and generation', (t) => {
  const cases: Record<string, string>[] = [{ 'reloader.stakater.com/auto': 'true' }, { 'app.example.com/reload-secrets': 'db' }, {}];
  for (const annotations of cases) {
    const full = helmDeployment(annotations);
    const trimmed = trimWorkload(full);
    t.deepEqual(reloadSpec(trimmed.metadata.annotations, trimmed.spec.template), reloadSpec(full.metadata.annotations, full.spec.template));
    t.like(trimmed.metadata, { name: 'web', namespace: 'ns', uid: 'uid-1', resourceVersion: '42', generation: 3 });
    t.is(trimmed.metadata.managedFields, undefined);
    t.is(trimmed.metadata.labels, undefined);
    t.is(trimmed.status, undefined, 'no rollout of ours in progress: no status kept');
  }
});

test('the status is kept while a rollout of ours is in progress, to see it end', (t) => {
  const rolling = helmDeployment({
    'app.example.com/last-rollout': JSON.stringify({
      trigger: 'ConfigMap',
      changes: [],
      startTime: '2026-11-30T12:00:00.000Z',
      result: 'InProgress',
    }),
  });
  const trimmed = trimWorkload(rolling);
  t.is(lastWorkloadRollout(trimmed)?.result, 'InProgress');
  t.deepEqual(trimmed.status, rolling.status);
  t.is(trimmed.spec.replicas, 3);
});

test("the pause is kept (a paused rollout occupies no slot), and an Argo Rollout's workloadRef (the workload to annotate)", (t) => {
  const deployment = helmDeployment({ 'reloader.stakater.com/auto': 'true' });
  t.true(trimWorkload({ ...deployment, spec: { ...deployment.spec, paused: true } }).spec.paused);
  t.is(trimWorkload(deployment).spec.paused, undefined);
  const rollout = {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name: 'web', namespace: 'ns', annotations: { 'reloader.stakater.com/auto': 'true' } },
    spec: { workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web-base' }, strategy: { canary: {} } },
  } as unknown as ArgoRollout;
  t.deepEqual(trimWorkload(rollout).spec, {
    workloadRef: { kind: 'Deployment', name: 'web-base' },
    template: { spec: { containers: [] } },
  });
});

test('bytes per cached workload: a Helm-made Deployment, trimmed', (t) => {
  const full = helmDeployment({ 'reloader.stakater.com/auto': 'true' });
  const plain = helmDeployment({});
  const size = (object: unknown): number => Buffer.byteLength(JSON.stringify(object));
  t.log(`opted in: ${size(full)} → ${size(trimWorkload(full))} bytes; not opted in: ${size(plain)} → ${size(trimWorkload(plain))} bytes`);
  t.true(size(trimWorkload(full)) < size(full) / 3);
});

test('a workload without a spec or a pod template (never from a real API server, but never a crash of the watch)', (t) => {
  const bare = { metadata: { name: 'x', namespace: 'ns', annotations: { 'reloader.stakater.com/auto': 'true' } } } as unknown as Deployment;
  const trimmed = trimWorkload(bare);
  t.deepEqual(reloadSpec(trimmed.metadata.annotations, trimmed.spec.template).refs, []);
  const noTemplateSpec = { ...bare, spec: { template: {} } } as unknown as Deployment;
  t.deepEqual(reloadSpec(noTemplateSpec.metadata.annotations, trimWorkload(noTemplateSpec).spec.template).refs, []);
});
