// End to end against each target: a CustomApp becomes a Deployment and Service; spec, content and deletion follow.
import test from 'ava';
import { CONFIG_HASH_ANNOTATION, FINALIZER, OPERATOR_NAME, OPERATOR_NAMESPACE, SECRET_HASH_ANNOTATION } from '../../api/customapp.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import { CONFIGMAPS, DEPLOYMENTS, SERVICES } from '../../operator/kube/resources.js';
import { CUSTOM_APPS, type CustomApp } from '../../operator/customapp/custom-app.js';
import { desiredDeployment } from '../../operator/reconcile/desired-deployment.js';
import type { Deployment } from '../../operator/kube/objects.js';
import { selectedTargets } from '../support/targets.js';
import { applyDenyingPolicy } from '../support/admission-policy.js';
import { conditionReached, podAnnotation } from '../support/cluster-reads.js';
import { assertInvariants } from '../support/invariants.js';
import { createAll, eventually, objects, operatorScenario } from '../support/operator-harness.js';
import { restrictedViolations } from '../support/pod-security.js';
import { secretHashIn } from '../support/secret-hash.js';

for (const target of selectedTargets()) {
  const scenario = operatorScenario(test, target);
  /**
   * Creates namespace `ns` with ConfigMap `<name>-config` holding `data`, and CustomApp `name` (image `example/<name>:1`,
   * with `spec` beside) reading it; answers the admin's reads of the namespace.
   */
  const appOnConfigMap = (ns: string, name: string, data: Record<string, string>, spec: Partial<CustomApp['spec']> = {}) =>
    scenario.createNamespace(
      ns,
      objects.configMap(ns, `${name}-config`, data),
      objects.customApp(ns, name, { image: `example/${name}:1`, configMapName: `${name}-config`, ...spec }),
    );

  test.serial(`[${target}] a CustomApp gets its Deployment and Service, then status and Events follow`, async (t) => {
    const ns = 'lifecycle-create';
    const reads = await scenario.createNamespace(
      ns,
      objects.configMap(ns, 'web-config', { GREETING: 'hello' }),
      objects.secret(ns, 'web-secret', { TOKEN: 's3cr3t' }),
      objects.customApp(ns, 'web', {
        image: 'nginxinc/nginx-unprivileged:1.27-alpine',
        configMapName: 'web-config',
        secretName: 'web-secret',
        replicas: 1,
        port: 8080,
      }),
    );

    const deployment = await reads.deploymentCreated('web');
    const app = (await reads.app('web'))!;
    const container = deployment.spec.template.spec.containers[0]!;
    t.is(container.image, 'nginxinc/nginx-unprivileged:1.27-alpine');
    t.deepEqual(container.envFrom, [{ configMapRef: { name: 'web-config' } }, { secretRef: { name: 'web-secret' } }]);
    t.is(podAnnotation(deployment, CONFIG_HASH_ANNOTATION), contentHash({ data: { GREETING: 'hello' } }));
    t.is(podAnnotation(deployment, SECRET_HASH_ANNOTATION), await secretHashIn(scenario.admin, ns, 'web-secret'));
    t.like(deployment.metadata.ownerReferences?.[0], {
      kind: 'CustomApp',
      name: 'web',
      uid: app.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    });
    t.deepEqual(restrictedViolations(deployment.spec.template.spec), []);
    t.true(app.metadata.finalizers?.includes(FINALIZER));

    const service = await eventually('the Service exists', () => reads.service('web'));
    t.is(service.spec.ports?.[0]?.port, 8080);

    const status = await eventually('the status is written', async () =>
      (await reads.app('web'))?.status?.observedGeneration ? (await reads.app('web'))!.status : undefined,
    );
    t.like(status, {
      observedGeneration: 1,
      observedConfigMapName: 'web-config',
      observedSecretName: 'web-secret',
      configHash: podAnnotation(deployment, CONFIG_HASH_ANNOTATION),
    });
    const conditions = Object.fromEntries(
      status!.conditions!.map((condition) => [condition.type, `${condition.status}/${condition.reason}`]),
    );
    t.deepEqual(
      conditions,
      {
        Ready: 'False/RolloutInProgress',
        ConfigMapAvailable: 'True/ConfigMapFound',
        SecretAvailable: 'True/SecretFound',
        DeploymentAvailable: 'False/ReplicasNotReady',
        ServiceAvailable: 'True/ServiceReady',
      },
      'no pods run on the API targets, so the rollout of the creation never completes and the Deployment is not available',
    );

    t.deepEqual(
      (await reads.events('web')).filter((event) => event.reason === 'Created'),
      [],
      "a new CustomApp's first Deployment and Service get no Event: its status shows them",
    );
    // Deleted under the CustomApp, they come back, and an Event says so.
    await scenario.admin.delete(DEPLOYMENTS, ns, 'web');
    await scenario.admin.delete(SERVICES, ns, 'web');
    const events = await eventually('the Created Events of the re-creations are recorded', async () => {
      const found = await reads.events('web');
      return found.filter((event) => event.reason === 'Created').length >= 2 ? found : undefined;
    });
    t.truthy(events.find((event) => event.message?.startsWith('Created Deployment "web"')));
    t.truthy(events.find((event) => event.message?.startsWith('Created Service "web"')));
    await eventually('the Deployment is back', () => reads.deployment('web'));
    t.false(scenario.running.logs.text().includes('s3cr3t'));
    t.false(scenario.running.logs.text().includes(Buffer.from('s3cr3t').toString('base64')));
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(
    `[${target}] a spec change rolls the Deployment, and a ConfigMap edit rolls it with the new hash while a label edit does not`,
    async (t) => {
      const ns = 'lifecycle-update';
      const reads = await appOnConfigMap(ns, 'api', { MODE: 'a' }, { replicas: 1 });
      const first = await reads.deploymentCreated('api');

      await scenario.admin.patch(CUSTOM_APPS, ns, 'api', 'merge', { spec: { image: 'example/api:2', replicas: 3 } });
      const rolled = await eventually('the image changes', async () => {
        const deployment = await reads.deployment('api');
        return deployment?.spec.template.spec.containers[0]?.image === 'example/api:2' ? deployment : undefined;
      });
      t.is(rolled.spec.replicas, 3);
      t.is(podAnnotation(rolled, CONFIG_HASH_ANNOTATION), podAnnotation(first, CONFIG_HASH_ANNOTATION));
      await eventually('a RolloutTriggered Event', async () =>
        (await reads.events('api')).find((event) => event.reason === 'RolloutTriggered'),
      );

      const beforeLabel = rolled.metadata.resourceVersion;
      await scenario.admin.patch(CONFIGMAPS, ns, 'api-config', 'merge', { metadata: { labels: { touched: 'yes' } } });
      await scenario.admin.patch(CONFIGMAPS, ns, 'api-config', 'merge', { data: { MODE: 'b' } });
      const rehashed = await eventually('the config hash changes', async () => {
        const deployment = await reads.deployment('api');
        return podAnnotation(deployment, CONFIG_HASH_ANNOTATION) === contentHash({ data: { MODE: 'b' } }) ? deployment : undefined;
      });
      t.is(
        Number(rehashed.metadata.generation),
        Number(rolled.metadata.generation) + 1,
        'the label edit wrote nothing; the content edit wrote once',
      );
      t.not(rehashed.metadata.resourceVersion, beforeLabel);
      await eventually(
        'status.configHash follows',
        async () => (await reads.app('api'))?.status?.configHash === contentHash({ data: { MODE: 'b' } }),
      );
      await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
    },
  );

  test.serial(`[${target}] deleting the Deployment recreates it`, async (t) => {
    const ns = 'lifecycle-recreate';
    const reads = await scenario.createNamespace(ns, objects.customApp(ns, 'worker', { image: 'example/worker:1', replicas: 1 }));
    const original = await reads.deploymentCreated('worker');
    await scenario.admin.delete(DEPLOYMENTS, ns, 'worker');
    const recreated = await eventually('a new Deployment exists', async () => {
      const deployment = await reads.deployment('worker');
      return deployment && deployment.metadata.uid !== original.metadata.uid ? deployment : undefined;
    });
    t.is(recreated.spec.template.spec.containers[0]?.image, 'example/worker:1');
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(`[${target}] setting spec.port creates the Service, and removing it deletes the Service`, async (t) => {
    const ns = 'lifecycle-port';
    const reads = await scenario.createNamespace(ns, objects.customApp(ns, 'portable', { image: 'example/portable:1' }));
    await reads.deploymentCreated('portable');
    t.is(await reads.service('portable'), undefined);
    await scenario.admin.patch(CUSTOM_APPS, ns, 'portable', 'merge', { spec: { port: 9090 } });
    const service = await eventually('the Service exists', () => reads.service('portable'));
    t.deepEqual(
      service.spec.ports?.map((port) => [port.name, port.port, port.targetPort]),
      [['http', 9090, 9090]],
    );
    const deployment = await eventually('the container port is set', async () => {
      const found = await reads.deployment('portable');
      return found?.spec.template.spec.containers[0]?.ports?.[0]?.containerPort === 9090 ? found : undefined;
    });
    t.is(deployment.spec.template.spec.containers[0]!.ports!.length, 1);
    await scenario.admin.patch(CUSTOM_APPS, ns, 'portable', 'merge', { spec: { port: null } });
    await eventually('the Service is deleted', async () => (await reads.service('portable')) === undefined);
    await eventually(
      'the container port is gone',
      async () => (await reads.deployment('portable'))?.spec.template.spec.containers[0]?.ports === undefined,
    );
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  test.serial(`[${target}] a Deployment of the same name that the CustomApp does not own is never taken over`, async (t) => {
    const ns = 'lifecycle-foreign';
    const reads = await scenario.createNamespace(ns);
    const foreign = await scenario.admin.create<Deployment>(DEPLOYMENTS, ns, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'taken', namespace: ns },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'theirs' } },
        template: { metadata: { labels: { app: 'theirs' } }, spec: { containers: [{ name: 'theirs', image: 'example/theirs:1' }] } },
      },
    });
    await createAll(scenario.admin, objects.customApp(ns, 'taken', { image: 'example/mine:1' }));
    const app = await conditionReached(reads, 'taken', 'DeploymentAvailable', 'DeploymentNotOwned');
    t.like(
      app.status!.conditions!.find((condition) => condition.type === 'Ready'),
      { status: 'False', reason: 'DeploymentNotOwned' },
    );
    await eventually('a DeploymentNotOwned Event', async () =>
      (await reads.events('taken')).find((event) => event.reason === 'DeploymentNotOwned' && event.type === 'Warning'),
    );
    const after = (await reads.deployment('taken'))!;
    t.is(after.metadata.resourceVersion, foreign.metadata.resourceVersion, 'the foreign Deployment is untouched');
    t.is(after.metadata.ownerReferences, undefined);
    await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
  });

  if (target === 'envtest') {
    // A ValidatingAdmissionPolicy (CEL, in kube-apiserver) stands for any admission that refuses a Deployment; the
    // CRD's own validation leaves no spec that the Deployment validation would refuse.
    test.serial(
      `[${target}] a Deployment the API server refuses gives DeploymentInvalid with its message, and a fixed spec recovers`,
      async (t) => {
        const ns = 'lifecycle-invalid';
        const reads = await scenario.createNamespace(ns);
        await applyDenyingPolicy(scenario.cluster, {
          name: 'no-forbidden-images',
          namespace: ns,
          resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }],
          validation: {
            expression: "object.spec.template.spec.containers.all(c, !c.image.startsWith('forbidden/'))",
            message: 'images from forbidden/ are not allowed',
            reason: 'Invalid',
          },
        });
        await eventually(
          'the policy is in force',
          async () => {
            const probe = await scenario.admin
              .create(
                DEPLOYMENTS,
                ns,
                desiredDeployment({
                  app: { metadata: { name: 'probe', namespace: ns, uid: 'none' }, spec: { image: 'forbidden/probe:1' } },
                }),
                {},
              )
              .then(
                () => false,
                (error: unknown) => String(error).includes('forbidden/'),
              );
            return probe;
          },
          30_000,
          250,
        );
        await createAll(scenario.admin, objects.customApp(ns, 'refused', { image: 'forbidden/app:1' }));
        const app = await conditionReached(reads, 'refused', 'Ready', 'DeploymentInvalid');
        t.regex(
          app.status!.conditions!.find((condition) => condition.type === 'DeploymentAvailable')!.message,
          /rejected Deployment "refused".*images from forbidden\/ are not allowed/,
        );
        await eventually('a DeploymentInvalid Event', async () =>
          (await reads.events('refused')).find((event) => event.reason === 'DeploymentInvalid' && event.type === 'Warning'),
        );
        const errors = await scenario.running.operator.metrics.total('controller_runtime_reconcile_errors_total');
        await scenario.admin.patch(CUSTOM_APPS, ns, 'refused', 'merge', { spec: { image: 'example/allowed:1' } });
        await reads.deploymentCreated('refused');
        t.is(
          await scenario.running.operator.metrics.total('controller_runtime_reconcile_errors_total'),
          errors,
          'a refusal is a condition, not a retried error',
        );
        await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
      },
    );
  }

  test.serial(
    `[${target}] deleting the CustomApp runs the finalizer, releases its watches, and garbage-collects its children`,
    async (t) => {
      const ns = 'lifecycle-delete';
      const reads = await appOnConfigMap(ns, 'gone', { A: '1' }, { port: 80 });
      await reads.deploymentCreated('gone');
      await eventually('the Service exists', () => reads.service('gone'));
      t.true(scenario.running.operator.dependencies.watched().some((ref) => ref.namespace === ns && ref.name === 'gone-config'));

      await scenario.admin.delete(CUSTOM_APPS, ns, 'gone');
      await eventually('the CustomApp is gone', async () => (await reads.app('gone')) === undefined);
      t.false(
        scenario.running.operator.dependencies.watched().some((ref) => ref.namespace === ns),
        'its ConfigMap watch is released',
      );
      // kube-controller-manager's garbage collector learns about a new CRD at its next discovery sync (every 30 s), so
      // on a fresh envtest a CustomApp's children may wait that long.
      await eventually('the Deployment is garbage-collected', async () => (await reads.deployment('gone')) === undefined, 75_000, 100);
      await eventually('the Service is garbage-collected', async () => (await reads.service('gone')) === undefined, 75_000, 100);
      await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
    },
  );

  if (target === 'emulator') {
    const operatorUser = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_NAME}`;

    test.serial(
      `[${target}] with 30% of the operator's writes failing with 500, every CustomApp still converges to its latest ConfigMap`,
      async (t) => {
        const { faults } = scenario.cluster.emulator!;
        const ns = 'faults-500';
        const reads = await scenario.createNamespace(ns);
        const fault = faults.failRequests({ match: { user: operatorUser, verb: ['create', 'update', 'patch'] }, rate: 0.3, code: 500 });
        t.teardown(() => faults.remove(fault));
        const errorsBefore = await scenario.running.operator.metrics.total('controller_runtime_reconcile_errors_total');
        const names = Array.from({ length: 6 }, (_, index) => `flaky-${index}`);
        for (const name of names) {
          await createAll(
            scenario.admin,
            objects.configMap(ns, `${name}-config`, { V: '1' }),
            objects.customApp(ns, name, { image: 'example/flaky:1', configMapName: `${name}-config` }),
          );
        }
        for (const name of names) await scenario.admin.patch(CONFIGMAPS, ns, `${name}-config`, 'merge', { data: { V: '2' } });
        faults.dropWatches({ resource: 'configmaps', user: operatorUser });
        for (const name of names) await scenario.admin.patch(CONFIGMAPS, ns, `${name}-config`, 'merge', { data: { V: '3' } });
        for (const name of names) {
          await eventually(
            `${name} runs V=3`,
            async () => podAnnotation(await reads.deployment(name), CONFIG_HASH_ANNOTATION) === contentHash({ data: { V: '3' } }),
            60_000,
            50,
          );
          await eventually(
            `${name}'s status says so`,
            async () => (await reads.app(name))?.status?.configHash === contentHash({ data: { V: '3' } }),
            60_000,
            50,
          );
        }
        t.true(
          (await scenario.running.operator.metrics.total('controller_runtime_reconcile_errors_total')) > errorsBefore,
          'the 500s were seen and retried',
        );
        faults.remove(fault);
        await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
      },
    );

    test.serial(
      `[${target}] a Service create that keeps failing is reported as Ready=False ReconcileError, and clears once it succeeds`,
      async (t) => {
        const { faults } = scenario.cluster.emulator!;
        const ns = 'faults-service';
        const reads = await scenario.createNamespace(ns);
        const fault = faults.failRequests({
          match: { user: operatorUser, verb: 'create', resource: 'services', namespace: ns },
          rate: 1,
          code: 500,
        });
        t.teardown(() => faults.remove(fault));
        await createAll(
          scenario.admin,
          objects.configMap(ns, 'svc-config', { V: '1' }),
          objects.customApp(ns, 'svc', { image: 'example/svc:1', configMapName: 'svc-config', port: 8080 }),
        );
        const failing = await eventually(
          'Ready says why',
          async () => {
            const ready = (await reads.app('svc'))?.status?.conditions?.find((condition) => condition.type === 'Ready');
            return ready?.reason === 'ReconcileError' ? ready : undefined;
          },
          30_000,
          50,
        );
        t.is(failing.status, 'False');
        t.regex(failing.message, /writing the children failed and is retried: .*(500|Internal)/i);
        t.truthy(await reads.deployment('svc'), 'the Deployment was written before the Service failed');
        faults.remove(fault);
        await eventually('the Service exists', () => reads.service('svc'), 60_000, 50);
        await eventually(
          'Ready no longer reports the error',
          async () => {
            const ready = (await reads.app('svc'))?.status?.conditions?.find((condition) => condition.type === 'Ready');
            return ready && ready.reason !== 'ReconcileError' ? ready : undefined;
          },
          60_000,
          50,
        );
        await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
      },
    );

    test.serial(
      `[${target}] an update from a stale cache gets 409 Conflict, is requeued, and converges once the cache catches up`,
      async (t) => {
        const { faults } = scenario.cluster.emulator!;
        const ns = 'faults-409';
        const reads = await appOnConfigMap(ns, 'stale', { V: '1' });
        await eventually('the Deployment exists', async () => (await reads.app('stale'))?.status?.configHash);
        // Keep the operator's Deployment cache stale for a while: its watch is dropped and reopens only after 1.5 s.
        const slowWatch = faults.addLatency({ match: { user: operatorUser, verb: 'watch', resource: 'deployments' }, ms: 1_500 });
        t.teardown(() => faults.remove(slowWatch));
        faults.dropWatches({ resource: 'deployments', user: operatorUser });
        await scenario.admin.patch(DEPLOYMENTS, ns, 'stale', 'merge', { metadata: { labels: { 'edited-by': 'someone-else' } } });
        const requeuesBefore = await scenario.running.operator.metrics.total('controller_runtime_reconcile_total', { result: 'requeue' });
        await scenario.admin.patch(CONFIGMAPS, ns, 'stale-config', 'merge', { data: { V: '2' } });
        const rolled = await eventually(
          'the Deployment runs V=2',
          async () => {
            const deployment = await reads.deployment('stale');
            return podAnnotation(deployment, CONFIG_HASH_ANNOTATION) === contentHash({ data: { V: '2' } }) ? deployment : undefined;
          },
          30_000,
          50,
        );
        t.is(rolled.metadata.labels?.['edited-by'], 'someone-else', "the other writer's change is kept");
        t.true(
          (await scenario.running.operator.metrics.total('controller_runtime_reconcile_total', { result: 'requeue' })) > requeuesBefore,
          'the 409 was requeued',
        );
        t.true(scenario.running.logs.find('reconcile.end', { result: 'requeue' }).some((line) => String(line.conflict).includes('409')));
        faults.remove(slowWatch);
        await assertInvariants(t, scenario.cluster, scenario.running.operator, scenario.admin);
      },
    );
  }

  test.serial(`[${target}] across these scenarios the operator never GETs a ConfigMap or a Secret`, async (t) => {
    const gets = scenario.running.requests.filter(
      (sample) => sample.verb === 'get' && (sample.resource === 'configmaps' || sample.resource === 'secrets'),
    );
    t.deepEqual(gets, []);
    t.is(await scenario.running.operator.metrics.total('rest_client_requests_total', { verb: 'get', resource: 'configmaps' }), 0);
    const server = scenario.cluster.emulator?.counters;
    if (server) {
      const user = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_NAME}`;
      t.is(
        server.count({ verb: 'get', resource: 'configmaps', user }) + server.count({ verb: 'get', resource: 'secrets', user }),
        0,
        'the emulator saw no GET either',
      );
      t.true(server.count({ verb: 'watch', resource: 'configmaps', user }) > 0, 'the emulator saw the ConfigMap watches');
    }
    t.true(
      scenario.running.requests.some((sample) => sample.verb === 'list' && sample.resource === 'configmaps'),
      'ConfigMaps are listed and watched instead',
    );
  });
}
