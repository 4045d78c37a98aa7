// Installs the operator as a user's cdk8s app with chart props would: synthesized into a temporary dir, kubectl apply -f.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, YamlOutputType } from 'cdk8s';
import { CrdChart } from '../../infra/crd-chart.js';
import { OperatorChart, type OperatorChartProps } from '../../infra/operator-chart.js';
import type { TestCluster } from './targets.js';

/**
 * Synthesizes the CRD and the operator's chart with `props` (what dist/ is with its defaults) into a temporary
 * directory, applies it with kubectl, waits for the CRD, and removes the directory. The operator's Deployment object
 * is applied too; on an API target nothing runs it.
 */
export async function installChart(cluster: TestCluster, props: OperatorChartProps): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'customapp-chart-'));
  try {
    const app = new App({ outdir: dir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
    new CrdChart(app, 'customapp-crd');
    new OperatorChart(app, 'customapp-operator', props);
    app.synth();
    const applied = await cluster.kubectl(['apply', '-f', dir]);
    if (applied.code !== 0) throw new Error(`kubectl apply -f <chart with ${JSON.stringify(props)}> failed: ${applied.stderr}`);
    const established = await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=30s', 'crd/customapps.app.example.com']);
    if (established.code !== 0) throw new Error(`the CRD is not established: ${established.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
