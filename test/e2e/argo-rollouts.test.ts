// End to end against each target, with Argo Rollouts' own CRD: an operator started with --workloads=rollouts before the
// CRD exists waits without failing or spinning, then serves Rollouts once the CRD is applied (no restart); an annotated
// Rollout rolls on a ConfigMap edit with one write, an un-annotated one is never written; the chart prop's grants suffice.
import test from 'ava';
import { RUNNING_HASHES_ANNOTATION, TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import { CONFIGMAPS } from '../../operator/kube/resources.js';
import { decodeHashes } from '../../operator/podtemplate/hash-annotation.js';
import { type ArgoRollout, ROLLOUTS } from '../../operator/workload/argo-rollout.js';
import { installArgoRolloutsCrd } from '../support/argo-rollouts.js';
import { selectedTargets } from '../support/targets.js';
import {
  clusterScenario,
  eventually,
  getIfExists,
  grantWorkloadPermissions,
  objects,
  readyz,
  startTestOperator,
} from '../support/operator-harness.js';

const AUTO = { 'reloader.stakater.com/auto': 'true' };

/** A canary Rollout whose pod template uses ConfigMap `web-config` (envFrom). */
function rollout(namespace: string, name: string, annotations: Record<string, string>): ArgoRollout {
  const labels = { app: name };
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name, namespace, annotations },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      strategy: { canary: { steps: [{ setWeight: 20 }, { pause: {} }] } },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'app', image: 'app:1', envFrom: [{ configMapRef: { name: 'web-config' } }] }] },
      },
    },
  } as ArgoRollout;
}

for (const target of selectedTargets()) {
  const scenario = clusterScenario(test, target);

  test.serial(`[${target}] --workloads=rollouts before Argo's CRD exists: held, then served once it is applied, no restart`, async (t) => {
    await grantWorkloadPermissions(scenario.admin, ['rollouts']);
    const running = await startTestOperator(scenario.cluster, {
      workloads: ['rollouts'],
      healthProbeBindAddress: { host: '127.0.0.1', port: 0 },
    });
    try {
      // It started (CustomApps are served) while Rollouts are not: one error line naming the CRD, and no request on them.
      await eventually(
        'the missing CRD is reported',
        () => running.logs.find('api.unavailable', { resource: 'rollouts.argoproj.io' }).length > 0,
      );
      const [unavailable] = running.logs.find('api.unavailable', { resource: 'rollouts.argoproj.io' });
      t.like(unavailable, { reason: 'NotServed' });
      t.regex(String(unavailable!.fix), /install Argo Rollouts/);
      const onRollouts = () => running.requests.filter((sample) => sample.resource === 'rollouts.argoproj.io');
      t.deepEqual(onRollouts(), [], 'no list or watch of an unserved resource');
      t.like(await readyz(running), { status: 200 }, 'an add-on not installed is not the operator unready');

      await installArgoRolloutsCrd(scenario.cluster);

      const ns = 'argo-rollouts';
      await scenario.createNamespace(ns, objects.configMap(ns, 'web-config', { GREETING: 'hello' }));
      await scenario.admin.create(ROLLOUTS, ns, rollout(ns, 'web', AUTO));
      await scenario.admin.create(ROLLOUTS, ns, rollout(ns, 'plain', {}));
      const stored = async (name: string) => (await getIfExists<ArgoRollout>(scenario.admin, ROLLOUTS, ns, name))!;
      const baseline = await eventually('served: the baseline is recorded', async () =>
        decodeHashes((await stored('web')).metadata.annotations?.[RUNNING_HASHES_ANNOTATION]),
      );
      t.is(baseline.get('ConfigMap/web-config'), contentHash({ data: { GREETING: 'hello' } }));
      t.like(running.logs.find('api.available', { resource: 'rollouts.argoproj.io' })[0], { was: 'NotServed' });
      t.is((await stored('web')).spec.template.metadata?.annotations?.[TEMPLATE_HASHES_ANNOTATION], undefined, 'opting in rolled nothing');

      const plainVersion = (await stored('plain')).metadata.resourceVersion;
      const patches = () => running.requests.filter((sample) => sample.resource === 'rollouts.argoproj.io' && sample.verb === 'patch');
      const before = patches().length;
      await scenario.admin.patch(CONFIGMAPS, ns, 'web-config', 'merge', { data: { GREETING: 'bonjour' } });
      const rolled = await eventually('the Rollout rolls', async () =>
        decodeHashes((await stored('web')).spec.template.metadata?.annotations?.[TEMPLATE_HASHES_ANNOTATION]),
      );
      t.is(rolled.get('ConfigMap/web-config'), contentHash({ data: { GREETING: 'bonjour' } }));
      // The operator counts a request when it has read the answer, which may be after the test has seen the rollout.
      await eventually('the write is counted', () => patches().length > before);
      t.is(patches().length - before, 1, 'one write');
      t.is((await stored('plain')).metadata.resourceVersion, plainVersion, 'the un-annotated Rollout is never written');
      t.deepEqual(
        running.requests.filter((sample) => sample.code === 403).map((sample) => `${sample.verb} ${sample.resource}`),
        [],
        "the chart prop's grants suffice",
      );
    } finally {
      await running.operator.stop();
    }
  });
}
