// A StatefulSet's and a DaemonSet's rollout as kubectl's status viewers judge them; a Deployment's is governance's.
import test from 'ava';
import type { DaemonSet, StatefulSet } from '../kube/objects.js';
import { workloadProgress } from './progress.js';

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
