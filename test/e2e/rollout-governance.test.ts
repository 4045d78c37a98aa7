// Rollout governance against each API target: the budget's queue and order, coalesced edits, spec changes, the flap
// breaker, pause and debounce, a failed rollout, a restart that rebuilds the queue (and counts no scale as a rollout),
// and the schema of spec.rollout.
// No Deployment controller runs on the API targets: a rollout completes (or fails) when the test writes the
// Deployment's status as the admin, as kube-controller-manager would.
import test, { type ExecutionContext } from 'ava';
import { CONFIG_HASH_ANNOTATION, ROLLOUT_ANNOTATION } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import { rolloutCause } from '../../operator/governance/rollout-cause.js';
import { rolloutProgress } from '../../operator/governance/rollout-progress.js';
import { endedRolloutStatus, pausedRolloutStatus } from '../../operator/governance/testing/deployment-status.js';
import type { RolloutSettings } from '../../operator/governance/governance.js';
import { ApiError } from '../../operator/kube/errors.js';
import type { CoreEvent, Deployment } from '../../operator/kube/objects.js';
import { CONFIGMAPS, DEPLOYMENTS, EVENTS, SERVICES } from '../../operator/kube/resources.js';
import { selectedTargets } from '../support/targets.js';
import { applyDenyingPolicy } from '../support/admission-policy.js';
import {
  clusterForTest,
  createAll,
  createNamespace,
  eventually,
  getIfExists,
  objects,
  startTestOperator,
  type TestOperator,
  clusterScenario,
} from '../support/operator-harness.js';

const hash = (value: string): string => contentHash({ data: { V: value } });
/** The rollout cause of the first edit of ConfigMap `shared` (V 1 → 2), as a status's pendingRollout and lastRollout name it. */
const FIRST_EDIT = { trigger: 'ConfigMap', name: 'shared', fromHash: hash('1'), toHash: hash('2') } as const;

for (const target of selectedTargets()) {
  const scenario = clusterScenario(test, target, { envtest: { controllerManager: true } });

  /** An operator watching `namespace` only, with the governance on with `rollouts`; stopped when the test ends. */
  const operatorFor = async (t: ExecutionContext, namespace: string, rollouts: RolloutSettings): Promise<TestOperator> => {
    const running = await startTestOperator(scenario.cluster, { namespaces: [namespace], rollouts });
    t.teardown(() => running.operator.stop());
    return running;
  };
  const appOf = async (ns: string, name: string): Promise<CustomApp> =>
    (await getIfExists<CustomApp>(scenario.admin, CUSTOM_APPS, ns, name))!;
  const deploymentOf = async (ns: string, name: string): Promise<Deployment> =>
    (await getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, name))!;
  const runs = async (ns: string, name: string): Promise<string | undefined> =>
    (await deploymentOf(ns, name)).spec.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION];
  const ready = async (ns: string, name: string): Promise<string> => {
    const condition = (await appOf(ns, name)).status?.conditions?.find((each) => each.type === 'Ready');
    return `${condition?.status} ${condition?.reason}`;
  };
  const eventsOf = async (ns: string, name: string): Promise<string[]> =>
    (await scenario.admin.list<CoreEvent>(EVENTS, { namespace: ns })).items
      .filter((event) => event.involvedObject.name === name)
      .map((event) => `${event.reason}: ${event.message}`);
  const edit = (ns: string, configMap: string, value: string): Promise<unknown> =>
    scenario.admin.patch(CONFIGMAPS, ns, configMap, 'merge', { data: { V: value } });

  /** Now as metav1.Time, for the conditions of a Deployment status the test writes. */
  const stamp = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  /** Plays the Deployment controller: the latest rollout of `name` succeeds, or fails its progress deadline. */
  const settle = async (ns: string, name: string, outcome: 'Succeeded' | 'Failed' = 'Succeeded'): Promise<void> => {
    const status = endedRolloutStatus(await deploymentOf(ns, name), outcome, stamp());
    await scenario.admin.patch(DEPLOYMENTS, ns, name, 'merge', { status }, { subresource: 'status' });
  };

  /** Completes the rollout of `name` if its Deployment has one in progress (a generation its status has not observed). */
  const settleIfRolling = async (ns: string, name: string): Promise<void> => {
    const live = await deploymentOf(ns, name);
    if ((live.status?.observedGeneration ?? 0) < (live.metadata.generation ?? 0)) await settle(ns, name);
  };

  /** Creates ConfigMap `shared` (V=1) and `names` referencing it, completes their first rollout, and waits until each is Ready. */
  const readyApps = async (ns: string, names: readonly string[], spec: Partial<CustomApp['spec']> = {}): Promise<void> => {
    await createNamespace(scenario.admin, ns);
    await createAll(scenario.admin, objects.configMap(ns, 'shared', { V: '1' }));
    for (const name of names)
      await createAll(scenario.admin, objects.customApp(ns, name, { image: 'example/app:1', configMapName: 'shared', ...spec }));
    for (const name of names) {
      await eventually(`${name}'s Deployment`, () => getIfExists(scenario.admin, DEPLOYMENTS, ns, name));
      await settle(ns, name);
    }
    for (const name of names) await eventually(`${name} Ready`, async () => (await ready(ns, name)) === 'True Ready', 30_000);
  };
  /** The apps whose Deployment runs `value`. */
  const runningValue = async (ns: string, names: readonly string[], value: string): Promise<string[]> => {
    const found: string[] = [];
    for (const name of names) if ((await runs(ns, name)) === hash(value)) found.push(name);
    return found;
  };
  /** The queued apps, in the order of their place (status.pendingRollout.since). */
  const queueOrder = async (ns: string, names: readonly string[]): Promise<string[]> => {
    const queued: { name: string; since: string }[] = [];
    for (const name of names) {
      const pending = (await appOf(ns, name)).status?.pendingRollout;
      if (pending?.reason === 'Queued') queued.push({ name, since: pending.since });
    }
    return queued.sort((a, b) => a.since.localeCompare(b.since) || a.name.localeCompare(b.name)).map((entry) => entry.name);
  };
  /**
   * Edits `shared` to V=2 and waits until `slots` of `names` roll it and the others wait: answers the rolling apps and
   * the queue in its order.
   */
  const slotsTaken = async (ns: string, names: readonly string[], slots: number): Promise<{ rolling: string[]; queued: string[] }> => {
    await edit(ns, 'shared', '2');
    return eventually(`${slots} of ${names.length} apps roll V=2, the others wait`, async () => {
      const rolling = await runningValue(ns, names, '2');
      const queued = await queueOrder(ns, names);
      return rolling.length === slots && queued.length === names.length - slots ? { rolling, queued } : undefined;
    });
  };
  /** An operator on `ns` that the test stops itself to restart it (`stop`), or the teardown stops if the test ended first. */
  const restartableOperator = async (
    t: ExecutionContext,
    ns: string,
    rollouts: RolloutSettings,
  ): Promise<{ stop: () => Promise<void> }> => {
    const running = await startTestOperator(scenario.cluster, { namespaces: [ns], rollouts });
    let stopped = false;
    t.teardown(() => (stopped ? undefined : running.operator.stop()));
    return {
      stop: async () => {
        await running.operator.stop();
        stopped = true;
      },
    };
  };

  test.serial(
    `[${target}] budget 2: five apps sharing a ConfigMap roll two at a time in queue order; three edits roll each queued app once, to the latest`,
    async (t) => {
      const ns = 'gov-queue';
      const names = ['q1', 'q2', 'q3', 'q4', 'q5'];
      const { operator, logs } = await operatorFor(t, ns, { maxConcurrentRollouts: 2, flapThreshold: 0 });
      await readyApps(ns, names);
      const generations = Object.fromEntries(
        await Promise.all(names.map(async (name) => [name, (await deploymentOf(ns, name)).metadata.generation!])),
      );

      const { rolling: first } = await slotsTaken(ns, names, 2);
      await new Promise((done) => setTimeout(done, 500));
      t.is((await runningValue(ns, names, '2')).length, 2, 'still two: the others wait');
      const waiting = names.filter((name) => !first.includes(name));
      for (const name of waiting) {
        t.is(await ready(ns, name), 'False RolloutQueued', name);
        t.like((await appOf(ns, name)).status?.pendingRollout, { reason: 'Queued', ...FIRST_EDIT });
        t.true(
          (await eventsOf(ns, name)).some((event) => event.startsWith('RolloutQueued: Rollout of ConfigMap "shared"')),
          `${name}: a RolloutQueued Event`,
        );
      }
      const positions = await Promise.all(
        (await queueOrder(ns, names)).map(
          async (name) =>
            (await appOf(ns, name))
              .status!.conditions!.find((each) => each.type === 'Ready')!
              .message.match(/position (\d+) in the queue/)?.[1],
        ),
      );
      t.deepEqual(positions, ['1', '2', '3'], 'the positions follow the order of the queue');
      t.is(await operator.metrics.total('customapp_rollouts_in_progress'), 2);
      t.is(await operator.metrics.total('customapp_rollouts_queued'), 3);

      // Two more edits while they wait: the queued apps roll once, to V=4; the two rolling ones queue again behind them.
      await edit(ns, 'shared', '3');
      await edit(ns, 'shared', '4');
      await eventually('every app waits for V=4', async () => {
        for (const name of names) if ((await appOf(ns, name)).status?.pendingRollout?.toHash !== hash('4')) return false;
        return true;
      });
      const order = await queueOrder(ns, names);
      t.deepEqual(
        order.slice(0, 3),
        waiting.sort((a, b) => order.indexOf(a) - order.indexOf(b)),
        'the three keep their places',
      );
      t.deepEqual([...order.slice(3)].sort(), [...first].sort(), 'the two rolling ones queue behind them');

      // Each completion lets the head of the queue go, and only it.
      const rolling = [...first];
      const granted: string[] = [];
      while (rolling.length > 0) {
        const done = rolling.shift()!;
        const head = (await queueOrder(ns, names)).filter((name) => !rolling.includes(name))[0];
        await settle(ns, done);
        if (!head) continue;
        await eventually(`${head} gets the slot ${done} freed`, async () => (await runs(ns, head)) === hash('4'), 20_000).catch(
          (error: unknown) => {
            // What the operator decided, to read when this fails.
            const trace = logs.lines.filter((line) => /^(rollout\.|reconcile|enqueue)/.test(String(line.msg)));
            t.log(trace.map((line) => JSON.stringify(line)).join('\n'));
            throw error;
          },
        );
        granted.push(head);
        rolling.push(head);
        await new Promise((done) => setTimeout(done, 300));
        const v4 = await runningValue(ns, names, '4');
        t.deepEqual(v4.sort(), [...granted].sort(), `only ${head} went after ${done} finished`);
      }
      t.deepEqual(granted, order, 'the slots went in queue order');
      for (const name of names) {
        await eventually(
          `${name} Ready on V=4`,
          async () => (await ready(ns, name)) === 'True Ready' && (await runs(ns, name)) === hash('4'),
        );
        const rolled = (await deploymentOf(ns, name)).metadata.generation! - generations[name]!;
        t.is(rolled, first.includes(name) ? 2 : 1, `${name} rolled ${first.includes(name) ? 'to V=2, then V=4' : 'once, to V=4'}`);
        t.like((await appOf(ns, name)).status?.lastRollout, { trigger: 'ConfigMap', toHash: hash('4'), result: 'Succeeded' });
      }
      t.is(await operator.metrics.total('customapp_rollouts_total', { trigger: 'ConfigMap', result: 'Succeeded' }), 7);
      t.is(await operator.metrics.total('customapp_rollouts_in_progress'), 0);
      t.true(logs.find('rollout.waiting', { reason: 'Queued' }).length > 0, 'the trace says why an app waits');

      const table = await scenario.cluster.kubectl(['-n', ns, 'get', 'ca']);
      t.regex(table.stdout, /NAME\s+IMAGE\s+CONFIGMAP\s+READY\s+ROLLOUT\s+WAITING\s+AGE/);
      // An empty cell is `<none>` from a real API server's table and blank from the emulator's.
      t.regex(table.stdout, /q1\s+example\/app:1\s+shared\s+True\s+Succeeded\s+(<none>\s+)?\d+s/);
    },
  );

  test.serial(
    `[${target}] a spec change is never queued, and a failed rollout says which change caused it and frees its slot`,
    async (t) => {
      const ns = 'gov-spec';
      const names = ['s1', 's2', 's3'];
      await operatorFor(t, ns, { maxConcurrentRollouts: 1, flapThreshold: 0 });
      await readyApps(ns, names);
      const {
        rolling: [first],
        queued: [next, last],
      } = await slotsTaken(ns, names, 1);

      // A new image for the last in line: it rolls at once, with the latest content.
      const app = await appOf(ns, last!);
      await scenario.admin.patch(CUSTOM_APPS, ns, last!, 'merge', { spec: { image: 'example/app:2' } });
      await eventually(
        `${last} rolls for its spec`,
        async () => (await deploymentOf(ns, last!)).spec.template.spec.containers[0]!.image === 'example/app:2',
      );
      t.is(await runs(ns, last!), hash('2'), 'the spec rollout takes the latest content along');
      await eventually('lastRollout says Spec', async () => (await appOf(ns, last!)).status?.lastRollout?.trigger === 'Spec');
      t.like((await appOf(ns, last!)).status?.lastRollout, {
        trigger: 'Spec',
        generation: app.metadata.generation! + 1,
        result: 'InProgress',
      });
      t.is(await runs(ns, next!), hash('1'), `${next} still waits: a spec rollout takes no slot and frees none`);

      await settle(ns, first!, 'Failed');
      await eventually(`${first} says RolloutFailed`, async () => (await ready(ns, first!)) === 'False RolloutFailed');
      const change = `ConfigMap "shared" ${hash('1').slice(0, 12)}→${hash('2').slice(0, 12)}`;
      const failed = await appOf(ns, first!);
      t.is(
        failed.status!.conditions!.find((each) => each.type === 'Ready')!.message,
        `the rollout of ${change} failed: ReplicaSet "${first}-x" has timed out progressing.`,
      );
      t.like(failed.status?.lastRollout, { ...FIRST_EDIT, result: 'Failed' });
      t.truthy(failed.status?.lastRollout?.completionTime);
      await eventually('a RolloutFailed Event', async () =>
        (await eventsOf(ns, first!)).includes(
          `RolloutFailed: The rollout of ${change} failed: ReplicaSet "${first}-x" has timed out progressing.`,
        ),
      );
      await eventually(`${next} gets the slot the failed rollout freed`, async () => (await runs(ns, next!)) === hash('2'));
      const table = await scenario.cluster.kubectl(['-n', ns, 'get', 'ca', first!]);
      t.regex(table.stdout, new RegExp(`${first}\\s+example/app:1\\s+shared\\s+False\\s+Failed\\s+(<none>\\s+)?\\d+s`));
    },
  );

  test.serial(
    `[${target}] the flap breaker holds a flapping ConfigMap's apps with a condition and an Event, then rolls them once to the latest`,
    async (t) => {
      const ns = 'gov-flap';
      const { operator } = await operatorFor(t, ns, { maxConcurrentRollouts: 10, flapThreshold: 3, flapWindowMs: 3_000 });
      await readyApps(ns, ['f1', 'f2']);
      const before = (await deploymentOf(ns, 'f1')).metadata.generation!;
      // Each edit is seen by the watch before the next: five content changes in about a second.
      for (const value of ['2', '3', '4', '5', '6']) {
        await edit(ns, 'shared', value);
        await eventually(`the operator saw V=${value}`, async () =>
          (await appOf(ns, 'f2')).status?.conditions?.some((each) => each.message.includes(`content ${hash(value).slice(0, 12)}`)),
        );
      }
      await eventually(
        'held as Flapping',
        async () => (await ready(ns, 'f2')) === 'False Flapping' && (await appOf(ns, 'f2')).status?.pendingRollout?.toHash === hash('6'),
        5_000,
      );
      t.regex(
        (await appOf(ns, 'f2')).status!.conditions!.find((each) => each.type === 'Ready')!.message,
        /ConfigMap "shared" is flapping: \d content changes within 3s \(more than 3\)/,
      );
      t.true(
        (await eventsOf(ns, 'f2')).some((event) =>
          /^RolloutHeld: ConfigMap "shared" is flapping: \d content changes within 3s \(more than 3\)/.test(event),
        ),
        'a RolloutHeld Event names the object and the count',
      );
      t.is(await operator.metrics.total('customapp_flap_breakers_open'), 1);
      const heldAt = Date.now();
      // The rollouts the first edits started complete (an app rolls for content once at a time).
      for (const name of ['f1', 'f2']) await settleIfRolling(ns, name);
      for (const name of ['f1', 'f2']) {
        await eventually(`${name} rolls to V=6 once the ConfigMap is quiet`, async () => (await runs(ns, name)) === hash('6'), 20_000);
      }
      t.true(Date.now() - heldAt >= 1_000, 'not before the window of quiet');
      const f2 = await deploymentOf(ns, 'f2');
      t.true(
        f2.metadata.generation! - before <= 2,
        `at most the rollout before the breaker opened and the one after (${f2.metadata.generation! - before})`,
      );
      t.is(await operator.metrics.total('customapp_flap_breakers_open'), 0);
    },
  );

  test.serial(
    `[${target}] paused apps track the latest content and roll it once when unpaused; a debounced app rolls once after the edits stop`,
    async (t) => {
      const ns = 'gov-pause';
      await operatorFor(t, ns, { maxConcurrentRollouts: 10, flapThreshold: 0 });
      await readyApps(ns, ['paused'], { rollout: { paused: true } });
      await createAll(
        scenario.admin,
        objects.customApp(ns, 'debounced', { image: 'example/app:1', configMapName: 'shared', rollout: { debounceSeconds: 2 } }),
      );
      await eventually('the debounced Deployment', () => getIfExists(scenario.admin, DEPLOYMENTS, ns, 'debounced'));
      await settle(ns, 'debounced');
      await eventually('debounced Ready', async () => (await ready(ns, 'debounced')) === 'True Ready');
      const generations = {
        paused: (await deploymentOf(ns, 'paused')).metadata.generation!,
        debounced: (await deploymentOf(ns, 'debounced')).metadata.generation!,
      };

      for (const value of ['2', '3', '4']) {
        await edit(ns, 'shared', value);
        await new Promise((done) => setTimeout(done, 300));
      }
      const lastEdit = Date.now();
      await eventually(
        'paused says so, with the latest content',
        async () =>
          (await ready(ns, 'paused')) === 'False RolloutPaused' && (await appOf(ns, 'paused')).status?.pendingRollout?.toHash === hash('4'),
      );
      t.is(await runs(ns, 'paused'), hash('1'));
      t.true((await eventsOf(ns, 'paused')).some((event) => event.startsWith('RolloutPaused:')));
      await eventually('the debounced app rolls to V=4', async () => (await runs(ns, 'debounced')) === hash('4'), 15_000);
      t.true(Date.now() - lastEdit >= 1_500, `rolled ${Date.now() - lastEdit} ms after the last edit: not before the debounce`);
      t.is((await deploymentOf(ns, 'debounced')).metadata.generation! - generations.debounced, 1, 'three edits, one rollout');

      await scenario.admin.patch(CUSTOM_APPS, ns, 'paused', 'merge', { spec: { rollout: { paused: false } } });
      await eventually('unpaused, it rolls to V=4', async () => (await runs(ns, 'paused')) === hash('4'));
      t.is((await deploymentOf(ns, 'paused')).metadata.generation! - generations.paused, 1, 'once');
      // The status is written after the Deployment.
      await eventually(
        'its lastRollout names the ConfigMap',
        async () => (await appOf(ns, 'paused')).status?.lastRollout?.trigger === 'ConfigMap',
      );
      t.like((await appOf(ns, 'paused')).status?.lastRollout, { trigger: 'ConfigMap', fromHash: hash('1'), toHash: hash('4') });
    },
  );

  test.serial(
    `[${target}] a restarted operator rebuilds the queue in its order and the slot in use: nothing dropped, nothing rolled twice`,
    async (t) => {
      const ns = 'gov-restart';
      const names = ['r1', 'r2', 'r3', 'r4'];
      const settings = { maxConcurrentRollouts: 1, flapThreshold: 0 };
      const firstOperator = await restartableOperator(t, ns, settings);
      await readyApps(ns, names);
      const generations = Object.fromEntries(
        await Promise.all(names.map(async (name) => [name, (await deploymentOf(ns, name)).metadata.generation!])),
      );
      const {
        rolling: [rolling],
        queued: order,
      } = await slotsTaken(ns, names, 1);
      const statuses = JSON.stringify(await Promise.all(names.map(async (name) => (await appOf(ns, name)).status)));
      await firstOperator.stop();

      const second = await operatorFor(t, ns, settings);
      t.like(second.logs.find('rollout.rebuilt')[0], { inProgress: 1, queued: 3 });
      await new Promise((done) => setTimeout(done, 1_000));
      t.deepEqual(await runningValue(ns, names, '2'), [rolling], 'the restart granted no second slot');
      t.is(JSON.stringify(await Promise.all(names.map(async (name) => (await appOf(ns, name)).status))), statuses, 'and changed no status');

      const granted: string[] = [];
      let current = rolling!;
      for (const next of order) {
        await settle(ns, current);
        await eventually(`${next} goes after ${current}`, async () => (await runs(ns, next)) === hash('2'));
        const v2 = await runningValue(ns, names, '2');
        t.is(v2.length, granted.length + 2, `only ${next} went`);
        granted.push(next);
        current = next;
      }
      await settle(ns, current);
      for (const name of names) {
        await eventually(`${name} Ready`, async () => (await ready(ns, name)) === 'True Ready');
        t.is((await deploymentOf(ns, name)).metadata.generation! - generations[name]!, 1, `${name} rolled once`);
      }
    },
  );

  test.serial(
    `[${target}] a scale after a content rollout ended, before the status recorded its end, then a restart: the rebuild takes no slot for it`,
    async (t) => {
      const ns = 'gov-scale';
      const names = ['c1', 'c2'];
      const settings = { maxConcurrentRollouts: 1, flapThreshold: 0 };
      const firstOperator = await restartableOperator(t, ns, settings);
      await readyApps(ns, names);
      const {
        rolling: [rolling],
        queued: [waiting],
      } = await slotsTaken(ns, names, 1);
      await eventually(`${rolling}'s status says its rollout is in progress`, async () => {
        const last = (await appOf(ns, rolling!)).status?.lastRollout;
        return last?.trigger === 'ConfigMap' && last.result === 'InProgress';
      });
      const written = await deploymentOf(ns, rolling!);
      t.is(rolloutCause(written)?.templateGeneration, written.metadata.generation, 'the cause names the generation its write made');
      await firstOperator.stop();

      // While no operator runs: the rollout completes, then a scale (kubectl scale, an HPA) the controller has not observed.
      await settle(ns, rolling!);
      await scenario.cluster.kubectl(['-n', ns, 'scale', `deployment/${rolling}`, '--replicas=3']);
      const scaled = await deploymentOf(ns, rolling!);
      t.is(rolloutProgress(scaled).phase, 'InProgress', "kubectl's rules read the scale as a rollout");
      t.is((await appOf(ns, rolling!)).status?.lastRollout?.result, 'InProgress', 'the status has not recorded the end');

      const second = await operatorFor(t, ns, settings);
      t.like(second.logs.find('rollout.rebuilt')[0], { inProgress: 0, queued: 1 }, 'the scaled app takes no slot');
      await eventually(`${waiting} gets the one slot`, async () => (await runs(ns, waiting!)) === hash('2'));
      await eventually(
        `${rolling}'s status records its rollout as succeeded`,
        async () => (await appOf(ns, rolling!)).status?.lastRollout?.result === 'Succeeded',
      );
      t.is((await deploymentOf(ns, rolling!)).spec.replicas, 3, "the scale is the user's: the operator leaves it");
      await settle(ns, waiting!);
      await eventually(`${waiting} Ready`, async () => (await ready(ns, waiting!)) === 'True Ready');
    },
  );

  test.serial(
    `[${target}] a Service whose re-creation is refused keeps no slot: once the rollout is done, the next app in the queue rolls`,
    async (t) => {
      const ns = 'gov-service';
      const { operator } = await operatorFor(t, ns, { maxConcurrentRollouts: 1, flapThreshold: 0 });
      await readyApps(ns, ['later'], { port: 8080 });
      await createAll(
        scenario.admin,
        objects.configMap(ns, 'own', { V: '1' }),
        objects.customApp(ns, 'refused', { image: 'example/app:1', configMapName: 'own', port: 8080 }),
      );
      await eventually("refused's Deployment", () => getIfExists(scenario.admin, DEPLOYMENTS, ns, 'refused'));
      await settle(ns, 'refused');
      await eventually('refused Ready', async () => (await ready(ns, 'refused')) === 'True Ready', 30_000);

      // No new Service in the namespace, as an admission that refuses it (a quota, a policy) would: a
      // ValidatingAdmissionPolicy on a real API server; the emulator runs no admission policies, so its fault injector
      // refuses the creations instead.
      if (target === 'envtest') {
        const removePolicy = await applyDenyingPolicy(scenario.cluster, {
          name: 'gov-no-services',
          namespace: ns,
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['services'] }],
          validation: { expression: 'false', message: 'no new Service in this namespace', reason: 'Forbidden' },
        });
        t.teardown(removePolicy);
        const probe = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'probe' }, spec: { ports: [{ port: 80 }] } };
        await eventually('the policy is in force', async () => {
          const created = await scenario.admin.create(SERVICES, ns, probe).catch(() => undefined);
          if (created) await scenario.admin.delete(SERVICES, ns, 'probe');
          return created === undefined;
        });
      } else {
        const fault = scenario.cluster.emulator!.faults.failRequests({
          match: { verb: 'create', resource: 'services', namespace: ns },
          rate: 1,
          code: 500,
        });
        t.teardown(() => scenario.cluster.emulator!.faults.remove(fault));
      }
      await scenario.admin.delete(SERVICES, ns, 'refused');
      await edit(ns, 'own', '2');
      await eventually('refused rolls V=2 and says its Service failed', async () => {
        const condition = (await appOf(ns, 'refused')).status?.conditions?.find((each) => each.type === 'Ready');
        return (await runs(ns, 'refused')) === hash('2') && condition?.reason === 'ReconcileError';
      });
      await edit(ns, 'shared', '2');
      await eventually('later waits for the one slot', async () => (await ready(ns, 'later')) === 'False RolloutQueued');

      await settle(ns, 'refused');
      await eventually('later gets the slot of the finished rollout', async () => (await runs(ns, 'later')) === hash('2'));
      t.is(await operator.metrics.total('customapp_rollouts_in_progress'), 1, "later's rollout only");
      t.is(await getIfExists(scenario.admin, SERVICES, ns, 'refused'), undefined, 'the Service is still refused');
    },
  );

  test.serial(
    `[${target}] kubectl rollout pause on a rolling Deployment frees its slot and Ready says DeploymentPaused; a resume counts it again`,
    async (t) => {
      const ns = 'gov-paused';
      const names = ['p1', 'p2'];
      const { operator } = await operatorFor(t, ns, { maxConcurrentRollouts: 1, flapThreshold: 0 });
      await readyApps(ns, names);
      const {
        rolling: [first],
        queued: [next],
      } = await slotsTaken(ns, names, 1);

      /** `kubectl rollout pause|resume`, then the status the Deployment controller writes for it. */
      const rollout = async (verb: 'pause' | 'resume'): Promise<void> => {
        const before = await deploymentOf(ns, first!);
        await scenario.cluster.kubectl(['-n', ns, 'rollout', verb, `deployment/${first}`]);
        const status = pausedRolloutStatus(await deploymentOf(ns, first!), before, stamp());
        await scenario.admin.patch(DEPLOYMENTS, ns, first!, 'merge', { status }, { subresource: 'status' });
      };
      await rollout('pause');
      await eventually(`${next} gets the slot of the paused rollout`, async () => (await runs(ns, next!)) === hash('2'));
      await eventually(`${first} says DeploymentPaused`, async () => (await ready(ns, first!)) === 'False DeploymentPaused');
      t.regex(
        (await appOf(ns, first!)).status!.conditions!.find((each) => each.type === 'Ready')!.message,
        new RegExp(`is paused on the Deployment: .*\`kubectl rollout resume deployment/${first}\` resumes it`),
      );
      t.true((await deploymentOf(ns, first!)).spec.paused, "the pause is the user's: the operator leaves it");

      await rollout('resume');
      await eventually(`${first} rolls again`, async () => (await ready(ns, first!)) === 'False RolloutInProgress');
      await eventually('both count', async () => (await operator.metrics.total('customapp_rollouts_in_progress')) === 2);
      for (const name of names) await settle(ns, name);
      for (const name of names) await eventually(`${name} Ready`, async () => (await ready(ns, name)) === 'True Ready');
    },
  );

  test.serial(
    `[${target}] a forged rollout annotation (wrong types, huge strings, unknown fields) is ignored: the app reconciles on, no status patch is refused`,
    async (t) => {
      const ns = 'gov-forged';
      const { logs, requests } = await operatorFor(t, ns, { maxConcurrentRollouts: 1, flapThreshold: 0 });
      await readyApps(ns, ['forged']);
      const recorded = (await appOf(ns, 'forged')).status?.lastRollout;
      const forged = {
        trigger: 'ConfigMap',
        start: 'yesterday',
        generation: 1.5,
        changes: [{ kind: 'ConfigMap', name: 'x'.repeat(100_000), to: 'z'.repeat(5_000), extra: [1, 2] }],
        unknown: { deep: true },
      };
      await scenario.admin.patch(DEPLOYMENTS, ns, 'forged', 'merge', {
        metadata: { annotations: { [ROLLOUT_ANNOTATION]: JSON.stringify(forged) } },
      });
      // A change that writes the status and rolls nothing: the replicas.
      await scenario.admin.patch(CUSTOM_APPS, ns, 'forged', 'merge', { spec: { replicas: 2 } });
      await eventually('the status observes the new generation', async () => {
        const app = await appOf(ns, 'forged');
        return app.status?.observedGeneration === app.metadata.generation;
      });
      t.deepEqual((await appOf(ns, 'forged')).status?.lastRollout, recorded, 'lastRollout keeps the recorded rollout');
      t.true(logs.find('rollout.cause.ignored').length > 0, 'the operator says it ignores the annotation');
      t.like(logs.find('rollout.cause.ignored')[0], { problem: 'start "yesterday" is not an RFC 3339 time' });
      t.deepEqual(
        requests.filter((request) => request.code === 422),
        [],
        'no write refused',
      );
      await edit(ns, 'shared', '2');
      await eventually('a content change rolls as usual', async () => (await runs(ns, 'forged')) === hash('2'));
      await eventually('and records a true cause', async () => (await appOf(ns, 'forged')).status?.lastRollout?.toHash === hash('2'));
    },
  );

  test.serial(`[${target}] the schema validates spec.rollout and spec.readinessPath`, async (t) => {
    const ns = 'gov-schema';
    await createNamespace(scenario.admin, ns);
    const refused = async (name: string, spec: Record<string, unknown>, field: RegExp): Promise<void> => {
      const error = await t.throwsAsync(
        createAll(scenario.admin, objects.customApp(ns, name, { image: 'example/app:1', ...spec } as CustomApp['spec'])),
      );
      t.true(error instanceof ApiError && error.statusCode === 422, `${name}: 422`);
      t.regex((error as Error).message, field, name);
    };
    await refused('negative-debounce', { rollout: { debounceSeconds: -1 } }, /spec\.rollout\.debounceSeconds/);
    await refused('long-debounce', { rollout: { debounceSeconds: 3601 } }, /spec\.rollout\.debounceSeconds/);
    await refused('paused-string', { rollout: { paused: 'yes' } }, /spec\.rollout\.paused/);
    await refused('zero-deadline', { rollout: { progressDeadlineSeconds: 0 } }, /spec\.rollout\.progressDeadlineSeconds/);
    await refused('relative-path', { port: 8080, readinessPath: 'healthz' }, /spec\.readinessPath/);
    await createAll(scenario.admin, objects.customApp(ns, 'defaults', { image: 'example/app:1', rollout: {} }));
    t.deepEqual((await appOf(ns, 'defaults')).spec.rollout, { debounceSeconds: 0, paused: false }, 'the documented defaults');
    // readinessPath needs port (a structural anyOf of "no readinessPath" and "a port"): a real API server refuses it;
    // the emulator does not evaluate anyOf or not (emulator/README.md), and the operator then adds no probe.
    if (target === 'envtest')
      await refused('path-without-port', { readinessPath: '/healthz' }, /"spec" must validate at least one schema \(anyOf\)/);
    else
      await t.notThrowsAsync(
        createAll(scenario.admin, objects.customApp(ns, 'path-without-port', { image: 'example/app:1', readinessPath: '/healthz' })),
      );
  });
}

if (selectedTargets().includes('emulator')) {
  test.serial(
    '[emulator, simulated Deployment status] 30 apps share a ConfigMap, budget 3: never more than 3 in progress, all converge, each rolled once',
    async (t) => {
      // The emulator writes the status a Deployment controller would (every pod Ready 300 ms after a template change),
      // so the budget runs on its own here, as on a cluster: nothing completes a rollout but the simulated controller.
      const { cluster, admin } = await clusterForTest(t, 'emulator', { emulator: { simulateDeploymentStatus: { readyAfterMs: 300 } } });
      const ns = 'gov-simulated';
      const names = Array.from({ length: 30 }, (_, index) => `app-${String(index).padStart(2, '0')}`);
      const { operator } = await startTestOperator(cluster, { namespaces: [ns], rollouts: { maxConcurrentRollouts: 3, flapThreshold: 5 } });
      t.teardown(() => operator.stop());
      await createNamespace(admin, ns);
      await createAll(
        admin,
        objects.configMap(ns, 'shared', { V: '1' }),
        ...names.map((name) => objects.customApp(ns, name, { image: 'example/app:1', configMapName: 'shared' })),
      );
      const readyCount = async (): Promise<number> =>
        (await admin.list<CustomApp>(CUSTOM_APPS, { namespace: ns })).items.filter((app) =>
          app.status?.conditions?.some((each) => each.type === 'Ready' && each.status === 'True'),
        ).length;
      await eventually('all 30 Ready', async () => (await readyCount()) === 30, 60_000);
      const generations = new Map(
        (await admin.list<Deployment>(DEPLOYMENTS, { namespace: ns })).items.map((d) => [d.metadata.name!, d.metadata.generation!]),
      );

      await admin.patch(CONFIGMAPS, ns, 'shared', 'merge', { data: { V: '2' } });
      let maxInProgress = 0;
      let samples = 0;
      const started = Date.now();
      await eventually(
        'all 30 run V=2 and are Ready',
        async () => {
          const deployments = (await admin.list<Deployment>(DEPLOYMENTS, { namespace: ns })).items;
          const inProgress = deployments.filter(
            (d) =>
              (d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0) ||
              (d.status?.availableReplicas ?? 0) < 1 ||
              (d.status?.replicas ?? 0) > 1,
          ).length;
          maxInProgress = Math.max(maxInProgress, inProgress);
          samples += 1;
          const converged = deployments.every((d) => d.spec.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] === hash('2'));
          return converged && inProgress === 0 && (await readyCount()) === 30;
        },
        90_000,
        50,
      );
      t.log(
        `30 apps rolled in ${Date.now() - started} ms at budget 3 (simulated rollouts of 300 ms); at most ${maxInProgress} in progress over ${samples} samples`,
      );
      t.true(maxInProgress <= 3, `at most 3 in progress (saw ${maxInProgress})`);
      t.true(maxInProgress >= 2, 'the budget was used');
      for (const deployment of (await admin.list<Deployment>(DEPLOYMENTS, { namespace: ns })).items) {
        t.is(deployment.metadata.generation! - generations.get(deployment.metadata.name!)!, 1, `${deployment.metadata.name} rolled once`);
      }
      t.is(await operator.metrics.total('customapp_rollouts_total', { trigger: 'ConfigMap', result: 'Succeeded' }), 30);
    },
  );
}
