// The CustomApp reconcile, as an outline of its steps: finalizer, dependencies, Deployment, Service, status.
import type { Reconciler, Request, Result } from '../controller/reconciler.js';
import { findCondition } from './conditions.js';
import { blocking } from './projections.js';
import { completeHandoff, acquireAndReadDependencies, refsToAcquire } from './dependencies-step.js';
import { reconcileDeployment } from './deployment-step.js';
import { currentRollout } from '../governance/rollout-progress.js';
import type { CustomApp } from '../customapp/custom-app.js';
import { isControlledBy } from '../customapp/labels.js';
import { rolloutCauseProblem } from '../governance/rollout-cause.js';
import { ROLLOUT_ANNOTATION } from '../../api/customapp.js';
import { countRolloutOutcome, rolloutEvents, settleRollout } from './rollout-step.js';
import { rollsForContent } from './rollout-standings.js';
import { ensureFinalizer, finalize } from './finalizer-step.js';
import { REASONS } from './reasons.js';
import { ReconcileScope, type ReconcileWorld } from './scope.js';
import { reconcileService } from './service-step.js';
import { desiredStatus } from './status.js';
import { reportFailure, writeStatus } from './status-step.js';

/** Options of {@link CustomAppReconciler}: the world it reads and writes, and its two tunables. */
export interface CustomAppReconcilerOptions extends Omit<ReconcileWorld, 'now'> {
  /** Wall clock, for condition transition times and Events. @default () => new Date() */
  readonly now?: () => Date;
  /**
   * How often a CustomApp whose Deployment or Service name is taken by an object it does not own is looked at again
   * (no watch sees an unlabelled foreign object go away). @default 30_000
   */
  readonly notOwnedRetryMs?: number;
}

export type { WritableCache } from './scope.js';

/** What the Deployment step answers. */
type Deployed = Awaited<ReturnType<typeof reconcileDeployment>>;

/** The dependencies read, once all are synced. */
type Dependencies = Exclude<Awaited<ReturnType<typeof acquireAndReadDependencies>>, 'pending'>;

/**
 * Reconciles one CustomApp key from caches only (the CustomApp, its Deployment and Service come from the informers,
 * ConfigMaps and Secrets from the {@link DependencySource}; a GET happens only to resolve an AlreadyExists), in this
 * order, one step per file:
 *
 * 1. **Gone** from the cache: release its dependencies (idempotent) and stop.
 * 2. **Being deleted** (`finalizer-step.ts`): release its dependencies, then remove the finalizer; the Deployment and
 *    Service go by garbage collection (their controller ownerReference).
 *    Gone or being deleted, it leaves its place in the budget's queue, but keeps its slot while its Deployment still
 *    rolls for content: the Deployment controller goes on rolling it until the garbage collector deletes it (seconds),
 *    and those pods count against `--max-concurrent-rollouts` as any others; the Deployment's end or deletion queues
 *    the key again, which frees the slot.
 * 3. **Finalizer** (`finalizer-step.ts`): add it if missing. Its patch is sent before anything is acquired or written,
 *    and the status step waits for its answer; the Deployment and Service steps run while it is in flight (a
 *    CustomApp deleted before its finalizer lands leaves the cache, and its next reconcile releases what it acquired).
 * 4. **Dependencies** (`dependencies-step.ts`): `use` the spec's references, plus the ones in `status.observed*`
 *    while a reference change is handed off. A reference not synced yet ends the reconcile: its first `changes`
 *    emission queues the key again. A missing one makes the rollout **wait for it** (Ready False `RolloutHeld`, one Event per message); its
 *    creation queues the key again.
 * 5. **Deployment** (`deployment-step.ts`), then **Service** (`service-step.ts`). A rollout caused by ConfigMap or
 *    Secret content alone asks the governance first (`rollout-step.ts`: pause, flap breaker, debounce, budget); a
 *    spec change rolls at once. The budget learns whether the Deployment still rolls (its slot frees when not) right
 *    after the Deployment step, so that a failing Service step cannot keep a slot.
 * 6. **Status** (`status-step.ts`), only when it changed, with `lastRollout` and `pendingRollout` and an Event when a
 *    rollout is queued, waits for a reference or a flapping object, is paused or failed; then `use` the spec's references alone, which releases the
 *    old ones of a handoff only after the new ones were rolled out and recorded in `status.observed*`.
 *
 * A rollout that waits for a flapping object or a debounce returns `{ requeueAfterMs }` for when it may go; one queued
 * for the budget is queued again by the budget when a slot frees; a paused one, by the spec change that unpauses it.
 *
 * A 409 from any write propagates; the controller requeues the key with the rate limiter. Any other failure of a
 * child write is reported in status and by an Event before it propagates.
 */
export class CustomAppReconciler implements Reconciler {
  private readonly world: ReconcileWorld;
  private readonly notOwnedRetryMs: number;
  /** Keys whose status write was left for a second pass: that pass writes it, busy or not. */
  private readonly deferred = new Set<string>();

  constructor(options: CustomAppReconcilerOptions) {
    this.world = { ...options, now: options.now ?? (() => new Date()) };
    this.notOwnedRetryMs = options.notOwnedRetryMs ?? 30_000;
  }

  async reconcile(request: Request): Promise<Result> {
    const cached = this.world.apps.get(request.key);
    if (!cached) return this.forgetGone(request);
    const scope = new ReconcileScope(this.world, request, cached);
    if (cached.metadata.deletionTimestamp) {
      this.leave(request.key, cached);
      await finalize(scope);
      return {};
    }
    // The finalizer update is sent first, and the steps up to the Service do not wait for its answer: they need the
    // CustomApp's uid and spec, which it does not change. The status step does wait (its patch is guarded by the
    // resourceVersion the finalizer update answers), and so does every way out: its failure fails the reconcile.
    const finalizer = scope.step('finalizer', () => ensureFinalizer(scope));
    finalizer.catch(() => undefined);

    const refs = refsToAcquire(scope.app, this.world.deployments.get(request.key));
    const dependencies = await scope.step('dependencies', () => acquireAndReadDependencies(scope, refs));
    if (dependencies === 'pending') {
      await finalizer;
      request.log.debug({ configMap: scope.app.spec.configMapName, secret: scope.app.spec.secretName }, 'waiting for dependency sync');
      return {};
    }
    const { configMap, secret, projected } = dependencies;
    const waitsForRefs =
      configMap.phase === 'missing' || secret.phase === 'missing' || projected.some((view) => blocking(view) !== undefined);

    const { deployment, rollout, service } = await this.reconcileChildren(scope, finalizer, waitsForRefs, dependencies);
    await finalizer;
    if (this.deferStatus(request.key, deployment)) {
      request.log.debug('status deferred: other keys wait');
      return { requeueNow: true };
    }

    const computeStarted = performance.now();
    const previous = scope.app.status ?? {};
    const next = desiredStatus({
      app: scope.app,
      configMap,
      secret,
      projected,
      deployment: deployment.view,
      rolledOut: deployment.rolledOut,
      service,
      waiting: deployment.waiting,
      rollout,
      now: scope.timestamp(),
    });
    const ready = findCondition(next.conditions, 'Ready')!;
    this.world.steps?.('status desired', (performance.now() - computeStarted) / 1000);
    if (waitsForRefs && findCondition(previous.conditions, 'Ready')?.message !== ready.message) {
      scope.event('Warning', REASONS.rolloutHeld, ready.message);
    }
    await rolloutEvents(scope, previous, next, deployment.waiting, rollout);
    await scope.step('status', () => writeStatus(scope, next));
    countRolloutOutcome(scope, previous, next);
    if (deployment.rolledOut) completeHandoff(scope, refs);
    return this.retryLater(deployment, service);
  }

  /** Gone from the cache: nothing is left to write, so what it acquired, its deferral and its slot (see {@link leave}) are let go. */
  private forgetGone(request: Request): Result {
    this.deferred.delete(request.key);
    this.world.dependencies.release(request.key);
    this.leave(request.key, undefined);
    request.log.debug('not in cache: released');
    return {};
  }

  /**
   * A CustomApp deleted (`app`), or gone (undefined) leaves the budget's queue, and its slot once its Deployment no longer
   * rolls for content ({@link rollsForContent}): until the garbage collector deletes that Deployment, its controller
   * keeps rolling it.
   */
  private leave(key: string, app: CustomApp | undefined): void {
    this.world.governance.settle(key, { rolling: rollsForContent(this.world.deployments.get(key), app), waiting: false });
  }

  /**
   * The Deployment step, the budget told where the rollout stands, then the Service step. A failure is reported in
   * status and by an Event (once the finalizer update has answered) and propagates.
   */
  private async reconcileChildren(
    scope: ReconcileScope,
    finalizer: Promise<unknown>,
    waitsForRefs: boolean,
    { configMap, secret, projected }: Dependencies,
  ): Promise<{ deployment: Deployed; rollout: ReturnType<typeof currentRollout>; service: Awaited<ReturnType<typeof reconcileService>> }> {
    let deployment: Deployed | undefined;
    let rollout: ReturnType<typeof currentRollout>;
    let service: Awaited<ReturnType<typeof reconcileService>>;
    try {
      deployment = await scope.step('deployment', () => reconcileDeployment(scope, waitsForRefs, configMap, secret, projected));
      // The budget learns where the app stands from its Deployment's rollout alone, before the Service step: a Service
      // that cannot be written (a quota, an admission webhook) must not keep a slot after the rollout is over.
      const live = deployment.view.phase === 'owned' ? deployment.view.deployment : undefined;
      rollout = currentRollout(live, scope.app.status?.lastRollout);
      settleRollout(scope, rollout, deployment.waiting);
      // Anyone who may edit the Deployment may edit its cause annotation: what does not fit the status is left out.
      const ignored = rolloutCauseProblem(live);
      if (ignored) scope.request.log.warn({ annotation: ROLLOUT_ANNOTATION, problem: ignored }, 'rollout.cause.ignored');
      service = await scope.step('service', () => reconcileService(scope));
    } catch (error) {
      // A Deployment step that failed (an update refused) still tells the budget what the cached Deployment says: the
      // slot of a rollout that is over frees; a grant not yet written stays for the retry.
      if (!deployment) {
        const live = this.world.deployments.get(scope.request.key);
        if (live && isControlledBy(live, scope.app)) this.world.governance.settleSlot(scope.request.key, rollsForContent(live, scope.app));
      }
      await finalizer.catch(() => undefined);
      await reportFailure(scope, error);
      throw error;
    }
    return { deployment, rollout, service };
  }

  /** When to look at the key again, if ever: the soonest of a foreign object's retry and a waiting rollout's gate. */
  private retryLater(deployment: Deployed, service: Awaited<ReturnType<typeof reconcileService>>): Result {
    // No watch sees a foreign (unlabelled) Deployment or Service go away: look again later. A flapping object or a
    // debounce comes back when it will have been quiet long enough (the breaker needs no timer of its own).
    const retryMs = [
      deployment.view.phase === 'notOwned' || service.phase === 'notOwned' ? this.notOwnedRetryMs : undefined,
      deployment.waiting && 'requeueAfterMs' in deployment.waiting.gate ? deployment.waiting.gate.requeueAfterMs : undefined,
    ].filter((ms): ms is number => ms !== undefined);
    return retryMs.length > 0 ? { requeueAfterMs: Math.min(...retryMs) } : {};
  }

  /**
   * Whether to leave the status write of a reconcile that rolled an existing Deployment for a second pass, queued
   * behind the keys that wait (`{ requeueNow }`): a ConfigMap shared by many CustomApps then has every Deployment
   * written before any status, and its pods start rolling sooner. Only a plain rollout (not waiting for a reference nor for the
   * governance) is deferred, and only once: the second pass writes the status even if keys still wait, so a steady
   * load cannot starve it. Nothing is lost: the second pass computes the status from the caches, as any reconcile does.
   * A rollout that waits for a missing reference writes no Deployment, so `updated` alone leaves it out.
   */
  private deferStatus(key: string, deployment: { readonly updated?: boolean; readonly waiting?: unknown }): boolean {
    if (this.deferred.delete(key)) return false;
    if (!deployment.updated || deployment.waiting || !this.world.busy?.()) return false;
    this.deferred.add(key);
    return true;
  }
}
