// Tests of the status a reconcile writes: conditions and their reasons, observed references, and transition times.
import test from 'ava';
import { CONFIG_HASH_ANNOTATION, SECRET_HASH_ANNOTATION, STATUS_SCHEMA } from '../../api/customapp.js';
import type { CustomApp } from '../customapp/custom-app.js';
import { STATUS_FIELDS, type CustomAppStatus } from '../../api/customapp-status.js';
import type { Deployment } from '../kube/objects.js';
import { APP_CONTAINER } from './desired-deployment.js';
import type { ProjectedView, Projection } from './projections.js';
import { desiredStatus, failedStatus, sameStatus, type StatusInput } from './status.js';

const T0 = '2025-01-01T00:00:00Z';
const T1 = '2025-01-01T00:05:00Z';

const app = (status?: CustomAppStatus): CustomApp => ({
  metadata: { name: 'shop', namespace: 'team-a', uid: 'uid-1', generation: 3 },
  spec: { image: 'shop:1', configMapName: 'shop-config', secretName: 'shop-secret', replicas: 1 },
  status,
});
/** Our Deployment as it runs with shop-config (c1) and shop-secret (s1). */
const deployment = (readyReplicas: number): Deployment => ({
  metadata: { name: 'shop' },
  spec: {
    selector: { matchLabels: {} },
    template: {
      metadata: { annotations: { [CONFIG_HASH_ANNOTATION]: 'c1', [SECRET_HASH_ANNOTATION]: 's1' } },
      spec: {
        containers: [
          {
            name: APP_CONTAINER,
            image: 'shop:1',
            envFrom: [{ configMapRef: { name: 'shop-config' } }, { secretRef: { name: 'shop-secret' } }],
          },
        ],
      },
    },
  },
  status: { readyReplicas },
});
const rolledOut = { configMap: { name: 'shop-config', hash: 'c1' }, secret: { name: 'shop-secret', hash: 's1' } };
const healthy = (overrides: Partial<StatusInput> = {}): StatusInput => ({
  app: app(),
  configMap: { phase: 'present', name: 'shop-config', hash: 'c1' },
  secret: { phase: 'present', name: 'shop-secret', hash: 's1' },
  deployment: { phase: 'owned', deployment: deployment(1) },
  rolledOut,
  now: T0,
  ...overrides,
});
const condition = (status: CustomAppStatus, type: string) => status.conditions!.find((entry) => entry.type === type)!;

test('the status type has exactly the fields of the CRD status schema', (t) => {
  t.deepEqual([...STATUS_FIELDS].sort(), Object.keys(STATUS_SCHEMA.properties!).sort());
});

test('a rolled-out, ready app is Ready, with the observed references, hashes, generation and ready replicas', (t) => {
  const status = desiredStatus(healthy());
  t.like(status, {
    observedGeneration: 3,
    observedConfigMapName: 'shop-config',
    observedSecretName: 'shop-secret',
    configHash: 'c1',
    secretHash: 's1',
    readyReplicas: 1,
  });
  t.deepEqual(
    status.conditions!.map((entry) => [entry.type, entry.status, entry.reason]),
    [
      ['Ready', 'True', 'Ready'],
      ['ConfigMapAvailable', 'True', 'ConfigMapFound'],
      ['SecretAvailable', 'True', 'SecretFound'],
      ['DeploymentAvailable', 'True', 'ReplicasReady'],
    ],
  );
  t.true(status.conditions!.every((entry) => entry.observedGeneration === 3 && entry.lastTransitionTime === T0));
});

test('a missing ConfigMap holds the rollout: ConfigMapNotFound, Ready False RolloutHeld, and the previous observed values stay', (t) => {
  const previous = desiredStatus(healthy());
  const status = desiredStatus(
    healthy({
      app: app(previous),
      configMap: { phase: 'missing', name: 'shop-config' },
      rolledOut: undefined,
      now: T1,
    }),
  );
  t.like(condition(status, 'ConfigMapAvailable'), { status: 'False', reason: 'ConfigMapNotFound', lastTransitionTime: T1 });
  t.like(condition(status, 'Ready'), { status: 'False', reason: 'RolloutHeld', lastTransitionTime: T1 });
  t.regex(condition(status, 'Ready').message, /"shop-config" not found/);
  t.like(condition(status, 'SecretAvailable'), { status: 'True', lastTransitionTime: T0 }, 'an unchanged status keeps its transition time');
  t.is(status.observedConfigMapName, 'shop-config');
  t.is(status.configHash, 'c1');
});

test('while held, the observed values are read back from our Deployment, even when no status ever recorded them', (t) => {
  const status = desiredStatus(healthy({ configMap: { phase: 'missing', name: 'other-config' }, rolledOut: undefined }));
  t.like(status, { observedConfigMapName: 'shop-config', configHash: 'c1', observedSecretName: 'shop-secret', secretHash: 's1' });
});

test('a missing Secret before any Deployment exists says SecretNotFound and that the Deployment is held', (t) => {
  const status = desiredStatus(
    healthy({ secret: { phase: 'missing', name: 'shop-secret' }, deployment: { phase: 'absent' }, rolledOut: undefined }),
  );
  t.like(condition(status, 'SecretAvailable'), { status: 'False', reason: 'SecretNotFound' });
  t.like(condition(status, 'DeploymentAvailable'), { status: 'False', reason: 'RolloutHeld' });
  t.like(condition(status, 'Ready'), { status: 'False', reason: 'RolloutHeld' });
  t.is(status.observedConfigMapName, undefined);
  t.is(status.readyReplicas, 0);
});

test('a Deployment the app does not own makes DeploymentAvailable and Ready False with DeploymentNotOwned', (t) => {
  const status = desiredStatus(healthy({ deployment: { phase: 'notOwned' }, rolledOut: undefined }));
  t.like(condition(status, 'DeploymentAvailable'), { status: 'False', reason: 'DeploymentNotOwned' });
  t.like(condition(status, 'Ready'), { status: 'False', reason: 'DeploymentNotOwned' });
});

test('a Deployment the API server refused makes DeploymentAvailable and Ready False with its message', (t) => {
  const status = desiredStatus(
    healthy({ deployment: { phase: 'invalid', message: 'the API server rejected Deployment "shop": bad image' }, rolledOut: undefined }),
  );
  t.like(condition(status, 'DeploymentAvailable'), {
    status: 'False',
    reason: 'DeploymentInvalid',
    message: 'the API server rejected Deployment "shop": bad image',
  });
  t.like(condition(status, 'Ready'), { status: 'False', reason: 'DeploymentInvalid' });
});

test('unready replicas make Ready False with the count, and no reference means NotReferenced', (t) => {
  const status = desiredStatus(
    healthy({
      app: { ...app(), spec: { image: 'shop:1', replicas: 2 } },
      configMap: { phase: 'unreferenced' },
      secret: { phase: 'unreferenced' },
      deployment: { phase: 'owned', deployment: deployment(1) },
      rolledOut: {},
    }),
  );
  t.like(condition(status, 'ConfigMapAvailable'), { status: 'True', reason: 'NotReferenced' });
  t.like(condition(status, 'Ready'), { status: 'False', reason: 'ReplicasNotReady', message: '1/2 replicas ready' });
  t.false('observedConfigMapName' in status);
});

test('status.replicas and status.selector describe the Deployment, for the scale subresource (kubectl scale, an HPA)', (t) => {
  const scaled: Deployment = {
    ...deployment(2),
    spec: {
      ...deployment(2).spec,
      replicas: 3,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'shop', 'app.kubernetes.io/instance': 'shop' } },
    },
    status: { replicas: 4, readyReplicas: 2 },
  };
  const status = desiredStatus(healthy({ deployment: { phase: 'owned', deployment: scaled } }));
  t.like(status, { replicas: 4, readyReplicas: 2, selector: 'app.kubernetes.io/instance=shop,app.kubernetes.io/name=shop' });
  const held = desiredStatus(healthy({ deployment: { phase: 'absent' } }));
  t.like(held, { replicas: 0, readyReplicas: 0 });
  t.false('selector' in held, 'no Deployment, no pods to select');
});

test("with spec.replicas unset the replicas wanted are the Deployment's own (set by an HPA or kubectl scale deployment)", (t) => {
  const unset = { ...app(), spec: { image: 'shop:1', configMapName: 'shop-config', secretName: 'shop-secret' } };
  const scaled: Deployment = { ...deployment(2), spec: { ...deployment(2).spec, replicas: 5 } };
  const status = desiredStatus(healthy({ app: unset, deployment: { phase: 'owned', deployment: scaled } }));
  t.like(condition(status, 'DeploymentAvailable'), { status: 'False', reason: 'ReplicasNotReady', message: '2/5 replicas ready' });
});

test('reconciling an unchanged world yields the same status, so nothing is written', (t) => {
  const first = desiredStatus(healthy());
  const again = desiredStatus(healthy({ app: app(first), now: T1 }));
  t.true(sameStatus(first, again));
  t.false(sameStatus(first, { ...first, readyReplicas: 0 }));
});

test('failedStatus turns Ready False with ReconcileError in place, and keeps every other field', (t) => {
  const before = {
    observedGeneration: 3,
    configHash: 'abc',
    conditions: [
      {
        type: 'Ready' as const,
        status: 'True' as const,
        observedGeneration: 3,
        lastTransitionTime: '2026-01-01T00:00:00Z',
        reason: 'Ready',
        message: 'ok',
      },
      {
        type: 'ConfigMapAvailable' as const,
        status: 'True' as const,
        observedGeneration: 3,
        lastTransitionTime: '2026-01-01T00:00:00Z',
        reason: 'ConfigMapFound',
        message: 'found',
      },
    ],
  };
  const app = { metadata: { name: 'a', namespace: 'n', generation: 4 }, spec: { image: 'x' }, status: before } as CustomApp;
  const failed = failedStatus(app, 'boom', '2026-02-02T00:00:00Z');
  t.is(failed.observedGeneration, 3);
  t.is(failed.configHash, 'abc');
  t.deepEqual(
    failed.conditions?.map((condition) => condition.type),
    ['Ready', 'ConfigMapAvailable'],
  );
  t.like(failed.conditions?.[0], {
    status: 'False',
    reason: 'ReconcileError',
    message: 'boom',
    lastTransitionTime: '2026-02-02T00:00:00Z',
  });
  t.deepEqual(failed.conditions?.[1], before.conditions[1]);
  const again = failedStatus({ ...app, status: failed }, 'boom', '2026-03-03T00:00:00Z');
  t.is(again.conditions?.[0]?.lastTransitionTime, '2026-02-02T00:00:00Z', 'no flip, no new transition time');
});

test('listed objects: each kind aggregated in its condition, naming what keeps the pods from starting; an optional one missing is fine', (t) => {
  const listed = (
    phase: 'present' | 'missing',
    name: string,
    extra: Partial<Projection> & { missingKeys?: string[] } = {},
  ): ProjectedView =>
    phase === 'present'
      ? { kind: 'ConfigMap', name, optional: false, phase, hash: `h-${name}`, ...extra }
      : { kind: 'ConfigMap', name, optional: false, phase, ...extra };
  const fine = desiredStatus(
    healthy({
      projected: [listed('present', 'web'), listed('missing', 'extra', { optional: true })],
      rolledOut: {
        ...rolledOut,
        projected: [
          { kind: 'ConfigMap', name: 'web', optional: false, hash: 'h-web' },
          { kind: 'ConfigMap', name: 'extra', optional: true, hash: null },
        ],
      },
    }),
  );
  t.like(condition(fine, 'ConfigMapAvailable'), {
    status: 'True',
    reason: 'ConfigMapFound',
    message: 'ConfigMap "shop-config", "web" found; optional ConfigMap "extra" not found: the pods start without it',
  });
  t.deepEqual(fine.observedConfigMaps, [{ name: 'extra' }, { name: 'web', hash: 'h-web' }]);
  t.is(fine.observedSecrets, undefined);

  const held = desiredStatus(
    healthy({
      projected: [listed('present', 'files', { keys: ['a', 'b'], missingKeys: ['b'] }), listed('missing', 'gone')],
      rolledOut: undefined,
    }),
  );
  t.like(condition(held, 'ConfigMapAvailable'), {
    status: 'False',
    reason: 'ConfigMapNotFound',
    message: 'ConfigMap "files" lacks key "b"; ConfigMap "gone" not found; the rollout is held until the pods can start',
  });
  t.like(condition(held, 'Ready'), { status: 'False', reason: 'RolloutHeld' });
  t.like(condition(held, 'SecretAvailable'), { status: 'True', reason: 'SecretFound' });
  const keyOnly = desiredStatus(
    healthy({ projected: [listed('present', 'files', { keys: ['b'], missingKeys: ['b'] })], rolledOut: undefined }),
  );
  t.like(condition(keyOnly, 'ConfigMapAvailable'), { status: 'False', reason: 'ConfigMapKeyNotFound' });
});
