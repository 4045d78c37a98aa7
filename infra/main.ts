// Entry point of `cdk8s synth`: wiring only.
import { buildApps } from './app.js';

for (const app of buildApps(process.env.CDK8S_OUTDIR ?? 'dist')) app.synth();
