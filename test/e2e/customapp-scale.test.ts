// End to end: a CustomApp scales through its scale subresource (kubectl scale, a HorizontalPodAutoscaler), and with
// spec.replicas unset the operator leaves its Deployment's count to whoever sets it.
import test from 'ava';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { KubeObject } from '../../operator/kube/objects.js';
import type { ClusterOptions } from '../support/targets.js';
import { selectedTargets } from '../support/targets.js';
import { createAll, createNamespace, eventually, objects, operatorScenario } from '../support/operator-harness.js';
import { NamespaceReads } from '../support/cluster-reads.js';

/**
 * Something that reports a Deployment's pods on each target: envtest's kube-controller-manager with every controller
 * (the Deployment and ReplicaSet controllers create the pods, unscheduled, and the HPA controller runs), the emulator's
 * simulated status.
 */
const CLUSTERS: Record<'emulator' | 'envtest', ClusterOptions> = {
  emulator: { emulator: { simulateDeploymentStatus: { readyAfterMs: 50 } } },
  envtest: { envtest: { controllerManager: 'all' } },
};

const SELECTOR = (name: string): string => `app.kubernetes.io/instance=${name},app.kubernetes.io/name=${name}`;

for (const target of selectedTargets()) {
  const scenario = operatorScenario(test, target, CLUSTERS[target]);
  const reads = (namespace: string): NamespaceReads => new NamespaceReads(scenario.admin, namespace);
  const kubectl = async (
    t: { is(actual: unknown, expected: unknown, message?: string): void },
    args: readonly string[],
    input?: string,
  ) => {
    const result = await scenario.cluster.kubectl(args, input === undefined ? {} : { input });
    t.is(result.code, 0, `kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };

  test.serial(
    `[${target}] kubectl scale ca/web --replicas=3 scales the Deployment, and the scale subresource reports its pods and selector`,
    async (t) => {
      const ns = 'scale-kubectl';
      await createNamespace(scenario.admin, ns);
      await createAll(scenario.admin, objects.customApp(ns, 'web', { image: 'example/web:1', replicas: 1 }));
      await eventually('the Deployment exists', () => reads(ns).deployment('web'));

      t.is((await kubectl(t, ['scale', '-n', ns, 'ca/web', '--replicas=3'])).trim(), 'customapp.app.example.com/web scaled');
      t.is((await reads(ns).app('web'))?.spec.replicas, 3);
      await eventually('the Deployment has 3 replicas', async () => (await reads(ns).deployment('web'))?.spec.replicas === 3);
      const status = await eventually('status.replicas follows the Deployment', async () => {
        const app = await reads(ns).app('web');
        return app?.status?.replicas === 3 ? app.status : undefined;
      });
      t.is(status.selector, SELECTOR('web'));

      const scale = JSON.parse(await kubectl(t, ['get', '-n', ns, 'ca/web', '--subresource=scale', '-o', 'json']));
      t.like(scale, {
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        spec: { replicas: 3 },
        status: { replicas: 3, selector: SELECTOR('web') },
      });

      // A PUT of the Scale, as an HPA writes it.
      const replaced = await scenario.admin.replace<KubeObject & { spec: { replicas: number } }>(
        CUSTOM_APPS,
        ns,
        'web',
        { ...scale, spec: { replicas: 2 } },
        { subresource: 'scale' },
      );
      t.like(replaced, { kind: 'Scale', spec: { replicas: 2 } });
      t.is((await reads(ns).app('web'))?.spec.replicas, 2);
      await eventually('the Deployment has 2 replicas', async () => (await reads(ns).deployment('web'))?.spec.replicas === 2);
    },
  );

  test.serial(`[${target}] with spec.replicas unset the Deployment's count is left to another writer, through spec changes`, async (t) => {
    const ns = 'scale-unset';
    await createNamespace(scenario.admin, ns);
    await createAll(scenario.admin, objects.customApp(ns, 'free', { image: 'example/free:1' }));
    t.false('replicas' in (await reads(ns).app('free'))!.spec, 'the CRD defaults no count');
    const created = await eventually('the Deployment exists', () => reads(ns).deployment('free'));
    t.is(created.spec.replicas, 1, "the API server's default");
    // kube-apiserver answers a GET of the scale of a custom resource without its spec replicas with a 500 (the CRD's
    // specReplicasPath documents it): an HPA targeting such a CustomApp reports FailedGetScale until it has replicas.
    const unset = await scenario.admin.get(CUSTOM_APPS, ns, 'free', { subresource: 'scale' }).catch((error: unknown) => error);
    t.like(unset, { statusCode: 500 });
    t.regex(String((unset as Error).message), /the spec replicas field "\.spec\.replicas" does not exist/);

    await kubectl(t, ['scale', '-n', ns, 'deployment/free', '--replicas=4']);
    await scenario.admin.patch(CUSTOM_APPS, ns, 'free', 'merge', { spec: { image: 'example/free:2' } });
    const rolled = await eventually('the image changes', async () => {
      const deployment = await reads(ns).deployment('free');
      return deployment?.spec.template.spec.containers[0]?.image === 'example/free:2' ? deployment : undefined;
    });
    t.is(rolled.spec.replicas, 4, 'the operator wrote the Deployment and kept the count it did not set');
    // The Deployment's own count of pods: on envtest no pod ever becomes available, so the rollout of the new image
    // stalls with surge pods beside the old ones (4 or 5, depending on how far the ReplicaSet controller had got).
    await eventually('status.replicas follows the Deployment', async () => {
      const pods = (await reads(ns).deployment('free'))?.status?.replicas;
      return pods !== undefined && pods >= 4 && (await reads(ns).app('free'))?.status?.replicas === pods;
    });

    // kubectl scale on the CustomApp sets spec.replicas, and from then on the count is the CustomApp's.
    t.is((await kubectl(t, ['scale', '-n', ns, 'ca/free', '--replicas=2'])).trim(), 'customapp.app.example.com/free scaled');
    await eventually('the Deployment has 2 replicas', async () => (await reads(ns).deployment('free'))?.spec.replicas === 2);
  });

  if (target === 'envtest') {
    test.serial(
      '[envtest] a HorizontalPodAutoscaler (autoscaling/v2) targeting a CustomApp is accepted and reads its scale (envtest only: the emulator serves no autoscaling)',
      async (t) => {
        const ns = 'scale-hpa';
        await createNamespace(scenario.admin, ns);
        await createAll(scenario.admin, objects.customApp(ns, 'web', { image: 'example/web:1', replicas: 2 }));
        await eventually('the Deployment exists', () => reads(ns).deployment('web'));
        const hpa = {
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name: 'web', namespace: ns },
          spec: {
            scaleTargetRef: { apiVersion: 'app.example.com/v1', kind: 'CustomApp', name: 'web' },
            minReplicas: 1,
            maxReplicas: 5,
            metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }],
          },
        };
        t.regex(await kubectl(t, ['apply', '-f', '-'], JSON.stringify(hpa)), /horizontalpodautoscaler\.autoscaling\/web created/);
        // The HPA controller gets the target's scale before it asks for metrics (none are served here, so it scales nothing).
        const able = await eventually(
          'the HPA controller read the CustomApp scale',
          async () => {
            const answer = JSON.parse(await kubectl(t, ['get', '-n', ns, 'hpa/web', '-o', 'json']));
            return answer.status?.conditions?.find((condition: { type: string }) => condition.type === 'AbleToScale');
          },
          60_000,
          500,
        );
        t.like(able, { status: 'True', reason: 'SucceededGetScale' });
      },
    );
  }
}
