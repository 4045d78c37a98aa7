// A cdk8s App for the tests that read a chart's manifests and never write them. cdk8s's Testing.app() makes a
// temporary directory for every App, which nothing removes: about a hundred empty ones in /tmp per test run.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';

/** Where these Apps would write: never created, for nothing synthesizes them to disk (Testing.synth reads a chart's JSON). */
const UNWRITTEN_OUTDIR = join(tmpdir(), 'customapp-operator-test-synth');

/** An App whose charts are read with `Testing.synth`. */
export function testApp(): App {
  return new App({ outdir: UNWRITTEN_OUTDIR });
}

/** A chart named `test` in a {@link testApp}, as `Testing.chart()` makes. */
export function testChart(): Chart {
  return new Chart(testApp(), 'test');
}
