// The operator chart's optional objects against a real API server: prometheus-operator's ServiceMonitor CRD, as
// committed under infra/crds/, accepts the chart's ServiceMonitor, and the chart's PodDisruptionBudget is accepted.
import test from 'ava';
import { Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { OperatorChart } from '../../infra/operator-chart.js';
import { THIRD_PARTY_CRDS } from '../../infra/scripts/import.js';
import { targetSuite } from '../support/operator-harness.js';
import { installCrd } from '../support/crds.js';
import { testApp } from '../../infra/testing/test-app.js';

// Nothing installed: the test applies the chart it synthesizes.
const { onTarget: onEnvtest, scenario } = targetSuite(test, 'envtest', { install: async () => {} });

onEnvtest(
  '[envtest] the ServiceMonitor CRD applies and the chart with serviceMonitor and 2 replicas is accepted (envtest only: a real schema)',
  async (t) => {
    const { cluster } = scenario;
    await installCrd(cluster, THIRD_PARTY_CRDS[0], 'servicemonitors.monitoring.coreos.com');

    const manifests = Testing.synth(new OperatorChart(testApp(), 'operator', { replicas: 2, serviceMonitor: { interval: '30s' } }));
    const applied = await cluster.kubectl(['apply', '-f', '-'], { input: manifests.map((manifest) => stringify(manifest)).join('---\n') });
    t.is(applied.code, 0, applied.stderr);
    t.regex(applied.stdout, /servicemonitor\.monitoring\.coreos\.com\/customapp-operator-metrics created/);
    t.regex(applied.stdout, /poddisruptionbudget\.policy\/customapp-operator created/);

    const monitor = JSON.parse(
      (await cluster.kubectl(['get', '-n', 'customapp-system', 'servicemonitor/customapp-operator-metrics', '-o', 'json'])).stdout,
    );
    t.like(monitor.spec.endpoints[0], { port: 'https', scheme: 'https', interval: '30s', tlsConfig: { insecureSkipVerify: true } });
    const budget = JSON.parse((await cluster.kubectl(['get', '-n', 'customapp-system', 'pdb/customapp-operator', '-o', 'json'])).stdout);
    t.like(budget.spec, { maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' });

    const refused = await cluster.kubectl(['apply', '-f', '-'], {
      input: stringify({
        ...monitor,
        metadata: { name: 'bad', namespace: 'customapp-system' },
        spec: { ...monitor.spec, endpoints: [{ scheme: 'gopher' }] },
      }),
    });
    t.not(refused.code, 0, 'the CRD validates: the schema is really applied');
    t.regex(refused.stderr, /spec\.endpoints\[0\]\.scheme/);
  },
);
