// End to end against each target: a CustomApp listing several ConfigMaps and Secrets, as env or files, rolled by their listed keys alone.
import test from 'ava';
import { MAX_PROJECTED } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { ApiError } from '../../operator/kube/errors.js';
import type { CoreEvent } from '../../operator/kube/objects.js';
import { CONFIGMAPS, EVENTS, SECRETS } from '../../operator/kube/resources.js';
import { selectedTargets } from '../support/targets.js';
import { createAll, eventually, objects, operatorScenario } from '../support/operator-harness.js';

const SPEC: CustomApp['spec'] = {
  image: 'example/app:1',
  configMaps: [
    { name: 'web', keys: ['MODE'] },
    { name: 'files', mountPath: '/etc/app', keys: ['app.yaml'] },
    { name: 'absent', optional: true },
  ],
  secrets: [{ name: 'db', keys: ['PASSWORD'] }],
};

for (const target of selectedTargets()) {
  const scenario = operatorScenario(test, target);

  test.serial(
    `[${target}] listed objects: env and files; an unlisted key rolls nothing, a listed key rolls with the object named`,
    async (t) => {
      const ns = 'multiref';
      const reads = await scenario.createNamespace(
        ns,
        objects.configMap(ns, 'web', { MODE: 'a', OTHER: '1' }),
        objects.configMap(ns, 'files', { 'app.yaml': 'x: 1', 'other.yaml': 'y: 1' }),
        objects.secret(ns, 'db', { PASSWORD: 'p', USER: 'u' }),
        objects.customApp(ns, 'app', SPEC),
      );
      const observed = await eventually('the status lists what the Deployment runs with', async () => {
        const app = await reads.app('app');
        return app?.status?.observedSecrets ? app : undefined;
      });
      t.deepEqual(
        observed.status?.observedConfigMaps?.map((each) => `${each.name}${each.hash ? '' : ' (missing)'}`),
        ['absent (missing)', 'files', 'web'],
      );
      t.is(
        observed.status?.conditions?.find((each) => each.type === 'Ready')?.reason,
        'RolloutInProgress',
        'a missing optional ref is fine',
      );
      const deployment = (await reads.deployment('app'))!;
      const container = deployment.spec.template.spec.containers[0]!;
      t.deepEqual(container.envFrom, [{ configMapRef: { name: 'absent', optional: true } }]);
      t.deepEqual(container.env, [
        { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'web', key: 'MODE', optional: false } } },
        { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'PASSWORD', optional: false } } },
      ]);
      t.like(deployment.spec.template.spec.volumes?.[0], {
        name: 'configmap-0',
        configMap: { name: 'files', items: [{ key: 'app.yaml', path: 'app.yaml' }] },
      });
      t.deepEqual(container.volumeMounts, [{ name: 'configmap-0', mountPath: '/etc/app', readOnly: true }]);

      const writes = () =>
        scenario.running.requests.filter((sample) => sample.namespace === ns && !['get', 'list', 'watch'].includes(sample.verb)).length;
      const before = writes();
      const unlisted = await scenario.admin.patch(CONFIGMAPS, ns, 'files', 'merge', { data: { 'other.yaml': 'y: 2' } });
      await scenario.admin.patch(CONFIGMAPS, ns, 'web', 'merge', { data: { OTHER: '2' } });
      await scenario.admin.patch(SECRETS, ns, 'db', 'merge', { stringData: { USER: 'v' } });
      // The registry has seen the unlisted edits (the whole object's state moved) and emitted nothing for the keyed refs.
      await eventually('the registry has seen the unlisted edit', async () => {
        const state = await scenario.running.operator.dependencies.state({ kind: 'ConfigMap', namespace: ns, name: 'files' });
        return state?.exists && state.resourceVersion === unlisted.metadata.resourceVersion ? state : undefined;
      });
      t.is(writes(), before, 'an unlisted key rolls nothing and writes nothing');

      await scenario.admin.patch(CONFIGMAPS, ns, 'files', 'merge', { data: { 'app.yaml': 'x: 2' } });
      const rolled = await eventually('the listed key rolls the app', async () => {
        const app = await reads.app('app');
        return app?.status?.lastRollout?.trigger === 'ConfigMap' ? app : undefined;
      });
      t.like(rolled.status?.lastRollout, { trigger: 'ConfigMap', name: 'files', keys: ['app.yaml'] });
      const updates = scenario.running.requests.filter(
        (sample) => sample.namespace === ns && sample.verb === 'update' && sample.resource === 'deployments.apps',
      );
      t.is(updates.length, 1, 'one Deployment update, for the listed key only');
      const event = await eventually('a RolloutTriggered Event', async () =>
        (await scenario.admin.list<CoreEvent>(EVENTS, { namespace: ns })).items.find((each) => each.reason === 'RolloutTriggered'),
      );
      t.regex(event.message ?? '', /ConfigMap\/files \(key app\.yaml\)/);
    },
  );

  test.serial(`[${target}] the schema refuses a duplicate name, a relative mountPath and too many listed objects`, async (t) => {
    const ns = 'multiref-schema';
    await scenario.createNamespace(ns);
    const refused = async (name: string, spec: Partial<CustomApp['spec']>, field: RegExp): Promise<void> => {
      const error = await t.throwsAsync(
        createAll(scenario.admin, objects.customApp(ns, name, { image: 'example/app:1', ...spec } as CustomApp['spec'])),
      );
      t.true(error instanceof ApiError && error.statusCode === 422, `${name}: 422`);
      t.regex((error as Error).message, field, name);
    };
    await refused(
      'duplicate',
      { configMaps: [{ name: 'a' }, { name: 'a', mountPath: '/etc/a' }] },
      /spec\.configMaps\[1\]: Duplicate value/,
    );
    await refused('relative', { secrets: [{ name: 'a', mountPath: 'etc/a' }] }, /spec\.secrets\[0\]\.mountPath/);
    const many = Array.from({ length: MAX_PROJECTED + 1 }, (_, index) => ({ name: `c${index}` }));
    await refused('too-many', { configMaps: many }, /spec\.configMaps: Too many/);
  });

  if (target === 'envtest') {
    test.serial('[envtest] kubectl explain customapp.spec.configMaps says what each field does', async (t) => {
      // The API server publishes a new CRD's OpenAPI a moment after the CRD is established.
      const explained = await eventually('kubectl explain answers', async () => {
        const run = await scenario.cluster.kubectl(['explain', 'customapp.spec.configMaps']);
        return run.code === 0 ? run : undefined;
      });
      for (const said of [
        /without mountPath as\s+environment variables/,
        /keys\s+<\[\]string>/,
        /mountPath\s+<string>/,
        /optional\s+<boolean>/,
        /name\s+<string> -required-/,
      ]) {
        t.regex(explained.stdout, said);
      }
    });
  }
}
