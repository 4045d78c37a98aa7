// The workload reconcile: a Deployment, StatefulSet or DaemonSet that opted in rolls, once, on new content of what it uses.
import { FIELD_MANAGER, GROUP, KIND } from '../../api/customapp.js';
import { LAST_ROLLOUT_ANNOTATION, RUNNING_HASHES_ANNOTATION, TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import type { WritableCache } from '../cache/fresh-cache.js';
import type { Reconciler, Request, Result } from '../controller/reconciler.js';
import type { DependencyRef, DependencySource, DependencyState } from '../dependencies/source.js';
import type { EventRecorder, EventType } from '../events/recorder.js';
import type { Gate, RolloutGovernance } from '../governance/governance.js';
import { type ContentChange, describeChanges } from '../governance/rollout-cause.js';
import { hasEnded, occupiesSlot } from '../governance/rollout-progress.js';
import type { WriteClient } from '../kube/client.js';
import { decodeHashes, encodeHashes, hashKey, type RunningHashes } from '../podtemplate/hash-annotation.js';
import { type ArgoRollout, workloadRefProblem } from './argo-rollout.js';
import { encodeWorkloadRollout, lastWorkloadRollout, type WorkloadRollout } from './last-rollout.js';
import { workloadProgress } from './progress.js';
import { WORKLOAD_REASONS } from './reasons.js';
import { type ReloadSpec, reloadSpec, type WorkloadReference } from './reload-annotations.js';
import { parseWorkloadKey, WORKLOAD_RESOURCES, type Workload, type WorkloadKind } from './workload.js';

/** What the workload reconcile reads and writes through. */
export interface WorkloadWorld {
  readonly client: Pick<WriteClient, 'patch'>;
  /**
   * The (trimmed) cache of each kind served, by `namespace/name`, read through this reconciler's own writes: a reconcile
   * that runs again before the watch delivers its write (a trigger that came while it was in flight) must see the
   * rollout it started, or it would take it for one not started and free its slot of the budget, or roll it twice.
   */
  readonly workloads: Partial<Record<WorkloadKind, WritableCache<Workload>>>;
  /** The same registry as the CustomApps': a workload acquires its refs under its workload key. */
  readonly dependencies: DependencySource;
  readonly recorder: EventRecorder;
  /** The same governance as the CustomApps': one budget, the same breakers. */
  readonly governance: RolloutGovernance;
  /** Wall clock, for the rollout record. @default () => new Date() */
  readonly now?: () => Date;
}

/** What one reconcile writes, gathered so that it is one merge patch. */
interface Writes {
  readonly annotations: Record<string, string | null>;
  template?: string;
  /** Events to post once the write succeeded. */
  readonly events: [EventType, string, string][];
  /** What to remember once the write succeeded (what was reported, an outcome counted): a 409 forgets it all. */
  readonly after: (() => void)[];
}

/**
 * Reconciles one workload key (`Kind/namespace/name`) from caches only, with at most one write, a JSON merge patch
 * guarded by the cached resourceVersion (a 409 is retried on the newer object):
 *
 * 1. **Gone** from the cache (deleted; no finalizer of ours holds users' objects), or **not opted in**: release its refs
 *    and its place in the budget; remove the `running-hashes` record when one is left, so that opting in again rolls
 *    nothing.
 * 2. **References** (`reload-annotations.ts`): `use` them; one not synced yet ends the reconcile (its first `changes`
 *    emission queues the key again).
 * 3. **First sight** (no record): the content now is the baseline, recorded on the workload's metadata, never its pod
 *    template: opting in, and installing over workloads annotated for Reloader, roll nothing.
 * 4. **New content** (an object's hash differs from the record, and it exists): the governance decides (pause and
 *    debounce by annotation, flap breaker, the budget shared with CustomApps); rolling writes the hashes into the pod
 *    template and the record, with the rollout in `app.example.com/last-rollout`, in one write. A restart compares
 *    the record with the content: it rolls what changed while the operator was down, and nothing else.
 * 5. **Outcome**: a rollout of ours seen to end (by the kind's `kubectl rollout status` rules) is recorded in
 *    `last-rollout` with an Event, and frees its slot.
 * Bad annotations and missing (non-optional) objects get one Warning Event when they begin, never an error.
 */
export class WorkloadReconciler implements Reconciler {
  private readonly now: () => Date;
  /** Per key: the Warning messages already posted (posted again only when they change). */
  private readonly reported = new Map<string, string>();
  /** Per key: why its rollout waits, as last posted (an Event when a wait begins, not at every reconcile). */
  private readonly waiting = new Map<string, string>();

  constructor(private readonly world: WorkloadWorld) {
    this.now = world.now ?? (() => new Date());
  }

  async reconcile(request: Request): Promise<Result> {
    const parsed = parseWorkloadKey(request.key);
    const cache = parsed && this.world.workloads[parsed.kind];
    if (!parsed || !cache) throw new Error(`workload reconcile: ${JSON.stringify(request.key)} is not the key of a workload served`);
    const { kind, namespace, name } = parsed;
    const workload = cache.get(`${namespace}/${name}`);
    if (!workload) {
      this.forget(request.key);
      request.log.debug('not in cache: released');
      return {};
    }
    const owner = controllingCustomApp(workload);
    const annotated = reloadSpec(workload.metadata.annotations, workload.spec.template);
    // A CustomApp's own Deployment rolls with its CustomApp: served here too, it would roll twice. A Rollout with a
    // workloadRef runs another workload's template: that workload is the one to annotate.
    const ignored = owner ? ownedProblem(owner) : kind === 'Rollout' ? workloadRefProblem(workload as ArgoRollout) : undefined;
    const spec = ignored && annotated.optedIn ? { ...annotated, optedIn: false, problems: [...annotated.problems, ignored] } : annotated;
    const writes: Writes = { annotations: {}, events: [], after: [] };
    const recorded = decodeHashes(workload.metadata.annotations?.[RUNNING_HASHES_ANNOTATION]);
    const last = lastWorkloadRollout(workload);
    const progress = workloadProgress(kind, workload, last?.templateGeneration);
    const rolling = last?.result === 'InProgress' && occupiesSlot(progress);
    if (last?.result === 'InProgress' && hasEnded(progress)) this.ended(writes, kind, name, last, progress);

    if (!spec.optedIn || spec.refs.length === 0 || workload.metadata.deletionTimestamp) {
      this.world.dependencies.release(request.key);
      this.waiting.delete(request.key);
      this.warn(request.key, writes, spec.problems, []);
      if (workload.metadata.annotations?.[RUNNING_HASHES_ANNOTATION] !== undefined) writes.annotations[RUNNING_HASHES_ANNOTATION] = null;
      await this.write(request, kind, cache, workload, writes);
      this.world.governance.settle(request.key, { rolling, waiting: false });
      return {};
    }

    const refs = spec.refs.map((ref) => dependencyRef(ref, namespace));
    this.world.dependencies.use(request.key, refs);
    const states = await Promise.all(refs.map((ref) => this.world.dependencies.state(ref)));
    if (states.some((state) => state === undefined)) {
      request.log.debug('a reference is not synced yet');
      return {};
    }
    const current = currentHashes(spec.refs, states as DependencyState[]);
    this.warn(request.key, writes, spec.problems, missingReferences(spec.refs, states as DependencyState[]));

    let result: Result = {};
    let waits = false;
    if (!recorded) {
      // First sight: the baseline, on the workload's metadata (rolls nothing).
      writes.annotations[RUNNING_HASHES_ANNOTATION] = encodeHashes(current);
      request.log.info({ objects: current.size }, 'workload.baseline');
    } else {
      ({ result, waits } = await this.rollOrWait(
        request,
        { ...parsed, generation: workload.metadata.generation },
        spec,
        refs,
        recorded,
        current,
        rolling,
        writes,
      ));
    }
    await this.write(request, kind, cache, workload, writes);
    this.world.governance.settle(request.key, { rolling: rolling || writes.template !== undefined, waiting: waits });
    return result;
  }

  /**
   * A workload seen before: the content changes since its record, and for them the governance's verdict: roll (the
   * hashes into the template and the record, the rollout in `last-rollout`, an Event) or wait (an Event when the wait
   * begins; the record keeps only what is still running). With nothing changed, the record drops what is gone. `generation`
   * is the cached workload's, which the write's resourceVersion guard makes the stored one.
   */
  private async rollOrWait(
    request: Request,
    {
      kind,
      namespace,
      name,
      generation,
    }: { readonly kind: WorkloadKind; readonly namespace: string; readonly name: string; readonly generation: number | undefined },
    spec: Pick<ReloadSpec, 'refs' | 'paused' | 'debounceMs'>,
    refs: readonly DependencyRef[],
    recorded: RunningHashes,
    current: RunningHashes,
    rolling: boolean,
    writes: Writes,
  ): Promise<{ result: Result; waits: boolean }> {
    let result: Result = {};
    let waits = false;
    const wholeStates = await Promise.all(refs.map((ref) => this.world.dependencies.state({ ...ref, keys: undefined })));
    const base = rebased(spec.refs, recorded, current, wholeStates);
    const changes = contentChanges(base, current);
    const kept = keptHashes(spec.refs, base, current);
    if (changes.length === 0) {
      this.waiting.delete(request.key);
      if (encodeHashes(kept) !== encodeHashes(recorded)) writes.annotations[RUNNING_HASHES_ANNOTATION] = encodeHashes(kept);
    } else {
      const gate = this.world.governance.gate({
        key: request.key,
        namespace,
        changes,
        paused: spec.paused,
        debounceMs: spec.debounceMs,
        rolling,
      });
      const change = describeChanges(changes);
      if (gate.verdict === 'roll') {
        this.waiting.delete(request.key);
        request.log.info({ change, inProgress: gate.inProgress, limit: gate.limit }, 'rollout.granted');
        const next = new Map([...kept, ...[...current].filter(([, hash]) => hash !== null)]);
        const rollout: WorkloadRollout = {
          trigger: changes[0]!.kind,
          changes,
          // The patch carries the cached resourceVersion: it applies to exactly this generation, or is refused (409).
          ...(generation !== undefined ? { templateGeneration: generation + 1 } : {}),
          startTime: this.now().toISOString(),
          result: 'InProgress',
        };
        writes.annotations[RUNNING_HASHES_ANNOTATION] = encodeHashes(next);
        writes.annotations[LAST_ROLLOUT_ANNOTATION] = encodeWorkloadRollout(rollout);
        writes.template = encodeHashes(next);
        writes.events.push(['Normal', WORKLOAD_REASONS.rolloutTriggered, `Rolling out ${kind} "${name}": ${change}`]);
      } else {
        const { verdict: _verdict, ...details } = gate;
        request.log.info({ change, ...details }, 'rollout.waiting');
        this.waitEvent(request.key, writes, gate, change);
        waits = gate.reason === 'Queued';
        if (encodeHashes(kept) !== encodeHashes(recorded)) writes.annotations[RUNNING_HASHES_ANNOTATION] = encodeHashes(kept);
        if (gate.reason === 'Flapping' || gate.reason === 'Debouncing') result = { requeueAfterMs: gate.requeueAfterMs };
      }
    }
    return { result, waits };
  }

  /** The workload is gone: releases what its key holds, its place in the budget, and what was reported of it. */
  private forget(key: string): void {
    this.world.dependencies.release(key);
    this.world.governance.forget(key);
    this.forgetReports(key);
  }

  /**
   * Forgets the Warnings and waits posted for `key`, so that they are posted again if they recur: for a workload gone,
   * or one another shard took over (which reports it itself; should it come back, this one reports afresh).
   */
  forgetReports(key: string): void {
    this.waiting.delete(key);
    this.reported.delete(key);
  }

  /** Records the end of the rollout `last`: the annotation's result, an Event, the outcome metric. */
  private ended(
    writes: Writes,
    kind: WorkloadKind,
    name: string,
    last: WorkloadRollout,
    progress: { phase: string; message?: string },
  ): void {
    const result = progress.phase === 'Failed' ? 'Failed' : 'Succeeded';
    const completed: WorkloadRollout = {
      ...last,
      result,
      completionTime: this.now().toISOString(),
      ...(progress.message && result === 'Failed' ? { message: progress.message } : {}),
    };
    writes.annotations[LAST_ROLLOUT_ANNOTATION] = encodeWorkloadRollout(completed);
    const change = describeChanges(last.changes);
    writes.events.push(
      result === 'Failed'
        ? ['Warning', WORKLOAD_REASONS.rolloutFailed, `Rollout of ${change} failed: ${progress.message ?? 'no progress'}`]
        : ['Normal', WORKLOAD_REASONS.rolloutSucceeded, `Rolled out ${kind} "${name}": ${change}`],
    );
    writes.after.push(() => this.world.governance.ended(last.trigger, result));
  }

  /** One Warning per problem set when it begins (bad annotations, missing objects); nothing while it stays the same. */
  private warn(key: string, writes: Writes, problems: readonly string[], missing: readonly string[]): void {
    const signature = JSON.stringify([problems, missing]);
    if (this.reported.get(key) === signature) return;
    // Nothing to report of most workloads (not opted in): they take no entry.
    if (problems.length === 0 && missing.length === 0) {
      writes.after.push(() => this.reported.delete(key));
      return;
    }
    writes.after.push(() => this.reported.set(key, signature));
    if (problems.length > 0) writes.events.push(['Warning', WORKLOAD_REASONS.annotationInvalid, problems.join('; ')]);
    if (missing.length > 0) writes.events.push(['Warning', WORKLOAD_REASONS.referenceMissing, missing.join('; ')]);
  }

  /** An Event when a wait begins (or its reason changes): queued, waiting for a flapping object (its breaker open), paused. */
  private waitEvent(key: string, writes: Writes, gate: Exclude<Gate, { verdict: 'roll' }>, change: string): void {
    if (this.waiting.get(key) === gate.reason) return;
    writes.after.push(() => this.waiting.set(key, gate.reason));
    if (gate.reason === 'Queued') {
      writes.events.push([
        'Normal',
        WORKLOAD_REASONS.rolloutQueued,
        `Rollout of ${change} queued at position ${gate.position} of ${gate.queued}: ${gate.inProgress} of ${gate.limit} rollouts in progress (--max-concurrent-rollouts)`,
      ]);
    } else if (gate.reason === 'Flapping') {
      writes.events.push([
        'Warning',
        WORKLOAD_REASONS.rolloutHeld,
        `${gate.kind} "${gate.name}" is flapping: ${gate.changes} content changes within ${gate.windowMs / 1000}s (more than ${gate.threshold}); the rollout is held until it has not changed for ${gate.windowMs / 1000}s`,
      ]);
    } else if (gate.reason === 'Paused') {
      writes.events.push(['Normal', WORKLOAD_REASONS.rolloutPaused, `Rollout of ${change} paused by app.example.com/rollout-paused`]);
    }
  }

  /**
   * The one write (a merge patch guarded by resourceVersion), then its Events and what it lets the reconciler remember;
   * no request when nothing differs. The API's answer goes into `cache`, so that the next reconcile reads it. A failed
   * write (a 409 on a stale cache) posts and remembers nothing: the retry computes it all again.
   */
  private async write(
    request: Request,
    kind: WorkloadKind,
    cache: WritableCache<Workload>,
    workload: Workload,
    writes: Writes,
  ): Promise<void> {
    const { metadata } = workload;
    const resource = WORKLOAD_RESOURCES[kind];
    if (Object.keys(writes.annotations).length > 0 || writes.template !== undefined) {
      const patch = {
        metadata: { resourceVersion: metadata.resourceVersion, annotations: writes.annotations },
        ...(writes.template !== undefined
          ? { spec: { template: { metadata: { annotations: { [TEMPLATE_HASHES_ANNOTATION]: writes.template } } } } }
          : {}),
      };
      const started = performance.now();
      try {
        cache.wrote(
          await this.world.client.patch<Workload>(resource, metadata.namespace, metadata.name!, 'merge', patch, {
            fieldManager: FIELD_MANAGER,
          }),
        );
      } catch (error) {
        request.log.info({ verb: 'patch', resource: `${resource.plural}.${resource.group}`, failed: (error as Error).message }, 'write');
        throw error;
      }
      request.log.info(
        {
          verb: 'patch',
          resource: `${resource.plural}.${resource.group}`,
          durationMs: Math.round((performance.now() - started) * 100) / 100,
          annotations: Object.keys(writes.annotations),
          rollout: writes.template !== undefined,
        },
        'write',
      );
    }
    const involved = {
      apiVersion: `${resource.group}/${resource.version}`,
      kind,
      name: metadata.name!,
      namespace: metadata.namespace!,
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
    };
    for (const [type, reason, message] of writes.events) this.world.recorder.post(involved, type, reason, message, request.log);
    for (const remember of writes.after) remember();
  }
}

/** The name of the CustomApp that controls `workload`, if one does. */
function controllingCustomApp(workload: Workload): string | undefined {
  const reference = workload.metadata.ownerReferences?.find((ref) => ref.controller === true);
  return reference?.kind === KIND && reference.apiVersion.split('/')[0] === GROUP ? reference.name : undefined;
}

function ownedProblem(owner: string): string {
  return `controlled by ${KIND} "${owner}", which rolls it on its own ConfigMap and Secret: the reload annotations are ignored`;
}

/** The registry's ref of a workload's reference: with its keys, so that only their change rolls it. */
function dependencyRef(ref: WorkloadReference, namespace: string): DependencyRef {
  return { kind: ref.kind, namespace, name: ref.name, ...(ref.keys ? { keys: ref.keys } : {}) };
}

/** A required reference whose keys are not all there: the kubelet would not start a new pod with it. */
function unusable(ref: WorkloadReference, state: DependencyState): boolean {
  return !ref.optional && (!state.exists || (state.missingKeys?.length ?? 0) > 0);
}

/**
 * Each referenced object's hash now (of the keys the template reads, when it names them), or null while it cannot be
 * rolled to: missing, or missing a key the template requires (new pods would not start; the running ones keep what
 * they have, and its return with other content rolls).
 */
function currentHashes(refs: readonly WorkloadReference[], states: readonly DependencyState[]): Map<string, string | null> {
  return new Map(
    refs.map((ref, index) => {
      const state = states[index]!;
      return [hashKey(ref.kind, ref.name), state.exists && !unusable(ref, state) ? state.hash : null];
    }),
  );
}

/** The Warning lines of required references missing, or missing keys the pod template reads. */
function missingReferences(refs: readonly WorkloadReference[], states: readonly DependencyState[]): string[] {
  return refs.flatMap((ref, index) => {
    const state = states[index]!;
    if (!unusable(ref, state)) return [];
    if (!state.exists) return [`${ref.kind} "${ref.name}" does not exist (the pod template uses it without optional: true)`];
    const keys = state.missingKeys!.map((key) => JSON.stringify(key)).join(', ');
    return [`${ref.kind} "${ref.name}" has no key ${keys} (the pod template reads it without optional: true)`];
  });
}

/**
 * The record, with the hash of an object the template reads by keys taken as the hash of those keys when it is the
 * whole object's hash now: a record written over the whole object (before the template named keys, or by an operator
 * without key-level triggers) is the same content, not a change, and rolls nothing.
 */
function rebased(
  refs: readonly WorkloadReference[],
  recorded: RunningHashes,
  current: ReadonlyMap<string, string | null>,
  wholeStates: readonly (DependencyState | undefined)[],
): RunningHashes {
  const record = new Map(recorded);
  refs.forEach((ref, index) => {
    const key = hashKey(ref.kind, ref.name);
    const whole = wholeStates[index];
    if (ref.keys && whole?.exists && record.get(key) === whole.hash) record.set(key, current.get(key) ?? null);
  });
  return record;
}

/**
 * The objects whose content differs from the record: those that exist now with another hash than recorded (null:
 * created since). An object referenced for the first time is no change (its content now is its baseline), nor is
 * one deleted (pods keep what they run with; if it comes back with other content, that rolls).
 */
function contentChanges(recorded: RunningHashes, current: ReadonlyMap<string, string | null>): ContentChange[] {
  const changes: ContentChange[] = [];
  for (const [key, hash] of current) {
    const before = recorded.get(key);
    if (before === undefined || hash === null || hash === before) continue;
    const slash = key.indexOf('/');
    changes.push({
      kind: key.slice(0, slash) as ContentChange['kind'],
      name: key.slice(slash + 1),
      ...(before ? { from: before } : {}),
      to: hash,
    });
  }
  return changes;
}

/**
 * The record without changes rolled: the recorded hash of each object still referenced, the current one (or null)
 * for one referenced for the first time; objects no longer referenced are dropped.
 */
function keptHashes(
  refs: readonly WorkloadReference[],
  recorded: RunningHashes,
  current: ReadonlyMap<string, string | null>,
): Map<string, string | null> {
  const kept = new Map<string, string | null>();
  for (const ref of refs) {
    const key = hashKey(ref.kind, ref.name);
    kept.set(key, recorded.has(key) ? recorded.get(key)! : (current.get(key) ?? null));
  }
  return kept;
}
