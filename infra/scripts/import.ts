// Regenerates imports/ with `cdk8s import` from the CRD that infra/ synthesizes (never edit imports/ by hand).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { App } from 'cdk8s';
import { CrdChart } from '../crd-chart.js';

/**
 * CRDs of other projects that infra/ builds objects of, committed under infra/crds/ as fetched: prometheus-operator's
 * ServiceMonitor (v0.93.0, example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml).
 */
export const THIRD_PARTY_CRDS = [resolve(import.meta.dirname, '../crds/monitoring.coreos.com_servicemonitors.yaml')] as const;

/**
 * Synthesizes the CRD chart to a temporary directory and runs `cdk8s import` on it, and on each of
 * {@link THIRD_PARTY_CRDS}, into `outdir`.
 */
export function generateImports(outdir: string): void {
  const workdir = mkdtempSync(join(tmpdir(), 'customapp-import-'));
  try {
    const app = new App({ outdir: workdir });
    new CrdChart(app, 'customapp-crd');
    app.synth();
    const cli = resolve(import.meta.dirname, '../../node_modules/.bin/cdk8s');
    for (const crd of [join(workdir, 'customapp-crd.k8s.yaml'), ...THIRD_PARTY_CRDS]) {
      // Run from the temporary directory: `cdk8s import <file>` appends <file> to the imports of any cdk8s.yaml in
      // its working directory, and ours must keep listing only the committed CRD.
      execFileSync(cli, ['import', crd, '--language', 'typescript', '--output', resolve(outdir)], {
        cwd: workdir,
        env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    }
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const outdir = resolve(import.meta.dirname, '../../imports');
  generateImports(outdir);
  console.log(`imports regenerated in ${outdir}`);
}
