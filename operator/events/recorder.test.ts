// The Event recorder against each target, as the operator's ServiceAccount: create once, then count repeats by patch.
import test from 'ava';
import { pino } from 'pino';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { selectedTargets } from '../../test/support/targets.js';
import { clusterScenario, createNamespace } from '../../test/support/operator-harness.js';
import { KubeClient } from '../kube/client.js';
import type { RequestSample } from '../kube/options.js';
import { EVENTS } from '../kube/resources.js';
import type { CoreEvent } from '../kube/objects.js';
import { EventRecorder, type InvolvedObject } from './recorder.js';
import { involvedApp } from './testing/involved-object.js';

for (const target of selectedTargets()) {
  let operatorClient: KubeClient;
  const samples: RequestSample[] = [];
  const scenario = clusterScenario(test, target, undefined, async ({ cluster, admin }) => {
    await createNamespace(admin, 'events');
    operatorClient = await KubeClient.fromKubeConfig((await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME)).kubeConfig, {
      onRequest: (sample) => samples.push(sample),
    });
    return async () => operatorClient.close();
  });

  const app = (name: string): InvolvedObject => involvedApp(name, 'events');
  const eventsAbout = async (name: string): Promise<CoreEvent[]> =>
    (await scenario.admin.list<CoreEvent>(EVENTS, { namespace: 'events' })).items.filter((event) => event.involvedObject.name === name);

  test.serial(`[${target}] a repeated Event is one Event with a count, written with create and patch only`, async (t) => {
    let clock = Date.parse('2025-01-01T00:00:00Z');
    const recorder = new EventRecorder({
      client: operatorClient,
      component: OPERATOR_NAME,
      instance: 'test',
      logger: pino({ level: 'silent' }),
      now: () => new Date(clock),
    });
    await recorder.record(app('repeat'), 'Warning', 'RolloutHeld', 'rollout held: "cfg" not found');
    clock += 5_000;
    await recorder.record(app('repeat'), 'Warning', 'RolloutHeld', 'rollout held: "cfg" not found');
    await recorder.record(app('repeat'), 'Normal', 'Created', 'Created Deployment "repeat"');
    const events = await eventsAbout('repeat');
    t.is(events.length, 2);
    const held = events.find((event) => event.reason === 'RolloutHeld')!;
    t.like(held, {
      type: 'Warning',
      count: 2,
      firstTimestamp: '2025-01-01T00:00:00Z',
      lastTimestamp: '2025-01-01T00:00:05Z',
      reportingComponent: OPERATOR_NAME,
    });
    t.like(held.involvedObject, { kind: 'CustomApp', name: 'repeat', namespace: 'events', uid: 'uid-repeat' });
    t.deepEqual(
      [...new Set(samples.filter((sample) => sample.resource === 'events').map((sample) => `${sample.verb} ${sample.code}`))].sort(),
      ['create 201', 'patch 200'],
    );
  });

  test.serial(`[${target}] a repeat whose Event was deleted meanwhile creates a new one, and failures never throw`, async (t) => {
    const recorder = new EventRecorder({ client: operatorClient, component: OPERATOR_NAME, logger: pino({ level: 'silent' }) });
    await recorder.record(app('expired'), 'Normal', 'Updated', 'Updated Deployment "expired"');
    const [first] = await eventsAbout('expired');
    await scenario.admin.delete(EVENTS, 'events', first!.metadata.name!);
    await recorder.record(app('expired'), 'Normal', 'Updated', 'Updated Deployment "expired"');
    const events = await eventsAbout('expired');
    t.is(events.length, 1);
    t.not(events[0]!.metadata.name, first!.metadata.name);
    t.is(events[0]!.count, 1);
    await t.notThrowsAsync(recorder.record({ ...app('nowhere'), namespace: 'no-such-namespace' }, 'Normal', 'Created', 'x'));
  });
}
