// The grants --workloads needs, proven sufficient and minimal: with the chart prop's rule the operator serves an
// annotated StatefulSet and is denied nothing; without any one of its list, watch or patch, that verb is denied.
// (StatefulSets: on deployments the prop adds patch alone, the table granting list and watch for CustomApps.)
import test from 'ava';
import { RUNNING_HASHES_ANNOTATION } from '../../infra/workload-api.js';
import { workloadPermissions } from '../../infra/permissions.js';
import type { StatefulSet } from '../../operator/kube/objects.js';
import { STATEFULSETS } from '../../operator/kube/resources.js';
import { selectedTargets } from '../support/cluster.js';
import {
  clusterScenario,
  createAll,
  createNamespace,
  eventually,
  getIfExists,
  grantWorkloadPermissions,
  objects,
  startTestOperator,
} from '../support/operator-harness.js';

const [GRANT] = workloadPermissions(['statefulsets']);
/** Each case: the verbs on statefulsets.apps the chart prop's rule keeps. */
const CASES = [GRANT!.verbs, ...GRANT!.verbs.map((verb) => GRANT!.verbs.filter((kept) => kept !== verb))];

for (const target of selectedTargets()) {
  const scenario = clusterScenario(test, target);

  for (const [index, verbs] of CASES.entries()) {
    const removed = GRANT!.verbs.filter((verb) => !verbs.includes(verb));
    const title =
      removed.length === 0 ? 'the prop’s grants: an annotated StatefulSet is served, nothing is denied' : `without ${removed[0]}: denied`;
    test.serial(`[${target}] --workloads=statefulsets, ${title}`, async (t) => {
      await grantWorkloadPermissions(scenario.admin, ['statefulsets'], [{ ...GRANT!, verbs }]);
      const ns = `wl-rbac-${index}`;
      await createNamespace(scenario.admin, ns);
      await createAll(scenario.admin, objects.configMap(ns, 'web-config', { A: '1' }));
      const running = await startTestOperator(scenario.cluster, { workloads: ['statefulsets'] }, { waitForStart: false });
      try {
        const labels = { app: 'web' };
        await scenario.admin.create<StatefulSet>(STATEFULSETS, ns, {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: { name: 'web', namespace: ns, annotations: { 'reloader.stakater.com/auto': 'true' } },
          spec: {
            serviceName: 'web',
            selector: { matchLabels: labels },
            template: {
              metadata: { labels },
              spec: { containers: [{ name: 'app', image: 'app:1', envFrom: [{ configMapRef: { name: 'web-config' } }] }] },
            },
          },
        } as StatefulSet);
        const denied = (): string[] =>
          running.requests.filter((sample) => sample.code === 403).map((sample) => `${sample.verb} ${sample.resource}`);
        const outcome = await eventually('served, or denied', async () => {
          if (denied().length > 0) return { denied: [...new Set(denied())] };
          const served = (await getIfExists<StatefulSet>(scenario.admin, STATEFULSETS, ns, 'web'))?.metadata.annotations?.[
            RUNNING_HASHES_ANNOTATION
          ];
          return served ? { denied: [] as string[] } : undefined;
        });
        if (removed.length === 0) t.deepEqual(outcome.denied, [], 'nothing denied, the baseline recorded');
        else t.deepEqual(outcome.denied, [`${removed[0]} statefulsets.apps`]);
      } finally {
        await running.operator.stop();
      }
    });
  }
}
