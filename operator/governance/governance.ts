// Rollout governance: the budget, the flap breakers and the per-app settings decide when a dependency-triggered rollout may start.
import type { Registry } from 'prom-client';
import type { Observable } from 'rxjs';
import type { PendingReason, RolloutTrigger } from '../../api/customapp.js';
import { type DependencyKind, type DependencyState, refKey } from '../dependencies/source.js';
import type { Logger } from '../log.js';
import { FlapBreaker } from './flap-breaker.js';
import { registerGovernanceMetrics, type RolloutOutcome } from './governance-metrics.js';
import { RolloutBudget, type Standing } from './rollout-budget.js';
import type { ContentChange } from './rollout-cause.js';

/** The governance's settings: the command line's `--max-concurrent-rollouts`, `--flap-threshold`, `--flap-window`. */
export interface RolloutSettings {
  /** Dependency-triggered rollouts in progress at once, cluster-wide; 0 = unlimited. @default 10 */
  readonly maxConcurrentRollouts?: number;
  /** More content changes than this of one object within the window open its breaker; 0 = no breaker. @default 5 */
  readonly flapThreshold?: number;
  /** The flap window, ms: how far back changes count, and how long an object must be quiet to close. @default 60_000 */
  readonly flapWindowMs?: number;
}

/** The defaults of {@link RolloutSettings}: on, as the command line's. */
export const DEFAULT_ROLLOUT_SETTINGS: Required<RolloutSettings> = { maxConcurrentRollouts: 10, flapThreshold: 5, flapWindowMs: 60_000 };

/** Governance off: no budget, no breaker (envtest and the benchmark, where no Deployment ever completes). */
export const UNGOVERNED: Required<RolloutSettings> = { maxConcurrentRollouts: 0, flapThreshold: 0, flapWindowMs: 60_000 };

/** Options of {@link RolloutGovernance}. */
export interface RolloutGovernanceOptions {
  readonly settings?: RolloutSettings;
  /** The clock, ms since the epoch (the scheduler's `now` in the operator, virtual time in tests). */
  readonly now: () => number;
  readonly logger: Logger;
  /** Where the metrics go. @default not exported */
  readonly metrics?: Registry;
  /** Whether some CustomApp references a ref (by `refKey`), so that the breaker forgets the others. @default all kept */
  readonly referenced?: (ref: string) => boolean;
}

/** What the reconcile asks about one CustomApp whose Deployment runs older ConfigMap or Secret content. */
export interface GateRequest {
  readonly key: string;
  readonly namespace: string;
  /** The content changes waiting to be rolled out (at least one). */
  readonly changes: readonly ContentChange[];
  /** `spec.rollout.paused`. */
  readonly paused: boolean;
  /** `spec.rollout.debounceSeconds`, in ms. */
  readonly debounceMs: number;
  /** Its Deployment is still in a dependency-triggered rollout (by its status). */
  readonly rolling: boolean;
}

/**
 * Where one governed key (a CustomApp, a workload) stands in the cluster, as its domain reads it from the caches for
 * {@link RolloutGovernance.rebuild}: whether its pods are in a dependency-triggered rollout, and what it recorded of a
 * rollout that waits (a CustomApp's `status.pendingRollout`).
 */
export interface RolloutStanding {
  readonly key: string;
  readonly namespace: string;
  /** Its workload is in a rollout caused by ConfigMap or Secret content, in progress: it occupies a slot. */
  readonly rolling: boolean;
  /** The rollout it recorded as waiting, if any. */
  readonly pending?: {
    readonly reason: PendingReason;
    readonly trigger: DependencyKind;
    readonly name: string;
    /** RFC 3339: when it began to wait. */
    readonly since: string;
  };
}

/** The answer: roll now, or wait, and why. */
export type Gate =
  | { readonly verdict: 'roll'; readonly inProgress: number; readonly limit: number }
  | { readonly verdict: 'wait'; readonly reason: 'Paused' }
  | {
      readonly verdict: 'wait';
      readonly reason: 'Flapping';
      /** The flapping object. */
      readonly kind: DependencyKind;
      readonly name: string;
      /** Its content changes within the window. */
      readonly changes: number;
      readonly threshold: number;
      readonly windowMs: number;
      /** When it will have been quiet for the window. */
      readonly requeueAfterMs: number;
    }
  | { readonly verdict: 'wait'; readonly reason: 'Debouncing'; readonly debounceMs: number; readonly requeueAfterMs: number }
  | {
      readonly verdict: 'wait';
      readonly reason: 'Queued';
      readonly position: number;
      readonly queued: number;
      readonly inProgress: number;
      readonly limit: number;
      /** When it joined the queue (ms since the epoch). */
      readonly since: number;
    };

/**
 * Decides whether a rollout caused by ConfigMap or Secret content may start, in this order: `spec.rollout.paused`,
 * an open flap breaker on a changed object, the app's debounce, then the cluster-wide budget. A spec change never asks
 * (it rolls at once). What it keeps in memory (the budget's slots and queue, the breakers' change times) is rebuilt
 * from the cluster by {@link rebuild} before the workers start: the slots from the Deployments (the cause annotation
 * and the rollout status), the queue from each CustomApp's `status.pendingRollout` (reason Queued, ordered by `since`),
 * and the breakers that were open from `status.pendingRollout` (reason Flapping), re-opened for a full window.
 */
export class RolloutGovernance {
  readonly budget: RolloutBudget;
  readonly breaker: FlapBreaker;
  readonly settings: Required<RolloutSettings>;
  /** CustomApp keys to reconcile because a slot of the budget is free for them. */
  readonly eligible: Observable<string>;
  private readonly countOutcome: (trigger: RolloutTrigger, result: RolloutOutcome) => void;

  constructor(private readonly options: RolloutGovernanceOptions) {
    this.settings = { ...DEFAULT_ROLLOUT_SETTINGS, ...options.settings };
    this.budget = new RolloutBudget(this.settings.maxConcurrentRollouts);
    this.breaker = new FlapBreaker({
      threshold: this.settings.flapThreshold,
      windowMs: this.settings.flapWindowMs,
      referenced: options.referenced,
    });
    this.eligible = this.budget.eligible;
    const view = {
      inProgress: () => this.budget.inProgress,
      queued: () => this.budget.queued,
      breakersOpen: () => this.breaker.openCount(this.options.now()),
    };
    this.countOutcome = options.metrics ? registerGovernanceMetrics(options.metrics, view) : () => undefined;
  }

  now(): number {
    return this.options.now();
  }

  /** Feeds the breakers: subscribe it to the DependencySource's `changes`. Logs `flap.open` when a breaker opens. */
  observe(state: DependencyState): void {
    const outcome = this.breaker.observe(state, this.options.now());
    if (outcome === 'opened') {
      const { ref } = state;
      this.options.logger.warn(
        {
          object: `${ref.kind.toLowerCase()} ${ref.namespace}/${ref.name}`,
          changes: this.breaker.threshold + 1,
          threshold: this.breaker.threshold,
          windowMs: this.breaker.windowMs,
        },
        'flap.open',
      );
    }
  }

  /** Whether the rollout of `request.changes` may start now; on `roll` the app occupies a slot until {@link settle}. */
  gate(request: GateRequest): Gate {
    const now = this.options.now();
    if (request.paused) return { verdict: 'wait', reason: 'Paused' };
    let flapping: Extract<Gate, { reason: 'Flapping' }> | undefined;
    for (const change of request.changes) {
      const state = this.breaker.check(refKey({ kind: change.kind, namespace: request.namespace, name: change.name }), now);
      if (state.open && (!flapping || state.quietInMs > flapping.requeueAfterMs)) {
        flapping = {
          verdict: 'wait',
          reason: 'Flapping',
          kind: change.kind,
          name: change.name,
          changes: state.changes,
          threshold: this.breaker.threshold,
          windowMs: this.breaker.windowMs,
          requeueAfterMs: Math.max(1, state.quietInMs),
        };
      }
    }
    if (flapping) return flapping;
    if (request.debounceMs > 0) {
      let waitMs = 0;
      for (const change of request.changes) {
        const last = this.breaker.lastChange(refKey({ kind: change.kind, namespace: request.namespace, name: change.name }));
        if (last !== undefined) waitMs = Math.max(waitMs, last + request.debounceMs - now);
      }
      if (waitMs > 0) return { verdict: 'wait', reason: 'Debouncing', debounceMs: request.debounceMs, requeueAfterMs: waitMs };
    }
    // With a budget, an app rolls for content once at a time: new content while its rollout is in progress waits at
    // the back of the queue (its latest content rolls once its current rollout is done). Without one, it rolls at once.
    const admission = request.rolling && this.budget.limit > 0 ? this.budget.wait(request.key, now) : this.budget.admit(request.key, now);
    if (admission.granted) return { verdict: 'roll', inProgress: this.budget.inProgress, limit: this.budget.limit };
    return {
      verdict: 'wait',
      reason: 'Queued',
      position: admission.position,
      queued: admission.queued,
      inProgress: admission.inProgress,
      limit: this.budget.limit,
      since: admission.since,
    };
  }

  /** Records where the app stands after its reconcile (see {@link RolloutBudget.settle}). */
  settle(key: string, standing: Standing): void {
    this.budget.settle(key, standing);
  }

  /** What the app's Deployment alone says when its reconcile failed before {@link settle} (see {@link RolloutBudget.settleSlot}). */
  settleSlot(key: string, rolling: boolean): void {
    this.budget.settleSlot(key, rolling);
  }

  /** The app is gone: its slot and its place free. */
  forget(key: string): void {
    this.budget.forget(key);
  }

  /** Counts a rollout seen to end (`customapp_rollouts_total`). */
  ended(trigger: RolloutTrigger, result: RolloutOutcome): void {
    this.countOutcome(trigger, result);
  }

  /** The keys occupying a slot of the budget: rolling, or granted and not yet seen rolling. */
  inProgressKeys(): readonly string[] {
    return this.budget.snapshot().inProgress;
  }

  /** This process's part of the rollout budget, when several share it (a shard); undefined for the whole of it. */
  setShare(share: number | undefined): void {
    this.budget.setShare(share);
  }

  /**
   * Rebuilds the memory from the caches after a restart or a failover, before any reconcile, from where each governed
   * key stands (each domain reads its own objects): the slots occupied by the keys in a dependency-triggered rollout; the
   * queue from the pending rollouts recorded as Queued, in the order of their `since`; the breakers and debounces they
   * recorded (Flapping, Debouncing), started again for a full window at now. `kept` are places in the queue this
   * process holds already and keeps whatever the cluster records (a shard's keys through a view change: a workload
   * records no place, and a status write may still be on its way); a place the cluster records too is read from there.
   */
  rebuild(standings: Iterable<RolloutStanding>, kept: readonly { readonly key: string; readonly since: number }[] = []): void {
    const now = this.options.now();
    const rolling: string[] = [];
    const queued: { key: string; since: number }[] = [];
    const reopened = new Set<string>();
    for (const { key, namespace, rolling: inProgress, pending } of standings) {
      if (inProgress) rolling.push(key);
      if (!pending) continue;
      const ref = refKey({ kind: pending.trigger, namespace, name: pending.name });
      if (pending.reason === 'Queued') {
        const since = Date.parse(pending.since);
        queued.push({ key, since: Number.isNaN(since) ? now : since });
      } else if (pending.reason === 'Flapping' && this.breaker.enabled) {
        this.breaker.reopen(ref, now);
        reopened.add(ref);
      } else if (pending.reason === 'Debouncing') {
        this.breaker.touch(ref, now);
      }
    }
    const recorded = new Set(queued.map(({ key }) => key));
    const keptOnly = kept.filter(({ key }) => !recorded.has(key));
    this.budget.rebuild(rolling, [...queued, ...keptOnly]);
    this.options.logger.info(
      {
        inProgress: rolling.length,
        queued: queued.length + keptOnly.length,
        ...(kept.length > 0 ? { kept: keptOnly.length } : {}),
        breakersReopened: reopened.size,
        limit: this.budget.limit,
        flapThreshold: this.breaker.threshold,
        flapWindowMs: this.breaker.windowMs,
      },
      'rollout.rebuilt',
    );
  }

  close(): void {
    this.budget.close();
  }
}
