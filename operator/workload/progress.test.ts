// A StatefulSet's and a DaemonSet's rollout as kubectl's status viewers judge them (a Deployment's is governance's), and a rollout of ours seen to end through a scale.
import test from 'ava';
import type { DaemonSet, StatefulSet } from '../kube/objects.js';
import type { RolloutProgress } from '../governance/rollout-progress.js';
import { workloadProgress } from './progress.js';
import type { Workload, WorkloadKind } from './workload.js';

const statefulSet = (spec: object, status: object | undefined, generation = 2): StatefulSet =>
  ({
    metadata: { name: 's', generation },
    spec: { replicas: 3, template: { spec: { containers: [] } }, ...spec },
    status,
  }) as unknown as StatefulSet;
const daemonSet = (spec: object, status: object | undefined, generation = 2): DaemonSet =>
  ({ metadata: { name: 'd', generation }, spec: { template: { spec: { containers: [] } }, ...spec }, status }) as unknown as DaemonSet;

test("StatefulSet: the observed generation, ready replicas, a partition's updated replicas, then the revisions", (t) => {
  const phase = (set: StatefulSet): string => workloadProgress('StatefulSet', set).phase;
  t.is(phase(statefulSet({}, undefined)), 'InProgress', 'no status yet');
  t.is(phase(statefulSet({}, { observedGeneration: 1, readyReplicas: 3 })), 'InProgress', 'an older generation');
  t.is(phase(statefulSet({}, { observedGeneration: 2, readyReplicas: 2 })), 'InProgress', '2 of 3 ready');
  const revisions = { observedGeneration: 2, readyReplicas: 3, updatedReplicas: 1, currentRevision: 's-1', updateRevision: 's-2' };
  t.deepEqual(workloadProgress('StatefulSet', statefulSet({}, revisions)), { phase: 'InProgress', message: '1 pods at revision s-2' });
  t.is(phase(statefulSet({}, { ...revisions, updatedReplicas: 3, currentRevision: 's-2' })), 'Succeeded');
  const partitioned = { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } };
  t.is(phase(statefulSet(partitioned, { ...revisions, updatedReplicas: 0 })), 'InProgress', 'none of the 1 above the partition');
  t.is(phase(statefulSet(partitioned, revisions)), 'Succeeded', 'the 1 above the partition is updated');
  t.is(phase(statefulSet({ updateStrategy: { type: 'OnDelete' } }, undefined)), 'Succeeded', 'OnDelete: no rollout to follow');
});

test('DaemonSet: the observed generation, then updated and available pods of those desired', (t) => {
  const phase = (set: DaemonSet): string => workloadProgress('DaemonSet', set).phase;
  const status = { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 };
  t.is(phase(daemonSet({}, undefined)), 'InProgress');
  t.is(phase(daemonSet({}, { ...status, observedGeneration: 1 })), 'InProgress');
  t.deepEqual(workloadProgress('DaemonSet', daemonSet({}, { ...status, updatedNumberScheduled: 1 })), {
    phase: 'InProgress',
    message: '1 of 3 updated pods are scheduled',
  });
  t.is(phase(daemonSet({}, { ...status, numberAvailable: 2 })), 'InProgress');
  t.is(phase(daemonSet({}, status)), 'Succeeded');
  t.is(phase(daemonSet({ updateStrategy: { type: 'OnDelete' } }, undefined)), 'Succeeded');
});

test("a rollout of ours seen to end at its recorded template generation stays ended through a scale; without it, kubectl's rules", (t) => {
  // Our template written at generation 2, then a scale to 3 replicas (generation 3) that the controller has not acted on.
  const scaled = (status: object): Workload =>
    ({
      metadata: { name: 'w', generation: 3 },
      spec: { replicas: 3, template: { spec: { containers: [] } } },
      status,
    }) as unknown as Workload;
  const available = { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' };
  const cases: [string, WorkloadKind, object, RolloutProgress['phase']][] = [
    [
      'StatefulSet: the current revision reached the update revision',
      'StatefulSet',
      { observedGeneration: 2, replicas: 2, readyReplicas: 2, updatedReplicas: 2, currentRevision: 'w-2', updateRevision: 'w-2' },
      'Succeeded',
    ],
    [
      'StatefulSet: the scale observed, its new pod not ready yet',
      'StatefulSet',
      { observedGeneration: 3, replicas: 3, readyReplicas: 2, updatedReplicas: 3, currentRevision: 'w-2', updateRevision: 'w-2' },
      'Succeeded',
    ],
    [
      'StatefulSet: still rolling our template',
      'StatefulSet',
      { observedGeneration: 2, replicas: 2, readyReplicas: 2, updatedReplicas: 1, currentRevision: 'w-1', updateRevision: 'w-2' },
      'InProgress',
    ],
    [
      'StatefulSet: our template not observed yet',
      'StatefulSet',
      { observedGeneration: 1, replicas: 2, readyReplicas: 2, updatedReplicas: 2, currentRevision: 'w-1', updateRevision: 'w-1' },
      'InProgress',
    ],
    [
      'Deployment: NewReplicaSetAvailable, no old pod',
      'Deployment',
      { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2, conditions: [available] },
      'Succeeded',
    ],
    [
      "Rollout: the stable ReplicaSet is the current one (Argo's RolloutCompleted), the scale makes it Progressing",
      'Rollout',
      { observedGeneration: '3', phase: 'Progressing', stableRS: '6d9f', currentPodHash: '6d9f' },
      'Succeeded',
    ],
    [
      'Rollout: the canary not promoted to stable yet',
      'Rollout',
      { observedGeneration: '3', phase: 'Progressing', stableRS: '5c8e', currentPodHash: '6d9f' },
      'InProgress',
    ],
    [
      'Rollout: our template not observed yet (the stable hash is the one before)',
      'Rollout',
      { observedGeneration: '1', phase: 'Healthy', stableRS: '5c8e', currentPodHash: '5c8e' },
      'InProgress',
    ],
  ];
  for (const [what, kind, status, phase] of cases) {
    t.is(workloadProgress(kind, scaled(status), 2).phase, phase, what);
    t.is(workloadProgress(kind, scaled(status)).phase, 'InProgress', `${what}: by kubectl's rules, the scale is in progress`);
  }
});
