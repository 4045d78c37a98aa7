// End to end against each target: spec.env and spec.resources reach the Deployment as the API server stores them, and the schema refuses bad ones.
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { MAX_ENV, RESOURCE_QUANTITY } from '../../api/customapp.js';
import { CUSTOM_APPS, type CustomApp } from '../../operator/customapp/custom-app.js';
import { ApiError } from '../../operator/kube/errors.js';
import type { Deployment } from '../../operator/kube/objects.js';
import { DEPLOYMENTS } from '../../operator/kube/resources.js';
import { canonicalQuantity } from '../../operator/reconcile/quantity.js';
import { selectedTargets } from '../support/targets.js';
import type { NamespaceReads } from '../support/cluster-reads.js';
import { createAll, eventually, objects, operatorScenario } from '../support/operator-harness.js';

for (const target of selectedTargets()) {
  const scenario = operatorScenario(test, target);

  /** Creating a CustomApp of `spec` (beside an image) is refused with 422 and `message`. */
  const refusedSpec = async (t: ExecutionContext, ns: string, name: string, spec: object, message: RegExp): Promise<void> => {
    const error = await t.throwsAsync(createAll(scenario.admin, objects.customApp(ns, name, { image: 'example/app:1', ...spec })));
    t.true(error instanceof ApiError && error.statusCode === 422, `${name}: 422`);
    t.regex((error as Error).message, message, name);
  };

  /**
   * `deployment` is not written again once a CustomApp created after it is served: the stored form equals the desired
   * one, so there is no update loop.
   */
  const unchangedOnceLaterServed = async (t: ExecutionContext, reads: NamespaceReads, deployment: Deployment): Promise<void> => {
    await createAll(scenario.admin, objects.customApp(reads.namespace, 'marker', { image: 'example/app:1' }));
    await eventually('a later CustomApp is served', () => reads.deployment('marker'));
    const now = await reads.deployment(deployment.metadata.name!);
    t.is(now!.metadata.resourceVersion, deployment.metadata.resourceVersion, 'no update loop');
  };

  /** The Deployment `web` is created with `resources` on its container, and is not written again. */
  const writtenOnceWith = async (t: ExecutionContext, reads: NamespaceReads, resources: unknown): Promise<void> => {
    const deployment = await reads.deploymentCreated('web');
    t.deepEqual(deployment.spec.template.spec.containers[0]!.resources, resources);
    await unchangedOnceLaterServed(t, reads, deployment);
  };

  test.serial(`[${target}] spec.env: the Deployment's container gets the variables after envFrom`, async (t) => {
    const ns = 'env-app';
    const reads = await scenario.createNamespace(
      ns,
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
    const deployment = await reads.deploymentCreated('web');
    const container = deployment.spec.template.spec.containers[0]!;
    t.deepEqual(container.envFrom, [{ configMapRef: { name: 'web-config' } }]);
    t.deepEqual(container.env, [{ name: 'MODE', value: 'prod' }, { name: 'EMPTY' }]);
    // The stored form equals the desired one (the empty value left out): no update loop.
    await unchangedOnceLaterServed(t, reads, deployment);
  });

  test.serial(`[${target}] the schema refuses a duplicate, a bad name and too many variables in spec.env`, async (t) => {
    const ns = 'env-schema';
    await scenario.createNamespace(ns);
    const refused = (name: string, env: unknown, field: RegExp) => refusedSpec(t, ns, name, { env }, field);
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
    const reads = await scenario.createNamespace(
      ns,
      objects.customApp(ns, 'web', {
        image: 'example/app:1',
        resources: { requests: { cpu: '0.5', memory: '1024Mi' }, limits: { cpu: '1.5', memory: '1.5Gi' } },
      }),
    );
    await writtenOnceWith(t, reads, {
      requests: { cpu: '500m', memory: '1Gi' },
      limits: { cpu: '1500m', memory: '1536Mi' },
    });
  });

  test.serial(
    `[${target}] spec.resources as unquoted YAML numbers, as a Pod takes them: applied, kept as numbers, written in the API server's form`,
    async (t) => {
      const ns = 'resources-numbers';
      const reads = await scenario.createNamespace(ns);
      // kubectl turns YAML into JSON: 2.0 and 1e10 are the whole numbers 2 and 10000000000.
      const manifest = `apiVersion: app.example.com/v1
kind: CustomApp
metadata: {name: web, namespace: ${ns}}
spec:
  image: example/app:1
  resources:
    requests: {cpu: 1, memory: 1073741824}
    limits: {cpu: 2.0, memory: 1e10}
`;
      const applied = await scenario.cluster.kubectl(['apply', '-f', '-'], { input: manifest });
      t.is(applied.code, 0, applied.stderr);
      const stored = await scenario.admin.get<CustomApp>(CUSTOM_APPS, ns, 'web');
      t.deepEqual(stored.spec.resources, { requests: { cpu: 1, memory: 1073741824 }, limits: { cpu: 2, memory: 10_000_000_000 } });
      await writtenOnceWith(t, reads, {
        requests: { cpu: '1', memory: '1073741824' },
        limits: { cpu: '2', memory: '10G' },
      });
    },
  );

  test.serial(
    `[${target}] the schema refuses a quantity a Pod refuses, and an unquoted fraction (int-or-string takes whole numbers)`,
    async (t) => {
      const ns = 'resources-refused';
      await scenario.createNamespace(ns);
      const cpu = (value: unknown) => ({ resources: { requests: { cpu: value } } });
      const at = 'spec.resources.requests.cpu';
      await refusedSpec(t, ns, 'fraction', cpu(0.5), new RegExp(`${at} in body must be of type integer,string: "number"`));
      await refusedSpec(t, ns, 'negative', cpu(-1), new RegExp(`${at} in body should be greater than or equal to 0`));
      await refusedSpec(t, ns, 'huge', cpu(2 ** 53), new RegExp(`${at} in body should be less than or equal to 9007199254740991`));
      await refusedSpec(t, ns, 'boolean', cpu(true), new RegExp(`${at} in body must be of type integer,string: "boolean"`));
      for (const [name, spelling] of [
        ['negative-string', '-1'],
        ['exponent', '1e3'],
        ['too-fine', '0.0000001'],
        ['too-long', '12345678901234567'],
      ]) {
        await refusedSpec(t, ns, name!, cpu(spelling), new RegExp(`${at} in body should match`));
      }
    },
  );

  if (target === 'envtest') {
    test.serial('[envtest] kubectl explain customapp.spec.resources.requests says how a quantity is written', async (t) => {
      // The API server publishes a new CRD's OpenAPI a moment after the CRD is established.
      const explained = await eventually('kubectl explain answers', async () => {
        const run = await scenario.cluster.kubectl(['explain', 'customapp.spec.resources.requests']);
        return run.code === 0 ? run : undefined;
      });
      // kubectl wraps the text to its width: compare it with the spaces and line breaks made one space.
      const text = explained.stdout.replace(/\s+/g, ' ');
      for (const said of [
        'cpu <Object> CPU: a quoted quantity ("250m", "0.5", "2") or a whole number, unquoted as in a Pod (2).',
        'memory <Object> Memory: a quoted quantity ("128Mi", "1.5Gi", "1G") or a whole number of bytes, unquoted as in a Pod (1073741824).',
        'A fraction is quoted ("0.5") or written in milli ("500m"); a number is at most 9007199254740991.',
      ]) {
        t.true(text.includes(said), `${said} in ${explained.stdout}`);
      }
    });

    test.serial('[envtest] canonicalQuantity writes what a real API server stores, for strings and whole numbers', async (t) => {
      const ns = 'resources-oracle';
      await scenario.createNamespace(ns);
      const random = randomQuantities(t, 200, 100);
      const given: (string | number)[] = [
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
        // Plain integers of up to 16 digits, and whole numbers sent unquoted (JSON numbers), as a Pod reads them.
        ...'1073741824 9999999999999999 1234567890123000'.split(' '),
        ...[0, 1, 2, 1000, 1500, 1073741824, 10_000_000_000, Number.MAX_SAFE_INTEGER],
        ...random.strings,
        ...random.numbers,
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
        return theirs === ours ? [] : [`${JSON.stringify(given[index])}: the API server stores ${theirs}, canonicalQuantity gives ${ours}`];
      });
      t.deepEqual(differing, []);
      t.is(stored.spec.template.spec.containers.length, given.length);
    });
  }
}

/**
 * `strings` spellings the CRD's RESOURCE_QUANTITY accepts (an integer part, maybe a fraction, maybe a suffix; or a plain
 * integer of up to 16 digits) and `numbers` whole numbers its maximum accepts, from fast-check (QUANTITY_SEED repeats a
 * run; the seed is logged).
 */
function randomQuantities(
  t: { log(...values: unknown[]): void },
  strings: number,
  numbers: number,
): { strings: string[]; numbers: number[] } {
  const seed = Number(process.env.QUANTITY_SEED ?? Date.now() % 2 ** 31);
  t.log(`random quantities: QUANTITY_SEED=${seed}`);
  const digits = (min: number, max: number) =>
    fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((chars) => chars.join(''));
  const nonZero = (more: number, most: number) =>
    fc.tuple(fc.constantFrom(...'123456789'), digits(more, most)).map(([first, rest]) => first + rest);
  const quantity = fc.oneof(
    fc
      .tuple(
        fc.oneof(fc.constant('0'), nonZero(0, 8)),
        fc.option(
          digits(1, 6).map((fraction) => `.${fraction}`),
          { nil: '' },
        ),
        fc.constantFrom('', 'm', 'k', 'M', 'G', 'T', 'Ki', 'Mi', 'Gi', 'Ti'),
      )
      .map((parts) => parts.join('')),
    nonZero(9, 15),
  );
  const samples = fc.sample(quantity, { numRuns: strings, seed });
  const pattern = new RegExp(RESOURCE_QUANTITY);
  for (const sample of samples) if (!pattern.test(sample)) throw new Error(`the generator made ${sample}, which the schema refuses`);
  // Small counts, round thousands (written with a suffix) and the whole range up to 2^53 - 1.
  const whole = fc.oneof(
    fc.nat(4096),
    fc.nat(10 ** 9).map((n) => n * 1000),
    fc.maxSafeNat(),
  );
  return { strings: samples, numbers: fc.sample(whole, { numRuns: numbers, seed }) };
}
