// End to end against each target: existing Deployments, StatefulSets and DaemonSets that opt in by annotation roll on
// the ConfigMaps and Secrets they use; opting in, a restart and un-annotated workloads roll nothing; opting out releases;
// a scale after our rollout ended takes no slot of the budget.
import test from 'ava';
import {
  LAST_ROLLOUT_ANNOTATION,
  RUNNING_HASHES_ANNOTATION,
  TEMPLATE_HASHES_ANNOTATION,
  type WorkloadResource,
} from '../../api/workload.js';
import { contentHash, type HashableContent } from '../../operator/dependencies/content-hash.js';
import { keyDigests, keysHash } from '../../operator/dependencies/key-digests.js';
import { refKey } from '../../operator/dependencies/source.js';
import { endedRolloutStatus } from '../../operator/governance/testing/deployment-status.js';
import type { CoreEvent, Deployment, KubeObject, PodTemplate, StatefulSet } from '../../operator/kube/objects.js';
import { CONFIGMAPS, DEPLOYMENTS, EVENTS, SECRETS } from '../../operator/kube/resources.js';
import { decodeHashes } from '../../operator/podtemplate/hash-annotation.js';
import { lastWorkloadRollout } from '../../operator/workload/last-rollout.js';
import { workloadProgress } from '../../operator/workload/progress.js';
import { WORKLOAD_RESOURCES, type Workload, type WorkloadKind } from '../../operator/workload/workload.js';
import { selectedTargets } from '../support/targets.js';
import { assertInvariants } from '../support/invariants.js';
import {
  createAll,
  createNamespace,
  eventually,
  getIfExists,
  objects,
  operatorScenario,
  startTestOperator,
} from '../support/operator-harness.js';
import { secretHashIn } from '../support/secret-hash.js';

/** The kinds each target serves (the emulator serves StatefulSets and DaemonSets too: emulator/README.md). */
const KINDS: readonly WorkloadKind[] = ['Deployment', 'StatefulSet', 'DaemonSet'];
const SERVED: readonly WorkloadResource[] = ['deployments', 'statefulsets', 'daemonsets'];
const AUTO = { 'reloader.stakater.com/auto': 'true' };

const IMAGE = 'nginxinc/nginx-unprivileged:1.27-alpine';

/**
 * A workload of `kind` whose pod template uses ConfigMap `<name>-config` (envFrom) and Secret `<name>-secret` (a
 * volume), or `spec` when given.
 */
function workload(
  kind: WorkloadKind,
  namespace: string,
  name: string,
  annotations: Record<string, string>,
  spec: PodTemplate['spec'] = {
    containers: [{ name: 'app', image: IMAGE, envFrom: [{ configMapRef: { name: `${name}-config` } }] }],
    volumes: [{ name: 'secret', secret: { secretName: `${name}-secret` } }],
  },
): Workload {
  const labels = { app: name };
  const template: PodTemplate = { metadata: { labels }, spec };
  const resource = WORKLOAD_RESOURCES[kind];
  return {
    apiVersion: `${resource.group}/${resource.version}`,
    kind,
    metadata: { name, namespace, annotations },
    spec: { selector: { matchLabels: labels }, template, ...(kind === 'StatefulSet' ? { serviceName: name } : {}) },
  } as Workload;
}

for (const target of selectedTargets()) {
  const scenario = operatorScenario(test, target, undefined, { workloads: SERVED });

  const stored = async (kind: WorkloadKind, namespace: string, name: string): Promise<Workload> =>
    (await getIfExists<Workload>(scenario.admin, WORKLOAD_RESOURCES[kind], namespace, name))!;
  const templateHashes = async (kind: WorkloadKind, namespace: string, name: string) =>
    decodeHashes((await stored(kind, namespace, name)).spec.template.metadata?.annotations?.[TEMPLATE_HASHES_ANNOTATION]);
  const recorded = async (kind: WorkloadKind, namespace: string, name: string) =>
    decodeHashes((await stored(kind, namespace, name)).metadata.annotations?.[RUNNING_HASHES_ANNOTATION]);
  const eventsOf = async (namespace: string, name: string): Promise<string[]> =>
    (await scenario.admin.list<CoreEvent>(EVENTS, { namespace })).items
      .filter((event) => event.involvedObject.name === name)
      .map((event) => `${event.involvedObject.kind} ${event.reason}`);
  const create = async (kind: WorkloadKind, object: Workload): Promise<void> => {
    await scenario.admin.create(WORKLOAD_RESOURCES[kind], object.metadata.namespace, object);
  };
  const annotate = async (
    kind: WorkloadKind,
    namespace: string,
    name: string,
    annotations: Record<string, string | null>,
  ): Promise<void> => {
    await scenario.admin.patch(WORKLOAD_RESOURCES[kind], namespace, name, 'merge', { metadata: { annotations } });
  };
  /**
   * The RolloutTriggered Events of `name`, once there are at least `count`: an Event is posted after the write that
   * rolled, off the reconcile, so a rollout can be seen before its Event.
   */
  const triggered = (namespace: string, name: string, count: number): Promise<string[]> =>
    eventually(`${count} RolloutTriggered Events of ${name}`, async () => {
      const events = (await eventsOf(namespace, name)).filter((event) => event.endsWith('RolloutTriggered'));
      return events.length >= count ? events : undefined;
    });
  const edit = (resource: typeof CONFIGMAPS, namespace: string, name: string, data: Record<string, string>): Promise<KubeObject> =>
    scenario.admin.patch(resource, namespace, name, 'merge', { data });
  /** The pod template's `app.example.com/dependency-hashes` once it names `hash` for `key`. */
  const rolledTo = (kind: WorkloadKind, namespace: string, name: string, key: string, hash: string) =>
    eventually(
      `${kind} ${name} rolled to ${key} ${hash.slice(0, 12)}`,
      async () => (await templateHashes(kind, namespace, name))?.get(key) === hash,
    );
  const withContent = async (namespace: string, name: string): Promise<void> => {
    await createAll(
      scenario.admin,
      objects.configMap(namespace, `${name}-config`, { GREETING: 'hello' }),
      objects.secret(namespace, `${name}-secret`, { TOKEN: 'one' }),
    );
  };
  const watchedIn = (namespace: string): string[] =>
    scenario.running.operator.dependencies
      .watched()
      .filter((ref) => ref.namespace === namespace)
      .map(refKey)
      .sort();

  // First: no rollout of another test occupies a slot yet (none ever completes on the API targets).
  test.serial(`[${target}] the rollout budget is shared with CustomApps`, async (t) => {
    const ns = 'wl-budget';
    await createNamespace(scenario.admin, ns);
    await scenario.running.operator.stop();
    scenario.running = await startTestOperator(scenario.cluster, {
      workloads: SERVED,
      rollouts: { maxConcurrentRollouts: 1, flapThreshold: 0 },
    });
    await createAll(
      scenario.admin,
      objects.configMap(ns, 'shared', { V: '1' }),
      objects.customApp(ns, 'app', { image: 'example/app:1', configMapName: 'shared' }),
    );
    const appDeployment = await eventually('the CustomApp has its Deployment', () =>
      getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'app'),
    );
    const complete = async (): Promise<void> => {
      const current = (await getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'app'))!;
      const status = endedRolloutStatus(current, 'Succeeded', new Date().toISOString());
      await scenario.admin.patch(DEPLOYMENTS, ns, 'app', 'merge', { status }, { subresource: 'status' });
    };
    await complete();
    const shared = workload('StatefulSet', ns, 'web', { 'configmap.reloader.stakater.com/reload': 'shared' });
    await scenario.admin.create(WORKLOAD_RESOURCES.StatefulSet, ns, shared);
    await eventually('the baseline is recorded', () => recorded('StatefulSet', ns, 'web'));
    t.truthy(appDeployment);

    await edit(CONFIGMAPS, ns, 'shared', { V: '2' });
    const queued = await eventually('one of the two rolls, the other is queued', async () => {
      const events = [...(await eventsOf(ns, 'web')), ...(await eventsOf(ns, 'app'))];
      return events.some((event) => event.endsWith('RolloutQueued')) ? events : undefined;
    });
    const workloadRolled = (await templateHashes('StatefulSet', ns, 'web')) !== undefined;
    t.true(queued.includes(workloadRolled ? 'CustomApp RolloutQueued' : 'StatefulSet RolloutQueued'), queued.join(', '));
    if (!workloadRolled) {
      await complete();
      await rolledTo('StatefulSet', ns, 'web', 'ConfigMap/shared', contentHash({ data: { V: '2' } }));
    }
    await scenario.running.operator.stop();
    scenario.running = await startTestOperator(scenario.cluster, { workloads: SERVED });
  });

  for (const kind of KINDS) {
    test.serial(
      `[${target}] ${kind}: opting in rolls nothing; an edit of its ConfigMap, then of its Secret, rolls it once each`,
      async (t) => {
        const ns = `wl-${kind.toLowerCase()}`;
        await createNamespace(scenario.admin, ns);
        await withContent(ns, 'web');
        await create(kind, workload(kind, ns, 'web', AUTO));
        const baseline = await eventually('the baseline is recorded', () => recorded(kind, ns, 'web'));
        t.deepEqual([...baseline.keys()], ['ConfigMap/web-config', 'Secret/web-secret']);
        t.is(baseline.get('ConfigMap/web-config'), contentHash({ data: { GREETING: 'hello' } }));
        t.is(baseline.get('Secret/web-secret'), await secretHashIn(scenario.admin, ns, 'web-secret'));
        t.is(await templateHashes(kind, ns, 'web'), undefined, 'opting in rolled nothing');
        t.deepEqual(watchedIn(ns), [`ConfigMap/${ns}/web-config`, `Secret/${ns}/web-secret`]);

        await edit(CONFIGMAPS, ns, 'web-config', { GREETING: 'bonjour' });
        await rolledTo(kind, ns, 'web', 'ConfigMap/web-config', contentHash({ data: { GREETING: 'bonjour' } }));
        const afterConfig = await stored(kind, ns, 'web');
        t.like(JSON.parse(afterConfig.metadata.annotations![LAST_ROLLOUT_ANNOTATION]!), {
          trigger: 'ConfigMap',
          result: 'InProgress',
          // The generation the guarded patch made, as the API server counts it: what tells this rollout's end from a scale's.
          templateGeneration: afterConfig.metadata.generation,
        });

        await edit(SECRETS, ns, 'web-secret', { TOKEN: Buffer.from('two').toString('base64') });
        const secretHash = await eventually('the Secret is re-read', async () => {
          const hash = await secretHashIn(scenario.admin, ns, 'web-secret');
          return hash !== baseline.get('Secret/web-secret') ? hash : undefined;
        });
        await rolledTo(kind, ns, 'web', 'Secret/web-secret', secretHash);
        t.deepEqual(await triggered(ns, 'web', 2), [`${kind} RolloutTriggered`, `${kind} RolloutTriggered`]);
        await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
      },
    );
  }

  test.serial(
    `[${target}] an un-annotated workload is untouched and unwatched; annotated afterwards, the next edit rolls it`,
    async (t) => {
      const ns = 'wl-plain';
      await createNamespace(scenario.admin, ns);
      await withContent(ns, 'plain');
      await create('Deployment', workload('Deployment', ns, 'plain', {}));
      const before = (await stored('Deployment', ns, 'plain')).metadata.resourceVersion;
      await edit(CONFIGMAPS, ns, 'plain-config', { GREETING: 'changed' });
      // An annotated neighbour, created after, is served: once it is, the operator has seen both.
      await withContent(ns, 'marker');
      await create('Deployment', workload('Deployment', ns, 'marker', AUTO));
      await eventually('the neighbour is served', () => recorded('Deployment', ns, 'marker'));
      t.is((await stored('Deployment', ns, 'plain')).metadata.resourceVersion, before, 'never written');
      t.deepEqual(watchedIn(ns), [`ConfigMap/${ns}/marker-config`, `Secret/${ns}/marker-secret`]);

      // Annotated afterwards (`kubectl annotate`): the content then is its baseline, and the next edit rolls it.
      await annotate('Deployment', ns, 'plain', AUTO);
      const baseline = await eventually('the baseline is recorded', () => recorded('Deployment', ns, 'plain'));
      t.is(baseline.get('ConfigMap/plain-config'), contentHash({ data: { GREETING: 'changed' } }));
      t.is(await templateHashes('Deployment', ns, 'plain'), undefined, 'annotating rolled nothing');
      await edit(CONFIGMAPS, ns, 'plain-config', { GREETING: 'next' });
      await rolledTo('Deployment', ns, 'plain', 'ConfigMap/plain-config', contentHash({ data: { GREETING: 'next' } }));
    },
  );

  test.serial(`[${target}] opting out releases the watches: the streams go back to their baseline`, async (t) => {
    const ns = 'wl-optout';
    await createNamespace(scenario.admin, ns);
    const streams = (): number => scenario.running.operator.registry!.streams().filter((stream) => stream.namespace === ns).length;
    t.is(streams(), 0);
    await withContent(ns, 'web');
    await create('Deployment', workload('Deployment', ns, 'web', AUTO));
    await eventually('watched', () => streams() === 2);
    await annotate('Deployment', ns, 'web', { 'reloader.stakater.com/auto': null });
    await eventually('released: streams back to the baseline', () => streams() === 0);
    await eventually('the record is removed', async () => (await recorded('Deployment', ns, 'web')) === undefined);
    t.deepEqual(watchedIn(ns), []);
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(`[${target}] a deleted workload's watches are released (no finalizer of ours)`, async (t) => {
    const ns = 'wl-delete';
    await createNamespace(scenario.admin, ns);
    await withContent(ns, 'web');
    await create('StatefulSet', workload('StatefulSet', ns, 'web', AUTO));
    await eventually('watched', () => watchedIn(ns).length === 2);
    t.is((await stored('StatefulSet', ns, 'web')).metadata.finalizers, undefined);
    await scenario.admin.delete(WORKLOAD_RESOURCES.StatefulSet, ns, 'web');
    await eventually('released', () => watchedIn(ns).length === 0);
    t.false(scenario.running.operator.dependencies.owners().has(refKey({ kind: 'ConfigMap', namespace: ns, name: 'web-config' })));
  });

  test.serial(
    `[${target}] every reference form rolls: init container envFrom, env valueFrom of a ConfigMap and of a Secret, a configMap volume, projected sources`,
    async (t) => {
      const ns = 'wl-forms';
      await createNamespace(scenario.admin, ns);
      const names = ['init-config', 'env-config', 'vol-config', 'proj-config'];
      await createAll(
        scenario.admin,
        ...names.map((name) => objects.configMap(ns, name, { A: 'one' })),
        ...['env-secret', 'proj-secret'].map((name) => objects.secret(ns, name, { A: 'one' })),
      );
      const forms: PodTemplate = {
        metadata: { labels: { app: 'forms' } },
        spec: {
          initContainers: [{ name: 'init', image: 'busybox', envFrom: [{ configMapRef: { name: 'init-config' } }] }],
          containers: [
            {
              name: 'app',
              image: 'busybox',
              env: [
                { name: 'A', valueFrom: { configMapKeyRef: { name: 'env-config', key: 'A' } } },
                { name: 'S', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'A' } } },
              ],
            },
          ],
          volumes: [
            { name: 'vol', configMap: { name: 'vol-config' } },
            { name: 'proj', projected: { sources: [{ configMap: { name: 'proj-config' } }, { secret: { name: 'proj-secret' } }] } },
          ],
        },
      };
      const base = workload('Deployment', ns, 'forms', { 'app.example.com/reload': 'true' });
      await create('Deployment', {
        ...base,
        spec: { ...base.spec, selector: { matchLabels: { app: 'forms' } }, template: forms },
      } as Workload);
      const baseline = await eventually('the baseline is recorded', () => recorded('Deployment', ns, 'forms'));
      const keys = [...names.map((name) => `ConfigMap/${name}`), 'Secret/env-secret', 'Secret/proj-secret'].sort();
      t.deepEqual([...baseline.keys()].sort(), keys);
      t.is(await templateHashes('Deployment', ns, 'forms'), undefined, 'opting in rolled nothing');

      // The env valueFrom uses name their key: only that key's content is hashed (key-level triggers).
      const keyedHashIn = async (kind: 'ConfigMap' | 'Secret', name: string): Promise<string> => {
        const object = await scenario.admin.get<KubeObject & HashableContent>(kind === 'ConfigMap' ? CONFIGMAPS : SECRETS, ns, name);
        return keysHash(kind, keyDigests(kind, object.metadata.uid, object), ['A']);
      };
      for (const name of names) {
        await edit(CONFIGMAPS, ns, name, { A: 'two' });
        const hash = name === 'env-config' ? await keyedHashIn('ConfigMap', name) : contentHash({ data: { A: 'two' } });
        await rolledTo('Deployment', ns, 'forms', `ConfigMap/${name}`, hash);
      }
      for (const name of ['env-secret', 'proj-secret']) {
        await edit(SECRETS, ns, name, { A: Buffer.from('two').toString('base64') });
        const hash = await eventually(`${name} is re-read`, async () => {
          const now = name === 'env-secret' ? await keyedHashIn('Secret', name) : await secretHashIn(scenario.admin, ns, name);
          return now !== baseline.get(`Secret/${name}`) ? now : undefined;
        });
        await rolledTo('Deployment', ns, 'forms', `Secret/${name}`, hash);
      }
      t.is((await triggered(ns, 'forms', keys.length)).length, keys.length, 'one rollout per edit');
    },
  );

  test.serial(`[${target}] Reloader's secret.reloader.stakater.com/reload: only the Secret it names is watched and rolls`, async (t) => {
    const ns = 'wl-reloader-secret';
    await createNamespace(scenario.admin, ns);
    await withContent(ns, 'web');
    await createAll(scenario.admin, objects.secret(ns, 'listed', { TOKEN: 'one' }));
    const base = workload('StatefulSet', ns, 'web', { 'secret.reloader.stakater.com/reload': 'listed' });
    const template = base.spec.template;
    const volumes = [...(template.spec?.volumes ?? []), { name: 'listed', secret: { secretName: 'listed' } }];
    await create('StatefulSet', {
      ...base,
      spec: { ...base.spec, template: { ...template, spec: { ...template.spec!, volumes } } },
    } as Workload);
    const baseline = await eventually('the baseline is recorded', () => recorded('StatefulSet', ns, 'web'));
    t.deepEqual(watchedIn(ns), [`Secret/${ns}/listed`]);

    // An edit of the Secret and of the ConfigMap it uses without listing them, then of the listed one: one rollout, of it.
    await edit(SECRETS, ns, 'web-secret', { TOKEN: Buffer.from('two').toString('base64') });
    await edit(CONFIGMAPS, ns, 'web-config', { GREETING: 'unlisted' });
    await edit(SECRETS, ns, 'listed', { TOKEN: Buffer.from('two').toString('base64') });
    const hash = await eventually('listed is re-read', async () => {
      const now = await secretHashIn(scenario.admin, ns, 'listed');
      return now !== baseline.get('Secret/listed') ? now : undefined;
    });
    await rolledTo('StatefulSet', ns, 'web', 'Secret/listed', hash);
    t.deepEqual([...(await templateHashes('StatefulSet', ns, 'web'))!.keys()], ['Secret/listed']);
    t.deepEqual(await triggered(ns, 'web', 1), ['StatefulSet RolloutTriggered']);
  });

  test.serial(`[${target}] an optional reference missing at opt-in is recorded absent; its creation later rolls`, async (t) => {
    const ns = 'wl-optional';
    await createNamespace(scenario.admin, ns);
    await createAll(scenario.admin, objects.configMap(ns, 'web-config', { GREETING: 'hello' }));
    const base = workload('DaemonSet', ns, 'web', AUTO);
    const template = base.spec.template;
    const volumes = [{ name: 'secret', secret: { secretName: 'web-secret', optional: true } }];
    await create('DaemonSet', {
      ...base,
      spec: { ...base.spec, template: { ...template, spec: { ...template.spec!, volumes } } },
    } as Workload);
    const baseline = await eventually('the baseline is recorded', () => recorded('DaemonSet', ns, 'web'));
    t.is(baseline.get('Secret/web-secret'), null, 'absent, and no Warning: it is optional');
    t.deepEqual(
      (await eventsOf(ns, 'web')).filter((event) => event.endsWith('ReferenceMissing')),
      [],
    );
    await createAll(scenario.admin, objects.secret(ns, 'web-secret', { TOKEN: 'later' }));
    await rolledTo('DaemonSet', ns, 'web', 'Secret/web-secret', await secretHashIn(scenario.admin, ns, 'web-secret'));
  });

  test.serial(
    `[${target}] bad annotations (an unknown kind, an empty name, 10k names): a Warning Event each, no crash, the rest served`,
    async (t) => {
      const ns = 'wl-bad';
      await createNamespace(scenario.admin, ns);
      await withContent(ns, 'web');
      await create(
        'Deployment',
        workload('Deployment', ns, 'web', { 'app.example.com/reload-configmaps': 'web-config,,x/y', 'app.example.com/reload-jobs': 'a' }),
      );
      const tenThousand = Array.from({ length: 10_000 }, (_, i) => `s${i}`).join(',');
      await create('Deployment', workload('Deployment', ns, 'huge', { 'app.example.com/reload-secrets': tenThousand }));
      const warnings = async (name: string): Promise<string[]> =>
        (await scenario.admin.list<CoreEvent>(EVENTS, { namespace: ns })).items
          .filter((event) => event.involvedObject.name === name && event.reason === 'ReloadAnnotationInvalid' && event.type === 'Warning')
          .map((event) => event.message ?? '');
      const [web] = await eventually('the Warning on web', async () => ((await warnings('web')).length > 0 ? warnings('web') : undefined));
      t.regex(web!, /app\.example\.com\/reload-jobs is unknown/);
      t.regex(web!, /an empty name in "web-config,,x\/y"/);
      t.regex(web!, /"x\/y" is not a DNS-1123 name/);
      const [huge] = await eventually('the Warning on huge', async () =>
        (await warnings('huge')).length > 0 ? warnings('huge') : undefined,
      );
      t.regex(huge!, /10000 names, more than 256; the list is ignored/);
      t.true(huge!.length < 1_024, `the Event quotes a count, not the names (${huge!.length} characters)`);

      // Served as if the bad parts were absent: web watches its one valid name, huge nothing; and the operator serves on.
      await eventually('web is served', () => recorded('Deployment', ns, 'web'));
      t.deepEqual(watchedIn(ns), [`ConfigMap/${ns}/web-config`]);
      await edit(CONFIGMAPS, ns, 'web-config', { GREETING: 'still served' });
      await rolledTo('Deployment', ns, 'web', 'ConfigMap/web-config', contentHash({ data: { GREETING: 'still served' } }));
      t.is(await recorded('Deployment', ns, 'huge'), undefined);
      t.is((await warnings('huge')).length, 1, 'one Warning, not one per reconcile');
      await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
    },
  );

  test.serial(`[${target}] key-level triggers: an unlisted key changes: no write at all; a listed key rolls it`, async (t) => {
    const ns = 'wl-keys';
    await createNamespace(scenario.admin, ns);
    await createAll(scenario.admin, objects.configMap(ns, 'shared', { A: '1', B: '1' }));
    // The Deployment reads key A alone; a StatefulSet beside it takes the whole ConfigMap, so that its rollout says the
    // operator has seen an edit of B.
    const keyed = workload('Deployment', ns, 'keyed', AUTO, {
      containers: [{ name: 'app', image: IMAGE, env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'shared', key: 'A' } } }] }],
    });
    const whole = workload('StatefulSet', ns, 'whole', AUTO, {
      containers: [{ name: 'app', image: IMAGE, envFrom: [{ configMapRef: { name: 'shared' } }] }],
    });
    await create('Deployment', keyed);
    await create('StatefulSet', whole);
    await eventually(
      'both baselines are recorded',
      async () => (await recorded('Deployment', ns, 'keyed')) && recorded('StatefulSet', ns, 'whole'),
    );
    // Writes the API server accepted: a reconcile of the baseline still in flight may meet a 409 (its cache older than
    // the baseline's write), which changes nothing; any write that would roll is retried until it is accepted.
    const writes = (): number =>
      scenario.running.requests.filter(
        (sample) =>
          sample.namespace === ns &&
          sample.resource === 'deployments.apps' &&
          !['get', 'list', 'watch'].includes(sample.verb) &&
          sample.code < 300,
      ).length;
    const before = writes();
    const resourceVersion = (await stored('Deployment', ns, 'keyed')).metadata.resourceVersion;

    await edit(CONFIGMAPS, ns, 'shared', { B: '2' });
    await rolledTo('StatefulSet', ns, 'whole', 'ConfigMap/shared', contentHash({ data: { A: '1', B: '2' } }));
    t.is(writes(), before, 'B is not read by the Deployment: no request writes it');
    t.is((await stored('Deployment', ns, 'keyed')).metadata.resourceVersion, resourceVersion);

    await edit(CONFIGMAPS, ns, 'shared', { A: '2' });
    await eventually('the Deployment rolls on A', async () => (await templateHashes('Deployment', ns, 'keyed'))?.has('ConfigMap/shared'));
    // The operator counts a request when it has read the answer, which may be after the test has seen the rollout.
    await eventually("the rollout's write is counted", () => writes() > before);
    t.is(writes(), before + 1, 'one write: the rollout');
    t.like(JSON.parse((await stored('Deployment', ns, 'keyed')).metadata.annotations![LAST_ROLLOUT_ANNOTATION]!), {
      trigger: 'ConfigMap',
      changes: [{ kind: 'ConfigMap', name: 'shared' }],
    });
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(
    `[${target}] a StatefulSet scaled after our rollout completed, before its end was recorded: after a restart it takes no slot`,
    async (t) => {
      const ns = 'wl-scale';
      const options = { workloads: SERVED, namespaces: [ns], rollouts: { maxConcurrentRollouts: 1, flapThreshold: 0 } };
      await createNamespace(scenario.admin, ns);
      await createAll(scenario.admin, objects.configMap(ns, 'shared', { V: '1' }), objects.configMap(ns, 'other', { V: '1' }));
      const reading = (configMap: string): PodTemplate['spec'] => ({
        containers: [{ name: 'app', image: IMAGE, envFrom: [{ configMapRef: { name: configMap } }] }],
      });
      await scenario.running.operator.stop();
      try {
        scenario.running = await startTestOperator(scenario.cluster, options);
        await create('StatefulSet', workload('StatefulSet', ns, 'scaled', AUTO, reading('shared')));
        await create('Deployment', workload('Deployment', ns, 'next', AUTO, reading('other')));
        for (const [kind, name] of [
          ['StatefulSet', 'scaled'],
          ['Deployment', 'next'],
        ] as const)
          await eventually(`${name}'s baseline is recorded`, () => recorded(kind, ns, name));
        await edit(CONFIGMAPS, ns, 'shared', { V: '2' });
        await rolledTo('StatefulSet', ns, 'scaled', 'ConfigMap/shared', contentHash({ data: { V: '2' } }));
        await scenario.running.operator.stop();

        // While no operator runs: the StatefulSet controller completes our rollout, then a scale it has not observed.
        const rolled = await stored('StatefulSet', ns, 'scaled');
        const revision = `scaled-${rolled.metadata.generation}`;
        const status = { observedGeneration: rolled.metadata.generation, replicas: 1, readyReplicas: 1, updatedReplicas: 1 };
        await scenario.admin.patch(
          WORKLOAD_RESOURCES.StatefulSet,
          ns,
          'scaled',
          'merge',
          { status: { ...status, currentReplicas: 1, currentRevision: revision, updateRevision: revision } },
          { subresource: 'status' },
        );
        await scenario.cluster.kubectl(['-n', ns, 'scale', 'statefulset/scaled', '--replicas=3']);
        const scaled = await stored('StatefulSet', ns, 'scaled');
        t.is(workloadProgress('StatefulSet', scaled).phase, 'InProgress', "kubectl's rules read the scale as a rollout");
        t.is(lastWorkloadRollout(scaled)?.result, 'InProgress', 'the end is not recorded');

        scenario.running = await startTestOperator(scenario.cluster, options);
        t.like(scenario.running.logs.find('rollout.rebuilt')[0], { inProgress: 0 }, 'the scaled StatefulSet takes no slot');
        await eventually(
          'its last-rollout records the end',
          async () => lastWorkloadRollout(await stored('StatefulSet', ns, 'scaled'))?.result === 'Succeeded',
        );
        await edit(CONFIGMAPS, ns, 'other', { V: '2' });
        await rolledTo('Deployment', ns, 'next', 'ConfigMap/other', contentHash({ data: { V: '2' } }));
        t.is(((await stored('StatefulSet', ns, 'scaled')) as StatefulSet).spec.replicas, 3, "the scale is the user's");
      } finally {
        await scenario.running.operator.stop();
        scenario.running = await startTestOperator(scenario.cluster, { workloads: SERVED });
      }
    },
  );

  test.serial(`[${target}] a restart of the operator rolls nothing; an edit made while it was down rolls once`, async (t) => {
    const ns = 'wl-restart';
    await createNamespace(scenario.admin, ns);
    await withContent(ns, 'web');
    await create('DaemonSet', workload('DaemonSet', ns, 'web', AUTO));
    await eventually('the baseline is recorded', () => recorded('DaemonSet', ns, 'web'));
    const before = (await stored('DaemonSet', ns, 'web')).metadata.resourceVersion;

    await scenario.running.operator.stop();
    scenario.running = await startTestOperator(scenario.cluster, { workloads: SERVED });
    await eventually('watched again', () => watchedIn(ns).length === 2);
    t.is((await stored('DaemonSet', ns, 'web')).metadata.resourceVersion, before, 'the restart wrote nothing');

    await scenario.running.operator.stop();
    await edit(CONFIGMAPS, ns, 'web-config', { GREETING: 'while down' });
    scenario.running = await startTestOperator(scenario.cluster, { workloads: SERVED });
    await rolledTo('DaemonSet', ns, 'web', 'ConfigMap/web-config', contentHash({ data: { GREETING: 'while down' } }));
    t.deepEqual(await triggered(ns, 'web', 1), ['DaemonSet RolloutTriggered']);
  });
}
