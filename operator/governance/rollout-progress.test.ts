// A Deployment's rollout as kubectl judges it, and the cause annotation that says why its template changed.
import test from 'ava';
import { ROLLOUT_ANNOTATION } from '../../api/customapp.js';
import type { LastRollout } from '../../api/customapp-status.js';
import type { Deployment } from '../kube/objects.js';
import {
  describeCause,
  encodeRolloutCause,
  isGoverned,
  MAX_CAUSE_CHANGES,
  parseRolloutCause,
  type RolloutCause,
  rolloutCause,
} from './rollout-cause.js';
import { currentRollout, type RolloutProgress, rollingForContent, rolloutProgress } from './rollout-progress.js';

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
  const inProgress: [Deployment['status'], string | undefined][] = [
    [{ observedGeneration: 4, replicas: 2, updatedReplicas: 2, availableReplicas: 2 }, undefined],
    [{ observedGeneration: 5, updatedReplicas: 1, replicas: 3, availableReplicas: 2 }, '1 of 2 new replicas have been updated'],
    [{ observedGeneration: 5, updatedReplicas: 2, replicas: 3, availableReplicas: 2 }, '1 old replicas are pending termination'],
    [{ observedGeneration: 5, updatedReplicas: 2, replicas: 2, availableReplicas: 1 }, '1 of 2 updated replicas are available'],
  ];
  for (const [status, message] of inProgress) {
    t.like(
      rolloutProgress(deployment(status)),
      { phase: 'InProgress', ...(message === undefined ? {} : { message }) },
      JSON.stringify(status),
    );
  }
  t.deepEqual(rolloutProgress(deployment({ observedGeneration: 5, updatedReplicas: 2, replicas: 2, availableReplicas: 2 })), {
    phase: 'Succeeded',
  });
  t.deepEqual(rolloutProgress(deployment({ observedGeneration: 5 }, 0)), { phase: 'Succeeded' }, 'zero replicas complete at once');
});

test('a rollout not done on a paused Deployment is Paused, not rolling: no deadline will end it; a done one stays Succeeded', (t) => {
  const paused = (status: Deployment['status']): Deployment => {
    const live = deployment(status);
    return { ...live, spec: { ...live.spec, paused: true } };
  };
  t.deepEqual(rolloutProgress(paused({ observedGeneration: 5, updatedReplicas: 0, replicas: 2, availableReplicas: 2 })), {
    phase: 'Paused',
    message: '0 of 2 new replicas have been updated; `kubectl rollout resume deployment/app` resumes it',
  });
  t.like(rolloutProgress(paused({ observedGeneration: 4 })), { phase: 'Paused' }, 'paused before the controller saw the template');
  t.deepEqual(rolloutProgress(paused({ observedGeneration: 5, updatedReplicas: 2, replicas: 2, availableReplicas: 2 })), {
    phase: 'Succeeded',
  });
  t.false(rollingForContent(currentRollout(paused({ observedGeneration: 5, updatedReplicas: 0, replicas: 2 }), undefined)));
  t.true(rollingForContent(currentRollout(deployment({ observedGeneration: 5, updatedReplicas: 0, replicas: 2 }), undefined)));
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

test('a cause annotation that does not fit status.lastRollout says what, quoting at most 64 characters; unknown fields are left out', (t) => {
  const start = '2026-11-30T12:00:00Z';
  const problem = (value: unknown): string | undefined => {
    const parsed = parseRolloutCause(typeof value === 'string' ? value : JSON.stringify(value));
    return 'problem' in parsed ? parsed.problem : undefined;
  };
  const change = { kind: 'ConfigMap', name: 'shared', to: 'ab' };
  t.is(problem('{'), 'not JSON: "{"');
  t.is(problem([1]), 'not a JSON object: [1]');
  t.is(problem({ trigger: 'Image', start }), 'trigger "Image" is not one of ConfigMap, Secret, Spec');
  t.is(problem({ trigger: 'Spec', start: 'yesterday' }), 'start "yesterday" is not an RFC 3339 time');
  t.is(problem({ trigger: 'Spec', start, generation: 1.5 }), 'generation 1.5 is not an integer ≥ 0');
  t.is(problem({ trigger: 'Spec', start, generation: 1e300 }), 'generation 1e+300 is not an integer ≥ 0');
  t.is(
    problem({ trigger: 'ConfigMap', start, changes: [{ ...change, name: 'x'.repeat(300) }] }),
    `changes[0].name "${'x'.repeat(63)}… is not a DNS-1123 subdomain`,
  );
  t.is(
    problem({ trigger: 'ConfigMap', start, changes: [{ ...change, name: 'a\u001b[31m' }] }),
    'changes[0].name "a\\u001b[31m" is not a DNS-1123 subdomain',
  );
  t.is(
    problem({ trigger: 'ConfigMap', start, changes: [{ ...change, from: 'f'.repeat(257) }] }),
    `changes[0].from "${'f'.repeat(63)}… is not a content hash`,
  );
  t.is(problem({ trigger: 'ConfigMap', start, changes: [change, change] }), 'changes names one change twice');
  const many = Array.from({ length: MAX_CAUSE_CHANGES + 1 }, (_, index) => ({ ...change, name: `c${index}` }));
  t.is(problem({ trigger: 'ConfigMap', start, changes: many }), `changes has ${many.length} entries, more than ${MAX_CAUSE_CHANGES}`);
  t.is(problem({ trigger: 'ConfigMap', start, changes: many.slice(1) }), undefined, 'a change per listed object fits');
  t.deepEqual(parseRolloutCause(JSON.stringify({ trigger: 'ConfigMap', start, changes: [{ ...change, keys: ['app.yaml'] }] })), {
    cause: { trigger: 'ConfigMap', start, changes: [{ ...change, keys: ['app.yaml'] }], generation: undefined },
  });
  t.is(
    problem({ trigger: 'ConfigMap', start, changes: [{ ...change, keys: ['a\u001b[31m'] }] }),
    'changes[0].keys ["a\\u001b[31m"] is not a list of at most 64 keys',
  );
  t.is(problem({ trigger: 'Secret', start, changes: [change] }), 'trigger Secret has no Secret change');
  t.deepEqual(
    parseRolloutCause(JSON.stringify({ trigger: 'ConfigMap', start, changes: [{ ...change, extra: 1 }], extra: { deep: 'x' } })),
    {
      cause: { trigger: 'ConfigMap', start, changes: [change], generation: undefined },
    },
  );
});

test("a rollout the controller saw end, at the cause's template generation, stays ended through a scale; without it, kubectl's rules", (t) => {
  const available = { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' };
  const updating = { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' };
  const deadline = { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'timed out' };
  // The template written at generation 5; a scale to 3 replicas made generation 6 (`replicas` 0: a scale to zero).
  const cases: [string, NonNullable<Deployment['status']>, RolloutProgress['phase'], RolloutProgress['phase'], number?][] = [
    [
      'succeeded, then a scale the controller has not observed',
      { observedGeneration: 5, replicas: 2, updatedReplicas: 2, availableReplicas: 2, conditions: [available] },
      'Succeeded',
      'InProgress',
    ],
    [
      'succeeded, then a scale observed whose new pods are not available yet',
      { observedGeneration: 6, replicas: 3, updatedReplicas: 3, availableReplicas: 2, conditions: [available] },
      'Succeeded',
      'InProgress',
    ],
    [
      'succeeded, then a scale to zero',
      { observedGeneration: 5, replicas: 0, updatedReplicas: 0, conditions: [available] },
      'Succeeded',
      'InProgress',
      0,
    ],
    [
      'failed its deadline, then a scale the controller has not observed',
      { observedGeneration: 5, replicas: 3, updatedReplicas: 1, availableReplicas: 2, conditions: [deadline] },
      'Failed',
      'InProgress',
    ],
    [
      'the template not observed yet (the condition is the rollout before it)',
      { observedGeneration: 4, replicas: 2, updatedReplicas: 2, availableReplicas: 2, conditions: [available] },
      'InProgress',
      'InProgress',
    ],
    [
      'observed with old pods left, under the condition of the rollout before',
      { observedGeneration: 6, replicas: 2, updatedReplicas: 0, availableReplicas: 2, conditions: [available] },
      'InProgress',
      'InProgress',
    ],
    [
      'Recreate: the old pods gone, the new ReplicaSet not made yet',
      { observedGeneration: 6, replicas: 0, updatedReplicas: 0, availableReplicas: 0, conditions: [available] },
      'InProgress',
      'InProgress',
    ],
    [
      'still progressing on its template',
      { observedGeneration: 6, replicas: 3, updatedReplicas: 2, availableReplicas: 2, conditions: [updating] },
      'InProgress',
      'InProgress',
    ],
    [
      'failed, then revived by a scale (the controller progresses it again)',
      { observedGeneration: 6, replicas: 4, updatedReplicas: 2, availableReplicas: 2, conditions: [updating] },
      'InProgress',
      'InProgress',
    ],
    [
      'no progress deadline (no Progressing condition)',
      { observedGeneration: 5, replicas: 2, updatedReplicas: 2, availableReplicas: 2 },
      'InProgress',
      'InProgress',
    ],
  ];
  for (const [what, status, withField, without, replicas = 3] of cases) {
    const cause: RolloutCause = { ...CAUSE, templateGeneration: 5 };
    const scaled: Deployment = {
      ...deployment(status, replicas, cause),
      metadata: { ...deployment(status, replicas, cause).metadata, generation: 6 },
    };
    t.is(rolloutProgress(scaled, 5).phase, withField, what);
    t.is(rolloutProgress(scaled).phase, without, `${what}, by kubectl's rules`);
    t.is(currentRollout(scaled, undefined)?.phase, withField, `${what}: the cause's template generation`);
    t.is(rollingForContent(currentRollout(scaled, undefined)), withField === 'InProgress', `${what}: a slot`);
    const earlier: Deployment = {
      ...scaled,
      metadata: { ...scaled.metadata, annotations: { [ROLLOUT_ANNOTATION]: encodeRolloutCause(CAUSE) } },
    };
    t.is(currentRollout(earlier, undefined)?.phase, without, `${what}: a cause an earlier version wrote keeps kubectl's rules`);
  }
});

test('the template generation round-trips in the cause annotation; one that is not a positive integer is a problem', (t) => {
  const cause: RolloutCause = { ...CAUSE, templateGeneration: 7 };
  t.deepEqual(rolloutCause(deployment({}, 1, cause)), cause);
  const problem = (templateGeneration: unknown): string | undefined => {
    const parsed = parseRolloutCause(JSON.stringify({ ...CAUSE, templateGeneration }));
    return 'problem' in parsed ? parsed.problem : undefined;
  };
  t.is(problem(0), 'templateGeneration 0 is not an integer ≥ 1');
  t.is(problem('7'), 'templateGeneration "7" is not an integer ≥ 1');
  t.is(problem(7), undefined);
});
