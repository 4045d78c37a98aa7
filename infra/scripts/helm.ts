// Writes the Helm chart (dist-helm/) from infra/'s constructs; `npm run synth` runs it after `cdk8s synth`.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { HELM_CHART_DIR, helmChartFiles } from '../helm-chart.js';

const root = resolve(import.meta.dirname, '../..');

/** The chart's version: the package's. */
export function chartVersion(): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Writes the chart into `outdir` (emptied first). */
export function writeHelmChart(outdir: string): void {
  rmSync(outdir, { recursive: true, force: true });
  for (const [path, content] of helmChartFiles(chartVersion())) {
    mkdirSync(dirname(join(outdir, path)), { recursive: true });
    writeFileSync(join(outdir, path), content);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const outdir = join(root, HELM_CHART_DIR);
  writeHelmChart(outdir);
  console.log(`Helm chart written to ${outdir}`);
}
