// End to end against each target: spec.env and spec.resources reach the Deployment as the API server stores them, and the schema refuses bad ones.
import test from 'ava';
import { MAX_ENV } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { ApiError } from '../../operator/kube/errors.js';
import type { Deployment } from '../../operator/kube/objects.js';
import { DEPLOYMENTS } from '../../operator/kube/resources.js';
import { canonicalQuantity } from '../../operator/reconcile/quantity.js';
import { selectedTargets } from '../support/targets.js';
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

  test.serial(`[${target}] spec.resources in any accepted spelling: the Deployment is written once and stays`, async (t) => {
    const ns = 'resources-app';
    await createNamespace(scenario.admin, ns);
    await createAll(
      scenario.admin,
      objects.customApp(ns, 'web', {
        image: 'example/app:1',
        resources: { requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: '1500', memory: '2000M' } },
      }),
    );
    const deployment = await eventually('the Deployment is created', () => getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'web'));
    t.deepEqual(deployment.spec.template.spec.containers[0]!.resources, {
      requests: { cpu: '1', memory: '1Gi' },
      limits: { cpu: '1500', memory: '2G' },
    });
    const settled = deployment.metadata.resourceVersion;
    await createAll(scenario.admin, objects.customApp(ns, 'marker', { image: 'example/app:1' }));
    await eventually('a later CustomApp is served', () => getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'marker'));
    t.is((await getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'web'))!.metadata.resourceVersion, settled, 'no update loop');
    const error = await t.throwsAsync(
      createAll(scenario.admin, objects.customApp(ns, 'fraction', { image: 'example/app:1', resources: { requests: { cpu: '0.5' } } })),
    );
    t.true(error instanceof ApiError && error.statusCode === 422);
    t.regex((error as Error).message, /spec\.resources\.requests\.cpu/);
  });

  if (target === 'envtest') {
    test.serial('[envtest] canonicalQuantity writes what a real API server stores', async (t) => {
      const ns = 'resources-oracle';
      await createNamespace(scenario.admin, ns);
      const given = [
        '0',
        '500m',
        '1000m',
        '1500m',
        '2000m',
        '1',
        '1000',
        '1500',
        '64Mi',
        '1024Mi',
        '1536Mi',
        '2000Ki',
        '1Ki',
        '0Mi',
        '1000M',
        '129M',
      ];
      // One container per spelling, as its CPU request (the canonical form does not depend on the resource's name).
      const containers = given.map((quantity, index) => ({
        name: `c${index}`,
        image: 'example/app:1',
        resources: { requests: { cpu: quantity } },
      }));
      const labels = { app: 'oracle' };
      const stored = await scenario.admin.create<Deployment>(DEPLOYMENTS, ns, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'oracle', namespace: ns },
        spec: {
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: { containers },
          },
        },
      } as Deployment);
      t.deepEqual(
        stored.spec.template.spec.containers.map((container) => container.resources?.requests?.cpu),
        given.map(canonicalQuantity),
      );
    });
  }
}
