// The grants --workloads needs, proven sufficient and minimal: with the chart prop's rule the operator serves an
// annotated StatefulSet (an annotated Argo Rollout, with Argo's CRD applied) and is denied nothing; without any one of
// its list, watch or patch, that verb is denied; the same with --namespaces, the rule in the watched namespace's Role. (StatefulSets: on deployments the prop adds patch alone, the table
// granting list and watch for CustomApps.)
import test from 'ava';
import { RUNNING_HASHES_ANNOTATION, type WorkloadResource } from '../../api/workload.js';
import { workloadPermissions } from '../../infra/permissions.js';
import type { KubeObject, StatefulSet } from '../../operator/kube/objects.js';
import { resourceLabel, STATEFULSETS } from '../../operator/kube/resources.js';
import { type ArgoRollout, ROLLOUTS } from '../../operator/workload/argo-rollout.js';
import { installArgoRolloutsCrd } from '../support/argo-rollouts.js';
import { selectedTargets, type TestCluster } from '../support/targets.js';
import {
  clusterScenario,
  createAll,
  eventually,
  getIfExists,
  grantWorkloadPermissions,
  objects,
  startTestOperator,
} from '../support/operator-harness.js';

const labels = { app: 'web' };
const template = {
  metadata: { labels },
  spec: { containers: [{ name: 'app', image: 'app:1', envFrom: [{ configMapRef: { name: 'web-config' } }] }] },
};
const annotations = { 'reloader.stakater.com/auto': 'true' };

/** Each kind proven: its --workloads name, what it needs installed first, and an annotated workload of it. */
const KINDS: readonly {
  readonly name: WorkloadResource;
  readonly install?: (cluster: TestCluster) => Promise<void>;
  readonly workload: (namespace: string) => KubeObject;
}[] = [
  {
    name: 'statefulsets',
    workload: (namespace) =>
      ({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'web', namespace, annotations },
        spec: { serviceName: 'web', selector: { matchLabels: labels }, template },
      }) as StatefulSet,
  },
  {
    name: 'rollouts',
    install: installArgoRolloutsCrd,
    workload: (namespace) =>
      ({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        metadata: { name: 'web', namespace, annotations },
        spec: { selector: { matchLabels: labels }, template },
      }) as unknown as ArgoRollout,
  },
];
const RESOURCES = { statefulsets: STATEFULSETS, rollouts: ROLLOUTS } as const;

for (const target of selectedTargets()) {
  const scenario = clusterScenario(test, target);

  for (const { name, install, workload } of KINDS) {
    const [grant] = workloadPermissions([name]);
    const resource = RESOURCES[name as keyof typeof RESOURCES];
    /** Each case: the verbs on the kind the chart prop's rule keeps. */
    const cases = [grant!.verbs, ...grant!.verbs.map((verb) => grant!.verbs.filter((kept) => kept !== verb))];
    for (const [index, verbs] of cases.entries()) {
      const removed = grant!.verbs.filter((verb) => !verbs.includes(verb));
      const title =
        removed.length === 0 ? 'the prop’s grants: an annotated one is served, nothing is denied' : `without ${removed[0]}: denied`;
      // Watching every namespace, the grants are the ClusterRole's; watching one, the Role's of that namespace alone.
      for (const namespaced of [false, true]) {
        test.serial(`[${target}] --workloads=${name}${namespaced ? ' --namespaces=<one>' : ''}, ${title}`, async (t) => {
          await install?.(scenario.cluster);
          const ns = `wl-rbac-${name}-${index}${namespaced ? '-ns' : ''}`;
          await scenario.createNamespace(ns);
          // Namespaced, the cluster-wide grant of the case before is emptied: the Role must suffice on its own.
          if (namespaced) await grantWorkloadPermissions(scenario.admin, [name], []);
          await grantWorkloadPermissions(scenario.admin, [name], [{ ...grant!, verbs }], namespaced ? ns : undefined);
          await createAll(scenario.admin, objects.configMap(ns, 'web-config', { A: '1' }));
          const running = await startTestOperator(
            scenario.cluster,
            { workloads: [name], ...(namespaced ? { namespaces: [ns] } : {}) },
            { waitForStart: false },
          );
          try {
            await scenario.admin.create(resource, ns, workload(ns));
            const denied = (): string[] =>
              running.requests.filter((sample) => sample.code === 403).map((sample) => `${sample.verb} ${sample.resource}`);
            const outcome = await eventually('served, or denied', async () => {
              if (denied().length > 0) return { denied: [...new Set(denied())] };
              const served = (await getIfExists<KubeObject>(scenario.admin, resource, ns, 'web'))?.metadata.annotations?.[
                RUNNING_HASHES_ANNOTATION
              ];
              return served ? { denied: [] as string[] } : undefined;
            });
            if (removed.length === 0) t.deepEqual(outcome.denied, [], 'nothing denied, the baseline recorded');
            else t.deepEqual(outcome.denied, [`${removed[0]} ${resourceLabel(resource)}`]);
          } finally {
            await running.operator.stop();
          }
        });
      }
    }
  }
}
