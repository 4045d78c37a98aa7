// The operator's install synthesized with the operator chart's props (its `namespaces`, its `workloads`) into a directory of
// its own, as `npm run synth` makes dist/, and applied to a test cluster.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, YamlOutputType } from 'cdk8s';
import { CrdChart } from '../../infra/crd-chart.js';
import { OperatorChart, type OperatorChartProps } from '../../infra/operator-chart.js';
import type { KubeClient } from '../../operator/kube/client.js';
import type { TestCluster } from './targets.js';
import { createNamespace, installOperatorResources } from './operator-harness.js';

/** Synthesizes the CRD and the operator chart with `props` (its `namespaces` among them) into a new temporary directory. */
export function synthInstall(props: OperatorChartProps): string {
  const outdir = mkdtempSync(join(tmpdir(), 'customapp-install-'));
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  new CrdChart(app, 'customapp-crd');
  new OperatorChart(app, 'customapp-operator', props);
  app.synth();
  return outdir;
}

/**
 * Creates the watched namespaces (their Roles need them), then applies the install synthesized with `props` in place of
 * dist/, and waits for the CRD. Answers the directory it applied.
 */
export async function applyInstall(cluster: TestCluster, admin: KubeClient, props: OperatorChartProps): Promise<string> {
  for (const namespace of props.namespaces ?? []) await createNamespace(admin, namespace);
  const dir = synthInstall(props);
  await installOperatorResources(cluster, dir);
  return dir;
}
