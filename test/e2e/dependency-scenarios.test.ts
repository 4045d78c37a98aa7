// The seed's scenarios end to end against each target: shared, handed-off, held, restarted and collapsed dependency watches.
import test from 'ava';
import { CONFIG_HASH_ANNOTATION, OPERATOR_NAME, OPERATOR_NAMESPACE, SECRET_HASH_ANNOTATION } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import { CONFIGMAPS, DEPLOYMENTS, SECRETS } from '../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { Deployment } from '../../operator/kube/objects.js';
import { selectedTargets } from '../support/targets.js';
import { conditionReached, NamespaceReads, podAnnotation } from '../support/cluster-reads.js';
import { assertInvariants } from '../support/invariants.js';
import { createAll, eventually, objects, operatorScenario, startTestOperator } from '../support/operator-harness.js';
import { annotationProbe } from '../support/rollout-probe.js';
import { secretHashIn } from '../support/secret-hash.js';

for (const target of selectedTargets()) {
  const scenario = operatorScenario(test, target);
  const latencies: number[] = [];

  const hashOf = async (namespace: string, name: string, key = CONFIG_HASH_ANNOTATION): Promise<string | undefined> =>
    podAnnotation(await new NamespaceReads(scenario.admin, namespace).deployment(name), key);
  const watchedIn = (namespace: string): string[] =>
    scenario.running.operator.dependencies
      .watched()
      .filter((ref) => ref.namespace === namespace)
      .map((ref) => `${ref.kind}/${ref.name}`)
      .sort();
  /** GETs of ConfigMaps and Secrets by the operator: its own count, plus the emulator's when it is the target. */
  const dependencyGets = (): number => {
    const own = scenario.running.requests.filter(
      (sample) => sample.verb === 'get' && (sample.resource === 'configmaps' || sample.resource === 'secrets'),
    ).length;
    const counters = scenario.cluster.emulator?.counters;
    const user = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_NAME}`;
    return (
      own +
      (counters
        ? counters.count({ verb: 'get', resource: 'configmaps', user }) + counters.count({ verb: 'get', resource: 'secrets', user })
        : 0)
    );
  };
  /** Edits a ConfigMap and resolves with the ms until the Deployment carries the new hash. */
  const timedEdit = async (namespace: string, configMap: string, app: string, data: Record<string, string>): Promise<number> => {
    const probe = await annotationProbe(scenario.admin, namespace, app, CONFIG_HASH_ANNOTATION, contentHash({ data }));
    const started = performance.now();
    await scenario.admin.patch(CONFIGMAPS, namespace, configMap, 'merge', { data });
    const ms = (await probe.seen) - started;
    latencies.push(ms);
    return ms;
  };
  /** Waits until the operator has nothing queued or in flight for a while. */
  const quiet = async (): Promise<void> => {
    let since = Date.now();
    await eventually(
      'the operator is idle',
      () => {
        const { queue } = scenario.running.operator.controller;
        if (queue.length > 0 || queue.inFlight > 0) since = Date.now();
        return Date.now() - since > 300;
      },
      30_000,
    );
  };

  test.serial(`[${target}] one CustomApp, one ConfigMap watch; an edit rolls the Deployment with no GET`, async (t) => {
    const ns = 'seed-one';
    await scenario.createNamespace(
      ns,
      objects.configMap(ns, 'one-config', { V: '1' }),
      objects.customApp(ns, 'one', { image: 'example/one:1', configMapName: 'one-config' }),
    );
    await eventually('the Deployment has the hash', async () => (await hashOf(ns, 'one')) === contentHash({ data: { V: '1' } }));
    t.deepEqual(watchedIn(ns), ['ConfigMap/one-config']);
    t.deepEqual(
      scenario.running.operator
        .registry!.streams()
        .filter((stream) => stream.namespace === ns)
        .map((stream) => `${stream.scope} ${stream.name}`),
      ['object one-config'],
    );
    for (let edit = 2; edit <= 6; edit += 1) await timedEdit(ns, 'one-config', 'one', { V: String(edit) });
    t.log(`ConfigMap update → Deployment carries the new hash: ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms`);
    t.is(dependencyGets(), 0);
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(`[${target}] two CustomApps share a ConfigMap; deleting one keeps the watch and the other still rolls`, async (t) => {
    const ns = 'seed-shared';
    const reads = await scenario.createNamespace(
      ns,
      objects.configMap(ns, 'shared', { V: '1' }),
      objects.customApp(ns, 'first', { image: 'example/a:1', configMapName: 'shared' }),
      objects.customApp(ns, 'second', { image: 'example/b:1', configMapName: 'shared' }),
    );
    await eventually('both Deployments exist', async () => (await hashOf(ns, 'first')) && (await hashOf(ns, 'second')));
    t.deepEqual([...(scenario.running.operator.dependencies.owners().get(`ConfigMap/${ns}/shared`) ?? [])].sort(), [
      `${ns}/first`,
      `${ns}/second`,
    ]);
    await scenario.admin.delete(CUSTOM_APPS, ns, 'first');
    await eventually('the first CustomApp is gone', async () => (await reads.app('first')) === undefined);
    t.deepEqual(watchedIn(ns), ['ConfigMap/shared'], 'the watch stays for the second');
    t.deepEqual([...(scenario.running.operator.dependencies.owners().get(`ConfigMap/${ns}/shared`) ?? [])], [`${ns}/second`]);
    await timedEdit(ns, 'shared', 'second', { V: '2' });
    t.is(await hashOf(ns, 'second'), contentHash({ data: { V: '2' } }));
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(
    `[${target}] a reference change hands off: the new watch is used, status follows, the old one is released and no longer rolls`,
    async (t) => {
      const ns = 'seed-handoff';
      const reads = await scenario.createNamespace(
        ns,
        objects.configMap(ns, 'old-config', { V: 'old' }),
        objects.configMap(ns, 'new-config', { V: 'new' }),
        objects.customApp(ns, 'moving', { image: 'example/moving:1', configMapName: 'old-config' }),
      );
      await eventually(
        'rolled out with the old ConfigMap',
        async () => (await hashOf(ns, 'moving')) === contentHash({ data: { V: 'old' } }),
      );
      await scenario.admin.patch(CUSTOM_APPS, ns, 'moving', 'merge', { spec: { configMapName: 'new-config' } });
      const deployment = await eventually('rolled out with the new ConfigMap', async () => {
        const found = await reads.deployment('moving');
        return found?.spec.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] === contentHash({ data: { V: 'new' } })
          ? found
          : undefined;
      });
      t.deepEqual(deployment.spec.template.spec.containers[0]!.envFrom, [{ configMapRef: { name: 'new-config' } }]);
      const status = await eventually('status names the new ConfigMap', async () =>
        (await reads.app('moving'))?.status?.observedConfigMapName === 'new-config' ? (await reads.app('moving'))!.status : undefined,
      );
      t.is(status!.configHash, contentHash({ data: { V: 'new' } }));
      await eventually('only the new ConfigMap is watched', () => watchedIn(ns).join() === 'ConfigMap/new-config');
      const generation = (await reads.deployment('moving'))!.metadata.generation;
      await scenario.admin.patch(CONFIGMAPS, ns, 'old-config', 'merge', { data: { V: 'edited' } });
      await timedEdit(ns, 'new-config', 'moving', { V: 'new-2' });
      t.is((await reads.deployment('moving'))!.metadata.generation, Number(generation) + 1, 'only the edit of the new ConfigMap rolled');
      await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
    },
  );

  test.serial(
    `[${target}] a CustomApp created before its ConfigMap is held with a condition and an Event, and rolls out when it appears`,
    async (t) => {
      const ns = 'seed-held';
      const reads = await scenario.createNamespace(
        ns,
        objects.customApp(ns, 'early', { image: 'example/early:1', configMapName: 'late-config' }),
      );
      const held = await conditionReached(reads, 'early', 'ConfigMapAvailable', 'ConfigMapNotFound');
      t.like(
        held.status!.conditions!.find((condition) => condition.type === 'Ready'),
        { status: 'False', reason: 'RolloutHeld' },
      );
      t.is(await reads.deployment('early'), undefined, 'no Deployment while held');
      const events = await reads.events('early');
      t.truthy(
        events.find(
          (event) => event.reason === 'RolloutHeld' && event.type === 'Warning' && event.message?.includes('"late-config" not found'),
        ),
      );
      const reconcilesBefore = await scenario.running.operator.metrics.total('controller_runtime_reconcile_total');
      await new Promise((done) => setTimeout(done, 500));
      t.is(await scenario.running.operator.metrics.total('controller_runtime_reconcile_total'), reconcilesBefore, 'no polling while held');

      await createAll(scenario.admin, objects.configMap(ns, 'late-config', { V: 'here' }));
      await eventually('the Deployment rolls out', async () => (await hashOf(ns, 'early')) === contentHash({ data: { V: 'here' } }));
      await eventually(
        'Ready is no longer held',
        async () =>
          (await reads.app('early'))?.status?.conditions?.find((condition) => condition.type === 'ConfigMapAvailable')?.status === 'True',
      );
      await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
    },
  );

  test.serial(`[${target}] a Secret change rolls the Deployment, and the Secret's value never reaches the logs`, async (t) => {
    const ns = 'seed-secret';
    const canary = 'CANARY-7f3a9c-do-not-log';
    const reads = await scenario.createNamespace(
      ns,
      objects.secret(ns, 'creds', { PASSWORD: `${canary}-1` }),
      objects.customApp(ns, 'vault', { image: 'example/vault:1', secretName: 'creds' }),
    );
    const first = await eventually('the secret hash is set', () => hashOf(ns, 'vault', SECRET_HASH_ANNOTATION));
    await scenario.admin.patch(SECRETS, ns, 'creds', 'merge', { stringData: { PASSWORD: `${canary}-2` } });
    const second = await eventually('the secret hash changes', async () => {
      const hash = await hashOf(ns, 'vault', SECRET_HASH_ANNOTATION);
      return hash !== first ? hash : undefined;
    });
    t.is(second, await secretHashIn(scenario.admin, ns, 'creds'));
    for (const text of [canary, Buffer.from(`${canary}-1`).toString('base64'), Buffer.from(`${canary}-2`).toString('base64')]) {
      t.false(scenario.running.logs.text().includes(text), `the logs never contain ${text}`);
    }
    const app = await reads.app('vault');
    t.false(JSON.stringify(app).includes(canary));
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(`[${target}] a restarted operator rebuilds the same watches and rolls nothing`, async (t) => {
    await quiet();
    const before = scenario.running.operator.dependencies
      .watched()
      .map((ref) => `${ref.kind}/${ref.namespace}/${ref.name}`)
      .sort();
    const versions = new Map(
      (await scenario.admin.list<Deployment>(DEPLOYMENTS)).items.map((deployment) => [
        `${deployment.metadata.namespace}/${deployment.metadata.name}`,
        deployment.metadata.resourceVersion,
      ]),
    );
    await scenario.running.operator.stop();
    scenario.running = await startTestOperator(scenario.cluster);
    await eventually('the watches are rebuilt', () => scenario.running.operator.dependencies.watched().length === before.length);
    await quiet();
    t.deepEqual(
      scenario.running.operator.dependencies
        .watched()
        .map((ref) => `${ref.kind}/${ref.namespace}/${ref.name}`)
        .sort(),
      before,
    );
    const after = new Map(
      (await scenario.admin.list<Deployment>(DEPLOYMENTS)).items.map((deployment) => [
        `${deployment.metadata.namespace}/${deployment.metadata.name}`,
        deployment.metadata.resourceVersion,
      ]),
    );
    t.deepEqual(after, versions, 'no Deployment was written');
    const writes = scenario.running.requests
      .filter((sample) => !['get', 'list', 'watch'].includes(sample.verb))
      .map((sample) => `${sample.verb} ${sample.resource}/${sample.subresource ?? ''}`);
    t.deepEqual(writes, [], `the restarted operator wrote nothing at all: ${JSON.stringify(scenario.running.logs.find('write'))}`);
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(`[${target}] a restart reconciles each CustomApp of a collapsed namespace once, its refs already synced`, async (t) => {
    const ns = 'seed-restart-once';
    const names = Array.from({ length: 15 }, (_, index) => `once-${index}`);
    await scenario.createNamespace(
      ns,
      ...names.flatMap((name) => [
        objects.configMap(ns, `${name}-config`, { V: name }),
        objects.customApp(ns, name, { image: 'example/once:1', configMapName: `${name}-config` }),
      ]),
    );
    await eventually('every Deployment exists', async () => (await Promise.all(names.map((name) => hashOf(ns, name)))).every(Boolean));
    await quiet();
    await scenario.running.operator.stop();
    scenario.running = await startTestOperator(scenario.cluster);
    await quiet();
    const reconciled = scenario.running.logs
      .find('reconcile.start')
      .map((line) => String(line.key))
      .filter((key) => key.startsWith(`${ns}/`));
    t.deepEqual(reconciled.sort(), names.map((name) => `${ns}/${name}`).sort(), 'each app once, none waiting for its ConfigMap');
    t.deepEqual(
      scenario.running.logs.find('reconcile.end').filter((line) => String(line.key).startsWith(`${ns}/`) && line.result !== 'success'),
      [],
    );
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(`[${target}] a CustomApp deleted while the operator was down is finalized on start, and its watch never leaks`, async (t) => {
    const ns = 'seed-down';
    const reads = await scenario.createNamespace(
      ns,
      objects.configMap(ns, 'down-config', { V: '1' }),
      objects.customApp(ns, 'doomed', { image: 'example/doomed:1', configMapName: 'down-config' }),
    );
    await reads.deploymentCreated('doomed');
    await scenario.running.operator.stop();
    await scenario.admin.delete(CUSTOM_APPS, ns, 'doomed');
    t.truthy((await reads.app('doomed'))?.metadata.deletionTimestamp, 'the finalizer holds it while the operator is down');
    scenario.running = await startTestOperator(scenario.cluster);
    await eventually('the CustomApp is gone', async () => (await reads.app('doomed')) === undefined);
    t.deepEqual(watchedIn(ns), []);
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(
    `[${target}] 1,000 CustomApps in one namespace: at most 10 watch streams, 0 reconciles from unrelated churn, 0 watches after deleting them`,
    async (t) => {
      const ns = 'seed-thousand';
      const count = 1_000;
      await scenario.createNamespace(ns);
      const started = performance.now();
      const creates: Promise<unknown>[] = [];
      for (let index = 0; index < count; index += 1) {
        creates.push(
          createAll(
            scenario.admin,
            objects.configMap(ns, `cfg-${index}`, { I: String(index) }),
            objects.customApp(ns, `app-${index}`, { image: 'example/many:1', configMapName: `cfg-${index}` }),
          ),
        );
        if (creates.length === 50) await Promise.all(creates.splice(0));
      }
      await Promise.all(creates);
      await eventually(
        'every CustomApp has its Deployment',
        async () => {
          const apps = await scenario.admin.list<CustomApp>(CUSTOM_APPS, { namespace: ns });
          return apps.items.filter((app) => app.status?.observedConfigMapName).length === count;
        },
        120_000,
        250,
      );
      t.log(`1,000 CustomApps converged ${((performance.now() - started) / 1000).toFixed(1)} s after the first create`);
      const streams = scenario.running.operator.registry!.streams().filter((stream) => stream.namespace === ns);
      t.true(streams.length <= 10, `${streams.length} streams`);
      t.is(scenario.running.operator.dependencies.watched().filter((ref) => ref.namespace === ns).length, count);

      await quiet();
      // What the churn could queue: the apps' own Deployments may still get status writes from the controller-manager
      // (a legitimate trigger); a ConfigMap, Secret or CustomApp trigger in this window would be the churn's.
      const churnStart = scenario.running.logs.lines.length;
      for (let index = 0; index < 100; index += 1)
        await scenario.admin.create(CONFIGMAPS, ns, objects.configMap(ns, `unrelated-${index}`, { X: '1' }));
      for (let index = 0; index < 100; index += 1)
        await scenario.admin.patch(CONFIGMAPS, ns, `unrelated-${index}`, 'merge', { data: { X: '2' } });
      await new Promise((done) => setTimeout(done, 500));
      const queued = scenario.running.logs.lines.slice(churnStart).filter((line) => line.msg === 'enqueue' || line.msg === 'trigger');
      const fromChurn = queued
        .map((line) => String(line.msg === 'enqueue' ? line.reason : line.object))
        .filter((reason) => !/^(deployment|service) /.test(reason));
      t.deepEqual(fromChurn, [], 'unrelated churn triggers and queues nothing');
      t.false(
        scenario.running.operator.dependencies.watched().some((ref) => ref.name.startsWith('unrelated-')),
        'only referenced ConfigMaps are kept',
      );
      await timedEdit(ns, 'cfg-500', 'app-500', { I: 'changed' });

      const deletes: Promise<unknown>[] = [];
      for (let index = 0; index < count; index += 1) {
        deletes.push(scenario.admin.delete(CUSTOM_APPS, ns, `app-${index}`));
        if (deletes.length === 50) await Promise.all(deletes.splice(0));
      }
      await Promise.all(deletes);
      await eventually(
        'every watch in the namespace is released',
        () => watchedIn(ns).length === 0 && scenario.running.operator.registry!.streams().every((stream) => stream.namespace !== ns),
        120_000,
        100,
      );
      t.is(dependencyGets(), 0, 'no GET of a ConfigMap or Secret in any scenario');
      await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin, { timeoutMs: 60_000 });
      t.log(
        `ConfigMap update → Deployment patch seen by a watcher, over ${latencies.length} edits: p50 ${percentile(latencies, 0.5).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
      );
    },
  );
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}
