// A Deployment's rollout as kubectl judges it, and the cause annotation that says why its template changed.
import test from 'ava';
import { ROLLOUT_ANNOTATION } from '../../infra/customapp-api.js';
import type { LastRollout } from '../customapp/custom-app.js';
import type { Deployment } from '../kube/objects.js';
import { describeCause, encodeRolloutCause, isGoverned, type RolloutCause, rolloutCause } from './rollout-cause.js';
import { currentRollout, rolloutProgress } from './rollout-progress.js';

const CAUSE: RolloutCause = {
  trigger: 'ConfigMap',
  changes: [{ kind: 'ConfigMap', name: 'shared', from: 'aaaaaaaaaaaaaaaa', to: 'bbbbbbbbbbbbbbbb' }],
  generation: 2,
  start: '2026-11-30T12:00:00.000Z',
};

/** A Deployment at generation 5 with `status`; `cause: null` records none. */
const deployment = (status: Deployment['status'], replicas = 2, cause: RolloutCause | null = CAUSE): Deployment => ({
  metadata: { name: 'app', generation: 5, ...(cause ? { annotations: { [ROLLOUT_ANNOTATION]: encodeRolloutCause(cause) } } : {}) },
  spec: { replicas, selector: {}, template: { spec: { containers: [] } } },
  status,
});

test("kubectl's order: an unobserved generation, then the deadline, then updated, old and available replicas", (t) => {
  t.like(rolloutProgress(deployment({ observedGeneration: 4, replicas: 2, updatedReplicas: 2, availableReplicas: 2 })), {
    phase: 'InProgress',
  });
  t.like(rolloutProgress(deployment({ observedGeneration: 5, updatedReplicas: 1, replicas: 3, availableReplicas: 2 })), {
    phase: 'InProgress',
    message: '1 of 2 new replicas have been updated',
  });
  t.like(rolloutProgress(deployment({ observedGeneration: 5, updatedReplicas: 2, replicas: 3, availableReplicas: 2 })), {
    phase: 'InProgress',
    message: '1 old replicas are pending termination',
  });
  t.like(rolloutProgress(deployment({ observedGeneration: 5, updatedReplicas: 2, replicas: 2, availableReplicas: 1 })), {
    phase: 'InProgress',
    message: '1 of 2 updated replicas are available',
  });
  t.deepEqual(rolloutProgress(deployment({ observedGeneration: 5, updatedReplicas: 2, replicas: 2, availableReplicas: 2 })), {
    phase: 'Succeeded',
  });
  t.deepEqual(rolloutProgress(deployment({ observedGeneration: 5 }, 0)), { phase: 'Succeeded' }, 'zero replicas complete at once');
});

test('Progressing=False with ProgressDeadlineExceeded is a failure, with the controller message', (t) => {
  const failed = deployment({
    observedGeneration: 5,
    updatedReplicas: 1,
    replicas: 3,
    conditions: [
      {
        type: 'Progressing',
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: 'ReplicaSet "app-x" has timed out progressing.',
      },
    ],
  });
  t.deepEqual(rolloutProgress(failed), { phase: 'Failed', message: 'ReplicaSet "app-x" has timed out progressing.' });
});

test('once status.lastRollout recorded this rollout as succeeded, a later unavailable pod is not a rollout in progress', (t) => {
  const dipped = deployment({ observedGeneration: 5, updatedReplicas: 2, replicas: 2, availableReplicas: 1 });
  t.like(currentRollout(dipped, undefined), { phase: 'InProgress' });
  const recorded: LastRollout = { trigger: 'ConfigMap', generation: 2, startTime: CAUSE.start, result: 'Succeeded' };
  t.like(currentRollout(dipped, recorded), { phase: 'Succeeded' });
  t.like(currentRollout(dipped, { ...recorded, startTime: '2026-11-30T11:00:00.000Z' }), { phase: 'InProgress' }, 'another rollout');
  t.is(currentRollout(deployment({}, 1, null), recorded), undefined, 'no cause recorded: no rollout of ours known');
});

test('the cause annotation round-trips, and a malformed one is no cause', (t) => {
  t.deepEqual(rolloutCause(deployment({})), CAUSE);
  t.true(isGoverned(CAUSE));
  const spec: RolloutCause = { trigger: 'Spec', changes: [], generation: 3, start: CAUSE.start };
  t.deepEqual(rolloutCause(deployment({}, 1, spec)), spec);
  t.false(isGoverned(spec));
  t.false(isGoverned(undefined));
  for (const raw of [
    'not json',
    '{"trigger":"Image","start":"x"}',
    '{"trigger":"Spec"}',
    '{"trigger":"Secret","start":"x","changes":[{"kind":"Pod"}]}',
  ]) {
    t.is(rolloutCause({ ...deployment({}), metadata: { annotations: { [ROLLOUT_ANNOTATION]: raw } } }), undefined, raw);
  }
  t.is(describeCause(CAUSE), 'ConfigMap "shared" aaaaaaaaaaaa→bbbbbbbbbbbb');
  t.is(describeCause({ ...spec, changes: CAUSE.changes }), 'spec generation 3 (with ConfigMap "shared" aaaaaaaaaaaa→bbbbbbbbbbbb)');
});
