// The reconcile's own CPU per call, in the fake world (no API server, no HTTP): a reconcile that finds nothing to do,
// and one that rolls the Deployment for new ConfigMap content.
//
//   node --import tsx [Node flags…] bench/reconcile-cost.ts [--reconciles 5000]
//
// Three rounds of `reconciles` each of both kinds, one after the other in one process, so that the later rounds show
// the code as V8 optimized it: run it under two sets of flags to compare how they tier up a reconcile that runs all
// the time (the operator image's interrupt budget was chosen so). The fake API client's own copying is counted too, the
// same under any flags.
import { parseArgs } from 'node:util';
import type { CustomApp } from '../operator/customapp/custom-app.js';
import { FakeWorld } from '../operator/reconcile/testing/fake-world.js';

const { values } = parseArgs({ options: { reconciles: { type: 'string', default: '5000' } } });
const RECONCILES = Number(values.reconciles);

const world = new FakeWorld();
world.configMap('config', { V: '0' });
world.secret('creds', { TOKEN: 't' });
world.app('app', { image: 'example/app:1', configMapName: 'config', secretName: 'creds' } as CustomApp['spec']);
await world.reconcile('app');
world.sync();
for (const round of [1, 2, 3]) {
  let started = performance.now();
  for (let i = 0; i < RECONCILES; i++) await world.reconcile('app');
  const idle = ((performance.now() - started) * 1000) / RECONCILES;
  let spent = 0;
  for (let i = 0; i < RECONCILES; i++) {
    world.configMap('config', { V: `${round}-${i}` });
    world.sync();
    started = performance.now();
    await world.reconcile('app');
    spent += performance.now() - started;
    world.sync();
  }
  process.stdout.write(`round ${round}: nothing to do ${idle.toFixed(1)} µs, a rollout ${((spent * 1000) / RECONCILES).toFixed(1)} µs\n`);
}
