// The workload reconcile against a trivial model: random edits, opt-in and opt-out, deletes, restarts and reconciles;
// what is recorded, what the pod template runs, what is acquired and the budget's slot always agree with the model.
import test from 'ava';
import fc from 'fast-check';
import { RUNNING_HASHES_ANNOTATION, TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import type { PodTemplate } from '../kube/objects.js';
import { keyDigests, keysHash } from '../dependencies/key-digests.js';
import { encodeHashes } from '../podtemplate/hash-annotation.js';
import { FakeWorld } from '../reconcile/testing/fake-world.js';
import { WORKLOAD_RESOURCES, type Workload, type WorkloadKind, workloadKey } from './workload.js';

const RUNS = Number(process.env.WORKLOAD_MODEL_RUNS ?? 200);

type Step =
  | { readonly type: 'editConfigMap' }
  /** ConfigMap `keyed`, of which the pod template reads key `a` alone: an edit of `a`, or of `b` (which must roll nothing). */
  | { readonly type: 'editKeyA' | 'editKeyB' }
  /** The optional Secret: created, edited, or deleted. */
  | { readonly type: 'editSecret' }
  | { readonly type: 'deleteSecret' }
  /** The same content written again (a metadata-only change for the hash). */
  | { readonly type: 'rewrite' }
  | { readonly type: 'optIn' | 'optOut' }
  | { readonly type: 'recreate' }
  | { readonly type: 'restart' }
  | { readonly type: 'reconcile' }
  /** A Deployment only: `kubectl rollout pause` and `resume`, and its controller finishing the rollout. */
  | { readonly type: 'pause' | 'resume' | 'finish' };

const STEP: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ type: 'editConfigMap' } as const) },
  { weight: 2, arbitrary: fc.constant({ type: 'editSecret' } as const) },
  { weight: 2, arbitrary: fc.constantFrom({ type: 'editKeyA' } as const, { type: 'editKeyB' } as const) },
  { weight: 1, arbitrary: fc.constant({ type: 'deleteSecret' } as const) },
  { weight: 1, arbitrary: fc.constant({ type: 'rewrite' } as const) },
  { weight: 1, arbitrary: fc.constantFrom({ type: 'optIn' } as const, { type: 'optOut' } as const) },
  { weight: 1, arbitrary: fc.constant({ type: 'recreate' } as const) },
  { weight: 1, arbitrary: fc.constant({ type: 'restart' } as const) },
  { weight: 5, arbitrary: fc.constant({ type: 'reconcile' } as const) },
);

/** The steps of a Deployment: those of every kind, and its pause, resume and finished rollouts. */
const DEPLOYMENT_STEP: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: STEP },
  { weight: 1, arbitrary: fc.constantFrom({ type: 'pause' } as const, { type: 'resume' } as const, { type: 'finish' } as const) },
);

const TEMPLATE: Partial<PodTemplate['spec']> = {
  containers: [
    {
      name: 'app',
      image: 'app:1',
      envFrom: [{ configMapRef: { name: 'cfg' } }],
      env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'keyed', key: 'a' } } }],
    },
  ],
  volumes: [{ name: 's', secret: { secretName: 'sec', optional: true } }],
};
const ANNOTATIONS = { 'reloader.stakater.com/auto': 'true' };

/**
 * The model: the content now (a ConfigMap value, and the optional Secret's value or null while absent), whether the
 * workload opted in, and what it records and runs, by the rules written in a few lines: first sight records the
 * content; afterwards an object that exists with content other than recorded rolls (template and record to the content
 * now, once); an object deleted changes nothing; not opted in (or deleted) records nothing and acquires nothing. Of
 * ConfigMap `keyed` the content is its key `a` alone: an edit of `b` is no change, and a reconcile that the model says
 * changes nothing writes nothing at all. A rollout occupies a slot of the budget from its write until a reconcile sees it
 * finished, except while its Deployment is paused.
 */
async function run(kind: WorkloadKind, steps: readonly Step[]): Promise<number> {
  let rollouts = 0;
  const world = new FakeWorld();
  const resource = WORKLOAD_RESOURCES[kind];
  /** A rollout of ours that no reconcile has seen finish; whether its controller finished it; whether it is paused. */
  let rolling = false;
  let finished = false;
  let paused = false;
  let configMap = 1;
  const keyed = { a: 1, b: 1 };
  let secret: number | null = null;
  let optedIn = true;
  let record: Map<string, number | null> | undefined;
  let runs: Map<string, number | null> | undefined;
  const setConfigMap = (): void => world.configMap('cfg', { V: String(configMap) });
  const setKeyed = (): void => world.configMap('keyed', { a: String(keyed.a), b: String(keyed.b) });
  const setSecret = (): void => (secret === null ? world.secret('sec', undefined) : world.secret('sec', { P: String(secret) }));
  const hashOf = (key: string, value: number | null): string | null =>
    value === null
      ? null
      : key === 'ConfigMap/cfg'
        ? FakeWorld.hash({ V: String(value) })
        : key === 'ConfigMap/keyed'
          ? keysHash('ConfigMap', keyDigests('ConfigMap', undefined, { data: { a: String(value) } }), ['a'])
          : FakeWorld.secretHash({ P: String(value) }, 'sec');
  const encoded = (values: Map<string, number | null> | undefined): string | undefined =>
    values && encodeHashes(new Map([...values].map(([key, value]) => [key, hashOf(key, value)])));
  const stored = (): Workload | undefined => world.client.stored<Workload>(resource, 'ns', 'web');
  const create = (): void => {
    world.workload(kind, 'web', optedIn ? ANNOTATIONS : {}, TEMPLATE);
  };
  const slots = (): string => JSON.stringify(world.governance.budget.snapshot().inProgress);
  setConfigMap();
  setKeyed();
  setSecret();
  create();

  for (const [at, step] of steps.entries()) {
    switch (step.type) {
      case 'editConfigMap':
        configMap += 1;
        setConfigMap();
        break;
      case 'editKeyA':
      case 'editKeyB':
        keyed[step.type === 'editKeyA' ? 'a' : 'b'] += 1;
        setKeyed();
        break;
      case 'editSecret':
        secret = (secret ?? 0) + 1;
        setSecret();
        break;
      case 'deleteSecret':
        secret = null;
        setSecret();
        break;
      case 'rewrite':
        setConfigMap();
        break;
      case 'optIn':
      case 'optOut': {
        // `kubectl annotate`: the annotations change, the pod template stays as it is.
        optedIn = step.type === 'optIn';
        const live = stored()!;
        world.client.seed(resource, {
          ...live,
          metadata: { ...live.metadata, annotations: { ...live.metadata.annotations, 'reloader.stakater.com/auto': String(optedIn) } },
        });
        world.sync();
        break;
      }
      case 'recreate':
        await world.client.delete(resource, 'ns', 'web');
        world.sync();
        await world.reconcileWorkload(kind, 'web');
        if (world.dependencies.acquired.has(workloadKey(kind, 'ns', 'web')))
          throw new Error(`step ${at}: a deleted workload still has its refs acquired`);
        record = undefined;
        runs = undefined;
        optedIn = true;
        rolling = finished = paused = false;
        create();
        break;
      case 'restart': {
        world.restart();
        const expected = JSON.stringify(rolling && !finished && !paused ? [workloadKey(kind, 'ns', 'web')] : []);
        if (slots() !== expected) throw new Error(`step ${at}: after a restart the budget has ${slots()} occupied, the model ${expected}`);
        break;
      }
      case 'pause':
      case 'resume':
        paused = step.type === 'pause';
        world.pauseDeployment('web', paused);
        break;
      case 'finish':
        world.settleDeployment('web', 'Succeeded');
        finished = true;
        break;
      case 'reconcile': {
        const from = world.client.calls.length;
        await world.reconcileWorkloadAndSync(kind, 'web');
        const now = new Map<string, number | null>([
          ['ConfigMap/cfg', configMap],
          ['ConfigMap/keyed', keyed.a],
          ['Secret/sec', secret],
        ]);
        const recordBefore = encoded(record);
        let rolled = false;
        // A reconcile that sees our rollout finished records its outcome (last-rollout): a change the model knows of.
        const sawFinish = rolling && finished;
        if (sawFinish) rolling = false;
        if (!optedIn) record = undefined;
        else if (!record) record = now;
        else {
          const changed = [...now].some(([key, value]) => value !== null && value !== record!.get(key));
          if (changed) {
            record = new Map([...record].map(([key, value]) => [key, now.get(key) ?? value]));
            runs = record;
            rolled = true;
            rollouts += 1;
            rolling = true;
            finished = false;
          }
        }
        const live = stored()!;
        const writes = world.client.calls.slice(from).filter((call) => call.resource !== 'events');
        const recorded = live.metadata.annotations?.[RUNNING_HASHES_ANNOTATION];
        const template = live.spec.template.metadata?.annotations?.[TEMPLATE_HASHES_ANNOTATION];
        const where = `step ${at} (${JSON.stringify(steps.slice(0, at + 1).map((s) => s.type))})`;
        if (recorded !== encoded(record)) throw new Error(`${where}: records ${recorded}, the model ${encoded(record)}`);
        if (template !== encoded(runs)) throw new Error(`${where}: the template runs ${template}, the model ${encoded(runs)}`);
        const templateWrites = writes.filter((call) => JSON.stringify(call.body).includes(TEMPLATE_HASHES_ANNOTATION)).length;
        if (templateWrites !== (rolled ? 1 : 0)) throw new Error(`${where}: ${templateWrites} rollouts, the model ${rolled ? 1 : 0}`);
        if (writes.length > 1) throw new Error(`${where}: ${writes.length} writes in one reconcile`);
        if (writes.length > 0 && encoded(record) === recordBefore && !sawFinish) {
          throw new Error(`${where}: a write when the model changes nothing: ${JSON.stringify(writes.map((call) => call.body))}`);
        }
        if (world.dependencies.acquired.has(workloadKey(kind, 'ns', 'web')) !== optedIn)
          throw new Error(`${where}: has its refs acquired: ${!optedIn}`);
        // The write that starts a rollout takes the slot; the next reconcile frees it while the Deployment is paused.
        const slot = JSON.stringify(rolling && (rolled || !paused) ? [workloadKey(kind, 'ns', 'web')] : []);
        if (slots() !== slot) throw new Error(`${where}: the budget has ${slots()} occupied, the model ${slot}`);
        break;
      }
    }
  }
  return rollouts;
}

for (const [kind, steps] of [
  ['StatefulSet', STEP],
  ['Deployment', DEPLOYMENT_STEP],
] as const) {
  test(`${kind}: random edits, opt-in and opt-out, deletes, restarts${kind === 'Deployment' ? ', pauses' : ''} and reconciles: the record, the template, the acquired refs and the slot follow the model`, async (t) => {
    const replay = process.env.WORKLOAD_MODEL_SEED;
    const seed = replay === undefined ? (Date.now() ^ (Math.random() * 0x100000000)) | 0 : Number(replay);
    let rollouts = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(steps, { maxLength: 60, size: 'max' }), async (list) => {
        rollouts += await run(kind, list);
      }),
      { numRuns: RUNS, seed, path: process.env.WORKLOAD_MODEL_PATH, endOnFailure: false },
    );
    t.log(`${RUNS} runs, ${rollouts} rollouts; seed ${seed} (replay: WORKLOAD_MODEL_SEED=${seed})`);
    t.true(rollouts > RUNS, 'the runs did roll: the model was exercised');
  });
}
