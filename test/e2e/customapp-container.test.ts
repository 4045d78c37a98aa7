// End to end against each target: spec.env and spec.resources reach the Deployment as the API server stores them, and the schema refuses bad ones.
import test from 'ava';
import fc from 'fast-check';
import { MAX_ENV, RESOURCE_QUANTITY } from '../../api/customapp.js';
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
        resources: { requests: { cpu: '0.5', memory: '1024Mi' }, limits: { cpu: '1.5', memory: '1.5Gi' } },
      }),
    );
    const deployment = await eventually('the Deployment is created', () => getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'web'));
    t.deepEqual(deployment.spec.template.spec.containers[0]!.resources, {
      requests: { cpu: '500m', memory: '1Gi' },
      limits: { cpu: '1500m', memory: '1536Mi' },
    });
    const settled = deployment.metadata.resourceVersion;
    await createAll(scenario.admin, objects.customApp(ns, 'marker', { image: 'example/app:1' }));
    await eventually('a later CustomApp is served', () => getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'marker'));
    t.is((await getIfExists<Deployment>(scenario.admin, DEPLOYMENTS, ns, 'web'))!.metadata.resourceVersion, settled, 'no update loop');
    const error = await t.throwsAsync(
      createAll(
        scenario.admin,
        objects.customApp(ns, 'too-fine', { image: 'example/app:1', resources: { requests: { cpu: '0.0000001' } } }),
      ),
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
        // Fractions, rounding up to milliunits, the largest amounts, and spellings the API server keeps as written.
        ...'0.5 1.5 0.125 2.5k 1.5M 0.000001m 0.000002 0.0005 3.629594 84969907.736m 1.5Gi 0.5Gi 0.5Ki 0.1Ki 1.1Ki'.split(' '),
        ...'100000000T 999999999Ti 1.125 1.500 2.250k 1.001 7Ki 1025Mi 8Ki'.split(' '),
        ...randomQuantities(t, 200),
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
      const differing = stored.spec.template.spec.containers.flatMap((container, index) => {
        const ours = canonicalQuantity(given[index]!);
        const theirs = container.resources?.requests?.cpu;
        return theirs === ours ? [] : [`${given[index]}: the API server stores ${theirs}, canonicalQuantity gives ${ours}`];
      });
      t.deepEqual(differing, []);
      t.is(stored.spec.template.spec.containers.length, given.length);
    });
  }
}

/**
 * `count` spellings the CRD's RESOURCE_QUANTITY accepts, from fast-check (QUANTITY_SEED repeats a run; the seed is
 * logged): an integer part, maybe a fraction, maybe a suffix.
 */
function randomQuantities(t: { log(...values: unknown[]): void }, count: number): string[] {
  const seed = Number(process.env.QUANTITY_SEED ?? Date.now() % 2 ** 31);
  t.log(`random quantities: QUANTITY_SEED=${seed}`);
  const digits = (min: number, max: number) =>
    fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((chars) => chars.join(''));
  const quantity = fc
    .tuple(
      fc.oneof(
        fc.constant('0'),
        fc.tuple(fc.constantFrom(...'123456789'), digits(0, 8)).map(([first, rest]) => first + rest),
      ),
      fc.option(
        digits(1, 6).map((fraction) => `.${fraction}`),
        { nil: '' },
      ),
      fc.constantFrom('', 'm', 'k', 'M', 'G', 'T', 'Ki', 'Mi', 'Gi', 'Ti'),
    )
    .map((parts) => parts.join(''));
  const samples = fc.sample(quantity, { numRuns: count, seed });
  const pattern = new RegExp(RESOURCE_QUANTITY);
  for (const sample of samples) if (!pattern.test(sample)) throw new Error(`the generator made ${sample}, which the schema refuses`);
  return samples;
}
