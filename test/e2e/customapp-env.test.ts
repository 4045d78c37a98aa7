// End to end against each target: spec.env reaches the Deployment as plain variables, and the schema refuses bad ones.
import test from 'ava';
import { MAX_ENV } from '../../infra/customapp-api.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { ApiError } from '../../operator/kube/errors.js';
import type { Deployment } from '../../operator/kube/objects.js';
import { DEPLOYMENTS } from '../../operator/kube/resources.js';
import { selectedTargets } from '../support/cluster.js';
import { createAll, createNamespace, eventually, getIfExists, objects, operatorScenario } from '../support/operator-harness.js';

for (const target of selectedTargets()) {
  const scenario = operatorScenario(test, target);

  test.serial(`[${target}] spec.env: the Deployment's container gets the variables after envFrom`, async (t) => {
    const ns = 'env-app';
    await createNamespace(scenario.admin, ns);
    await createAll(
      scenario.admin,
      objects.configMap(ns, 'web-config', { MODE: 'from-config' }),
      objects.customApp(ns, 'web', {
        image: 'example/app:1',
        configMapName: 'web-config',
        env: [
          { name: 'MODE', value: 'prod' },
          { name: 'EMPTY', value: '' },
        ],
      }),
    );
    const deployment = await eventually('the Deployment is created', () => getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'web'));
    const container = deployment.spec.template.spec.containers[0]!;
    t.deepEqual(container.envFrom, [{ configMapRef: { name: 'web-config' } }]);
    t.deepEqual(container.env, [{ name: 'MODE', value: 'prod' }, { name: 'EMPTY' }]);
    const settled = deployment.metadata.resourceVersion;
    // The stored form equals the desired one (the empty value left out): no update loop.
    await createAll(scenario.admin, objects.customApp(ns, 'marker', { image: 'example/app:1' }));
    await eventually('a later CustomApp is served', () => getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'marker'));
    t.is((await getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'web'))!.metadata.resourceVersion, settled);
  });

  test.serial(`[${target}] the schema refuses a duplicate, a bad name and too many variables in spec.env`, async (t) => {
    const ns = 'env-schema';
    await createNamespace(scenario.admin, ns);
    const refused = async (name: string, env: unknown, field: RegExp): Promise<void> => {
      const error = await t.throwsAsync(
        createAll(scenario.admin, objects.customApp(ns, name, { image: 'example/app:1', env } as CustomApp['spec'])),
      );
      t.true(error instanceof ApiError && error.statusCode === 422, `${name}: 422`);
      t.regex((error as Error).message, field, name);
    };
    await refused(
      'duplicate',
      [
        { name: 'A', value: '1' },
        { name: 'A', value: '2' },
      ],
      /spec\.env\[1\]: Duplicate value/,
    );
    await refused('digit-first', [{ name: '1A', value: '1' }], /spec\.env\[0\]\.name/);
    await refused('equals', [{ name: 'A=B', value: '1' }], /spec\.env\[0\]\.name/);
    await refused('no-name', [{ value: '1' }], /spec\.env\[0\]\.name: Required value/);
    const many = Array.from({ length: MAX_ENV + 1 }, (_, index) => ({ name: `V${index}`, value: '' }));
    await refused('too-many', many, /spec\.env: Too many/);
  });
}
