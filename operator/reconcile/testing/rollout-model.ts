// The rollout governance's model-based check: random interleavings of edits, reconciles, rollouts ending, time and restarts, against a trivial model.
import fc from 'fast-check';
import type { CustomApp } from '../../customapp/custom-app.js';
import { CUSTOM_APPS } from '../../customapp/custom-app.js';
import type { RolloutSettings } from '../../governance/governance.js';
import { isGoverned, rolloutCause } from '../../governance/rollout-cause.js';
import { rolloutProgress } from '../../governance/rollout-progress.js';
import type { Deployment } from '../../kube/objects.js';
import { ApiError } from '../../kube/errors.js';
import { DEPLOYMENTS, SERVICES } from '../../kube/resources.js';
import { FakeWorld } from './fake-world.js';

const APPS = ['a', 'b', 'c', 'd', 'e'] as const;
type App = (typeof APPS)[number];
const CONFIGMAPS = ['one', 'two'] as const;

/** One step of a run: what a user, the Deployment controller, time or the operator's process does next. */
export type Step =
  /** A new value of a ConfigMap (values never repeat: each edit is a new content generation). */
  | { readonly type: 'edit'; readonly configMap: 0 | 1 }
  /** The controller reconciles one of the queued keys (`index` picks which: any order is possible with N workers). */
  | { readonly type: 'reconcile'; readonly index: number }
  /** The Deployment controller finishes one rollout in progress: it succeeds, or fails its progress deadline. */
  | { readonly type: 'complete' | 'fail'; readonly index: number }
  /** A spec change of one app (its image): never queued. */
  | { readonly type: 'spec'; readonly app: number }
  /** Pause or unpause one app's content rollouts. */
  | { readonly type: 'pause'; readonly app: number; readonly paused: boolean }
  | { readonly type: 'advance'; readonly ms: number }
  /** The operator restarts: its memory and its work queue are gone; the caches relist and every app is queued. */
  | { readonly type: 'restart' }
  /** One app's Service is deleted and its re-creation refused (a quota), or the refusal lifted: its reconciles fail at the Service. */
  | { readonly type: 'refuseService'; readonly app: number; readonly refused: boolean }
  /** `kubectl rollout pause` or `resume` on one app's Deployment: a paused Deployment makes no progress and has no deadline. */
  | { readonly type: 'pauseDeployment'; readonly app: number; readonly paused: boolean };

const STEP_KINDS: readonly fc.Arbitrary<Step>[] = [
  fc.record({ type: fc.constant('edit' as const), configMap: fc.constantFrom(0 as const, 1 as const) }),
  fc.record({ type: fc.constant('reconcile' as const), index: fc.nat({ max: 9 }) }),
  fc.record({ type: fc.constant('complete' as const), index: fc.nat({ max: 4 }) }),
  fc.record({ type: fc.constant('fail' as const), index: fc.nat({ max: 4 }) }),
  fc.record({ type: fc.constant('spec' as const), app: fc.nat({ max: APPS.length - 1 }) }),
  fc.record({ type: fc.constant('pause' as const), app: fc.nat({ max: APPS.length - 1 }), paused: fc.boolean() }),
  fc.record({ type: fc.constant('advance' as const), ms: fc.constantFrom(1, 500, 3_000, 20_000) }),
  fc.record({ type: fc.constant('restart' as const) }),
  fc.record({ type: fc.constant('refuseService' as const), app: fc.nat({ max: APPS.length - 1 }), refused: fc.boolean() }),
  fc.record({ type: fc.constant('pauseDeployment' as const), app: fc.nat({ max: APPS.length - 1 }), paused: fc.boolean() }),
];

/** Steps drawn as swarm testing does: a weight from 0 to 4 per kind (edit and reconcile at least 1), then the steps. */
export function stepsArbitrary(maxSteps: number): fc.Arbitrary<Step[]> {
  return fc.tuple(...STEP_KINDS.map((_, at) => fc.integer({ min: at <= 1 ? 1 : 0, max: 4 }))).chain((weights) =>
    fc.array(fc.oneof(...STEP_KINDS.flatMap((arbitrary, at) => (weights[at]! > 0 ? [{ weight: weights[at]!, arbitrary }] : []))), {
      maxLength: maxSteps,
      size: 'max',
    }),
  );
}

/** The governance settings of a run: a small budget, and a breaker that is off or easy to trip. */
export interface ModelSettings {
  readonly limit: number;
  readonly flapThreshold: number;
  /** Debounce of app `a` (the others have none), in seconds. */
  readonly debounceSeconds: number;
}

export const settingsArbitrary: fc.Arbitrary<ModelSettings> = fc.record({
  limit: fc.integer({ min: 1, max: 3 }),
  flapThreshold: fc.constantFrom(0, 2, 3),
  debounceSeconds: fc.constantFrom(0, 0, 2),
});

/** The flap window of every run. */
const WINDOW_MS = 10_000;

/** What a run saw, for the summary. */
export interface RunStats {
  readonly contentRollouts: number;
  readonly queuedSeen: number;
  readonly restarts: number;
}

/**
 * Runs `steps` against the real reconciler and governance in a {@link FakeWorld} (one ConfigMap per app: a, b, c
 * share `one`; d, e share `two`), with a trivial controller (a set of queued keys, requeue-after timers, the budget's
 * eligible keys queued), then settles everything (rollouts end, time passes, every queued key is reconciled) and checks:
 * - **never over the limit**: after every step, at most `limit` Deployments are in a rollout caused by content (by
 *   their own status and cause annotation), restarts included;
 * - **first in, first out**: when an app is granted a slot, fewer apps are ahead of it in the model's queue (the
 *   trivial model: a list of the apps whose status says Queued, in the order of the time it gives, `since`, then name,
 *   as a restart rebuilds it: a reconcile that queued an app and then failed at the Service writes that status later;
 *   not counting those still rolling) than there were free slots;
 * - **a slot only while rolling**: after its reconcile, whatever step failed, an app holds a slot of the budget only
 *   while its Deployment is in a content rollout (a paused Deployment is not: it makes no progress and has no deadline);
 * - **latest content wins, once**: a content rollout rolls the ConfigMap's content of that moment, and no app rolls
 *   twice to the same content (each edit is a new value);
 * - **nothing starved**: once settled, every app runs its ConfigMap's latest content (unpaused), nothing is queued or
 *   pending in status, and the budget holds no slot.
 * Throws with the first violation.
 */
export async function runRolloutModel(steps: readonly Step[], settings: ModelSettings): Promise<RunStats> {
  const rollouts: RolloutSettings = {
    maxConcurrentRollouts: settings.limit,
    flapThreshold: settings.flapThreshold,
    flapWindowMs: WINDOW_MS,
  };
  const world = new FakeWorld(rollouts);
  const configMapOf = (app: App): string => (app === 'd' || app === 'e' ? 'two' : 'one');
  const values = new Map<string, number>(CONFIGMAPS.map((name) => [name, 1]));
  for (const name of CONFIGMAPS) world.configMap(name, { V: '1' });
  for (const app of APPS) {
    world.app(app, {
      image: 'example/app:1',
      configMapName: configMapOf(app),
      port: 8080,
      ...(app === 'a' ? { rollout: { debounceSeconds: settings.debounceSeconds } } : {}),
    });
  }

  // The controller: queued keys (deduplicated), requeue-after timers, and the budget's eligible keys.
  const queued = new Set<App>(APPS);
  const timers = new Map<App, number>();
  const subscribe = (): void => {
    world.governance.eligible.subscribe((key) => queued.add(key.split('/')[1] as App));
  };
  subscribe();
  const enqueueReferencing = (configMap: string): void => {
    for (const app of APPS) if (configMapOf(app) === configMap) queued.add(app);
  };

  // The trivial model of the queue, and what was rolled.
  const modelQueue: App[] = [];
  const rolledTo = new Map<App, Set<string>>(APPS.map((app) => [app, new Set()]));
  let contentRollouts = 0;
  let queuedSeen = 0;
  let restarts = 0;
  const now = (): number => world.now.getTime();
  const advance = (ms: number): void => {
    world.now = new Date(now() + ms);
    for (const [app, at] of timers) {
      if (at <= now()) {
        timers.delete(app);
        queued.add(app);
      }
    }
  };
  const deployment = (app: App): Deployment | undefined => world.client.stored<Deployment>(DEPLOYMENTS, 'ns', app);
  // A paused Deployment makes no progress and has no deadline: it is not rolling, whatever its replicas say.
  const rollingNow = (live: Deployment | undefined): live is Deployment =>
    live !== undefined && !live.spec.paused && rolloutProgress(live).phase === 'InProgress';
  const contentRolling = (): App[] =>
    APPS.filter((app) => {
      const live = deployment(app);
      return rollingNow(live) && isGoverned(rolloutCause(live));
    });
  const inProgress = (): App[] => APPS.filter((app) => rollingNow(deployment(app)));
  /** Lifts the refusal of each app's Service (a quota raised, say). */
  const refusals = new Map<App, () => void>();
  const refusal = new ApiError('services is forbidden: exceeded quota: no-services', 403);
  // A user's resume restarts a rollout the operator had let go of its slot: it may go over the limit, and the budget
  // counts it only from the app's next reconcile (which the Deployment's change queues).
  /** Apps whose rollout in progress a user resumed (not one the operator started since). */
  const resumed = new Set<App>();
  /** Apps resumed and not reconciled since: the budget cannot know yet. */
  const unseen = new Set<App>();
  /**
   * Apps whose reconciles failed (the refused Service) since their status last said where they stand: their status
   * keeps the `pendingRollout` of before (a place taken or left since is not in it), so the model cannot judge their
   * order, ahead of others or behind them, until a reconcile of theirs writes the status again.
   */
  const unrecorded = new Set<App>();
  const pauseDeployment = (app: App, paused: boolean): void => {
    world.pauseDeployment(app, paused);
    if (!paused) {
      resumed.add(app);
      unseen.add(app);
    }
    queued.add(app);
  };
  const pending = (app: App): string | undefined => world.client.stored<CustomApp>(CUSTOM_APPS, 'ns', app)?.status?.pendingRollout?.reason;
  const sinceOf = (app: App): string => world.client.stored<CustomApp>(CUSTOM_APPS, 'ns', app)?.status?.pendingRollout?.since ?? '';
  const describe = (): string =>
    `limit ${settings.limit}; content rolling ${JSON.stringify(contentRolling())}; model queue ${JSON.stringify(modelQueue)}; budget ${JSON.stringify(world.governance.budget.snapshot())}`;

  const reconcile = async (app: App): Promise<void> => {
    queued.delete(app);
    timers.delete(app);
    advance(1);
    const from = world.client.calls.length;
    // Before the reconcile: the slots others hold, and the queued apps ahead of this one that could take a slot.
    const rollingBefore = contentRolling().filter((other) => other !== app && !unseen.has(other));
    const at = modelQueue.indexOf(app);
    const ahead = (at < 0 ? modelQueue : modelQueue.slice(0, at)).filter(
      (other) => other !== app && !rollingBefore.includes(other) && !unrecorded.has(other),
    );
    let result: Awaited<ReturnType<FakeWorld['reconcile']>> | undefined;
    try {
      result = await world.reconcile(app);
    } catch (error) {
      // The controller retries a failed reconcile (rate-limited); only the refused Service may fail one here.
      if (error !== refusal) throw error;
      queued.add(app);
    }
    world.sync();
    unseen.delete(app);
    if (result?.requeueAfterMs) timers.set(app, now() + result.requeueAfterMs);
    // The budget settles from the Deployment's rollout alone: after its reconcile, whatever else failed, an app holds a
    // slot only while its Deployment is in a content rollout.
    if (world.governance.budget.snapshot().inProgress.includes(`ns/${app}`) && !contentRolling().includes(app)) {
      throw new Error(`${app} holds a slot after its reconcile, but its Deployment is in no content rollout (${describe()})`);
    }
    // Did this reconcile start a content rollout?
    const update = world.client.calls
      .slice(from)
      .find((call) => call.verb === 'update' && call.resource === 'deployments.apps' && call.key === `ns/${app}`);
    const cause = update ? rolloutCause(update.body as Deployment) : undefined;
    const started = cause !== undefined && isGoverned(cause) && (update!.body as Deployment).metadata.annotations !== undefined;
    if (started && cause!.start === new Date(now()).toISOString()) {
      contentRollouts += 1;
      resumed.delete(app);
      const to = cause!.changes.find((change) => change.kind === 'ConfigMap')?.to;
      const latest = FakeWorld.hash({ V: String(values.get(configMapOf(app))) });
      if (to !== latest)
        throw new Error(`${app} rolled to ${to?.slice(0, 8)} while its ConfigMap holds ${latest.slice(0, 8)}: not the latest content`);
      if (rolledTo.get(app)!.has(to)) throw new Error(`${app} rolled twice to the same content ${to.slice(0, 8)}`);
      rolledTo.get(app)!.add(to);
      // First in, first out: the queued apps ahead of it, each owed a slot, must have left it one.
      const free = settings.limit - rollingBefore.length;
      if (ahead.length >= free && !unrecorded.has(app)) {
        throw new Error(`${app} was granted a slot ahead of ${JSON.stringify(ahead)}, queued before it, with ${free} free (${describe()})`);
      }
    }
    // A failed reconcile leaves the status as it was (but Ready): it says nothing of the queue.
    if (result === undefined) {
      unrecorded.add(app);
      return;
    }
    if (unrecorded.delete(app)) modelQueue.splice(modelQueue.indexOf(app) >>> 0, modelQueue.includes(app) ? 1 : 0);
    const reason = pending(app);
    if (reason === 'Queued' && !modelQueue.includes(app)) {
      const since = sinceOf(app);
      const after = modelQueue.findIndex((other) => sinceOf(other) > since || (sinceOf(other) === since && other > app));
      modelQueue.splice(after < 0 ? modelQueue.length : after, 0, app);
      queuedSeen += 1;
    }
    if (reason !== 'Queued') modelQueue.splice(modelQueue.indexOf(app) >>> 0, modelQueue.includes(app) ? 1 : 0);
  };

  /** Never over the limit, leaving out the rollouts the users resumed (the operator started each of them within it). */
  const check = (what: string): void => {
    const rolling = contentRolling().filter((app) => !resumed.has(app));
    if (rolling.length > settings.limit) {
      throw new Error(
        `after ${what}: ${rolling.length} content rollouts in progress ${JSON.stringify(rolling)}, over the limit (${describe()})`,
      );
    }
  };

  for (const step of steps) {
    switch (step.type) {
      case 'edit': {
        const name = CONFIGMAPS[step.configMap];
        values.set(name, values.get(name)! + 1);
        world.configMap(name, { V: String(values.get(name)) });
        enqueueReferencing(name);
        break;
      }
      case 'reconcile': {
        const keys = [...queued];
        if (keys.length > 0) await reconcile(keys[step.index % keys.length]!);
        break;
      }
      case 'complete':
      case 'fail': {
        const rolling = inProgress();
        if (rolling.length === 0) break;
        const app = rolling[step.index % rolling.length]!;
        // inProgress() leaves paused Deployments out: the controller does not progress them.
        world.settleDeployment(app, step.type === 'complete' ? 'Succeeded' : 'Failed');
        queued.add(app);
        break;
      }
      case 'spec':
      case 'pause': {
        const app = APPS[step.app]!;
        const current = world.client.stored<CustomApp>(CUSTOM_APPS, 'ns', app)!;
        const spec =
          step.type === 'spec'
            ? { ...current.spec, image: `example/app:${(current.metadata.generation ?? 1) + 1}` }
            : { ...current.spec, rollout: { ...current.spec.rollout, paused: step.paused } };
        world.client.seed(CUSTOM_APPS, {
          ...current,
          spec,
          metadata: { ...current.metadata, generation: (current.metadata.generation ?? 1) + 1 },
        });
        world.sync();
        queued.add(app);
        break;
      }
      case 'advance':
        advance(step.ms);
        break;
      case 'restart':
        restarts += 1;
        world.restart();
        unseen.clear();
        subscribe();
        timers.clear();
        for (const app of APPS) queued.add(app);
        break;
      case 'refuseService': {
        const app = APPS[step.app]!;
        refusals.get(app)?.();
        refusals.delete(app);
        if (step.refused) {
          if (world.client.stored(SERVICES, 'ns', app)) await world.client.delete(SERVICES, 'ns', app);
          refusals.set(
            app,
            world.client.failEvery((call) => call.resource === 'services' && call.key === `ns/${app}` && call.verb !== 'delete', refusal),
          );
          world.sync();
        }
        queued.add(app);
        break;
      }
      case 'pauseDeployment': {
        const app = APPS[step.app]!;
        if (deployment(app) === undefined || Boolean(deployment(app)!.spec.paused) === step.paused) break;
        pauseDeployment(app, step.paused);
        break;
      }
    }
    check(step.type);
  }

  // Settle: lift the refusals, resume the paused Deployments and unpause everything, then let rollouts end, time pass
  // and every queued key run, until nothing moves.
  for (const [app, lift] of refusals) {
    lift();
    queued.add(app);
  }
  for (const app of APPS) {
    if (deployment(app)?.spec.paused) pauseDeployment(app, false);
  }
  for (const app of APPS) {
    const current = world.client.stored<CustomApp>(CUSTOM_APPS, 'ns', app)!;
    if (current.spec.rollout?.paused) {
      world.client.seed(CUSTOM_APPS, {
        ...current,
        spec: { ...current.spec, rollout: { ...current.spec.rollout, paused: false } },
        metadata: { ...current.metadata, generation: (current.metadata.generation ?? 1) + 1 },
      });
      queued.add(app);
    }
  }
  world.sync();
  for (let round = 0; round < 200; round += 1) {
    while (queued.size > 0) {
      await reconcile([...queued][0]!);
      check('a settling reconcile');
    }
    const rolling = inProgress();
    if (rolling.length > 0) {
      world.settleDeployment(rolling[0]!, 'Succeeded');
      queued.add(rolling[0]!);
      continue;
    }
    if (timers.size === 0) break;
    advance(Math.max(...timers.values()) - now());
  }
  if (queued.size > 0 || inProgress().length > 0 || timers.size > 0) throw new Error(`no quiescence: ${describe()}`);

  for (const app of APPS) {
    const live = deployment(app)!;
    const runs = live.spec.template.metadata?.annotations?.['app.example.com/config-hash'];
    const latest = FakeWorld.hash({ V: String(values.get(configMapOf(app))) });
    if (runs !== latest) throw new Error(`${app} runs ${runs?.slice(0, 8)}, not the latest ${latest.slice(0, 8)}: starved (${describe()})`);
    if (pending(app) !== undefined) throw new Error(`${app} still says pendingRollout ${pending(app)} when settled`);
  }
  const snapshot = world.governance.budget.snapshot();
  if (snapshot.inProgress.length > 0 || snapshot.queue.length > 0) throw new Error(`the budget is not empty when settled: ${describe()}`);
  return { contentRollouts, queuedSeen, restarts };
}

/** Options of {@link checkRolloutModel}. */
export interface RolloutModelOptions {
  readonly numRuns: number;
  /** Replays a failure: the seed fast-check printed. @default a fresh seed */
  readonly seed?: number;
  /** With `seed`, the shrink path fast-check printed. */
  readonly path?: string;
  /** Steps per run at most. @default 80 */
  readonly maxSteps?: number;
}

/**
 * Checks {@link runRolloutModel} over `numRuns` random runs. A failure throws fast-check's report: the seed and path
 * to replay it (`ROLLOUT_MODEL_SEED`/`ROLLOUT_MODEL_PATH` in the test, `--seed` in `npm run soak`) and the shrunk
 * counterexample. Answers the seed and totals over the runs.
 */
export async function checkRolloutModel(options: RolloutModelOptions): Promise<{ seed: number } & RunStats> {
  const seed = options.seed ?? (Date.now() ^ (Math.random() * 0x100000000)) | 0;
  const totals = { contentRollouts: 0, queuedSeen: 0, restarts: 0 };
  await fc.assert(
    fc.asyncProperty(settingsArbitrary, stepsArbitrary(options.maxSteps ?? 80), async (settings, steps) => {
      const stats = await runRolloutModel(steps, settings);
      totals.contentRollouts += stats.contentRollouts;
      totals.queuedSeen += stats.queuedSeen;
      totals.restarts += stats.restarts;
    }),
    { numRuns: options.numRuns, seed, path: options.path, endOnFailure: false, includeErrorInReport: true },
  );
  return { seed, ...totals };
}
