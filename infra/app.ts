// Builds the cdk8s apps that make dist/: the CRD and the operator in dist/, the samples in dist/samples/.
import { join } from 'node:path';
import { App, YamlOutputType } from 'cdk8s';
import { CrdChart } from './crd-chart.js';
import { OperatorChart } from './operator-chart.js';
import { SamplesChart } from './samples-chart.js';

/**
 * The apps that `cdk8s synth` writes. The samples go to a subdirectory so that `kubectl apply -f dist/` never
 * sends a CustomApp in the same call as the CRD that defines it (kubectl maps every object before applying any,
 * and fails on a kind it cannot map yet); apply them with `kubectl apply -f dist/samples/`.
 */
export function buildApps(outdir: string): App[] {
  const install = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  new CrdChart(install, 'customapp-crd');
  new OperatorChart(install, 'customapp-operator');
  const samples = new App({ outdir: join(outdir, 'samples'), yamlOutputType: YamlOutputType.FILE_PER_CHART });
  new SamplesChart(samples, 'customapp-samples');
  return [install, samples];
}
