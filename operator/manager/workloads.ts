// Builds the workload domain when `--workloads` names kinds: an informer per kind (trimmed, through its access gate), the reconciler and its controller.
import type { Observable, SchedulerLike } from 'rxjs';
import { WORKLOAD_KINDS } from '../../api/workload.js';
import { FreshCache } from '../cache/fresh-cache.js';
import { type Informer, informerOf } from '../cache/informer.js';
import { Controller, type ReconcileGate } from '../controller/controller.js';
import type { OperatorMetrics } from '../controller/metrics.js';
import type { DependencySource } from '../dependencies/source.js';
import type { EventRecorder } from '../events/recorder.js';
import type { RolloutGovernance } from '../governance/governance.js';
import { AccessGate, type GateClient } from '../kube/access-gate.js';
import type { KubeClient } from '../kube/client.js';
import { resourceLabel } from '../kube/resources.js';
import type { Logger } from '../log.js';
import { ROLLOUTS_NOT_SERVED_REMEDY } from '../workload/argo-rollout.js';
import { trimWorkload } from '../workload/transform.js';
import { WORKLOAD_INDEXERS } from '../workload/triggers.js';
import {
  type Workload,
  type WorkloadKind,
  WORKLOAD_RESOURCES,
  type WorkloadResource,
  parseWorkloadKey,
  workloadKey,
} from '../workload/workload.js';
import { WorkloadReconciler } from '../workload/workload-reconciler.js';
import { gatesIn } from './api-access.js';

/** The controller's name in metrics and logs. */
export const WORKLOAD_CONTROLLER_NAME = 'workload';

/** The workload domain's parts, built and not started. */
export interface WorkloadParts {
  /** One trimmed informer per kind served, each through its gate. */
  readonly informers: Partial<Record<WorkloadKind, Informer<Workload>>>;
  readonly gates: readonly AccessGate[];
  /**
   * The gates of the kinds an add-on serves (Argo Rollouts' Rollout), whose CRD may be installed before or after the
   * operator starts, or never: while one is not served it delays neither the start nor /readyz (its gate logs it once
   * and re-checks; once served, its informer syncs and its workloads are reconciled, with no restart).
   */
  readonly addOns: Partial<Record<WorkloadKind, readonly AccessGate[]>>;
  /** Each informer's store read through the reconciler's own writes (the CustomApp domain's caches do the same). */
  readonly caches: Partial<Record<WorkloadKind, FreshCache<Workload>>>;
  readonly controller: Controller;
  /** Forgets what was reported of a workload (its Warnings and waits), for a key this shard gave up. */
  readonly forgetReports: (key: string) => void;
}

/** The kinds an add-on serves: served only where their CRD is installed. */
const ADD_ON_KINDS: ReadonlySet<WorkloadKind> = new Set(['Rollout']);

/** The add-on kinds whose CRD is not installed now (their gate says NotServed): nothing waits for their caches. */
export function notInstalled(workloads: WorkloadParts | undefined): WorkloadKind[] {
  return (Object.entries(workloads?.addOns ?? {}) as [WorkloadKind, readonly AccessGate[]][])
    .filter(([, gates]) => gates.some((gate) => gate.problem?.reason === 'NotServed'))
    .map(([kind]) => kind);
}

/** What the workload domain shares with the CustomApp's. */
export interface WorkloadContext {
  readonly client: KubeClient;
  readonly gateClient: GateClient;
  /** The watched namespaces (one watcher and gate per kind in each). @default all namespaces */
  readonly namespaces?: readonly string[];
  readonly logger: Logger;
  readonly scheduler?: SchedulerLike;
  readonly metrics: OperatorMetrics;
  readonly dependencies: DependencySource;
  readonly governance: RolloutGovernance;
  readonly recorder: EventRecorder;
  readonly concurrency: number;
  /** Keep only the workloads whose key is in scope (a shard's share), and let only those be reconciled. @default all */
  readonly shard?: ScopeAndGate;
}

/** What a shard gives the caches and controllers it scopes: which keys they keep, when that changes, and who may act. */
export interface ScopeAndGate extends ReconcileGate {
  inScope(key: string): boolean;
  readonly scope$: Observable<number>;
}

/**
 * Builds the informers, gates and controller of the workload kinds named (`--workloads`); undefined when none is, so
 * that a CustomApp-only operator watches nothing more than before. A 403 names the grants the chart's `workloads` prop adds.
 */
export function buildWorkloads(resources: readonly WorkloadResource[] | undefined, context: WorkloadContext): WorkloadParts | undefined {
  if (!resources || resources.length === 0) return undefined;
  const { namespaces, logger, scheduler } = context;
  const watchDeps = { logger: logger.child({ component: 'watch' }), scheduler };
  const informers: Partial<Record<WorkloadKind, Informer<Workload>>> = {};
  const gates: AccessGate[] = [];
  const addOns: Partial<Record<WorkloadKind, readonly AccessGate[]>> = {};
  for (const name of new Set(resources)) {
    const kind = WORKLOAD_KINDS[name].kind;
    const resource = WORKLOAD_RESOURCES[kind];
    // Argo's CRD may be installed after the operator starts: the informer waits at its closed gates until discovery serves it.
    const scoped = gatesIn(
      namespaces,
      (namespace) =>
        new AccessGate({
          client: context.gateClient,
          namespace,
          logger: logger.child({ component: 'api-access' }),
          scheduler,
          resource,
          remedies: {
            Forbidden: `grant list, watch and patch on ${resourceLabel(resource)} to the identity the operator runs as (the operator chart's workloads prop adds them)`,
            ...(kind === 'Rollout' ? { NotServed: ROLLOUTS_NOT_SERVED_REMEDY } : {}),
          },
        }),
    );
    gates.push(...scoped.gates);
    if (ADD_ON_KINDS.has(kind)) addOns[kind] = scoped.gates;
    informers[kind] = informerOf<Workload>(
      scoped.watch(resource, (scope) => ({ name: `${name} ${scope}` }), watchDeps),
      WORKLOAD_INDEXERS,
      {
        transform: trimWorkload,
        scope: context.shard && {
          keeps: (object) => context.shard!.inScope(workloadKey(kind, object.metadata.namespace ?? '', object.metadata.name ?? '')),
          versions$: context.shard.scope$,
        },
      },
    );
  }
  const caches: Partial<Record<WorkloadKind, FreshCache<Workload>>> = Object.fromEntries(
    Object.entries(informers).map(([kind, { store }]) => [kind, new FreshCache(store, { scheduler, transform: trimWorkload })]),
  );
  const reconciler = new WorkloadReconciler({
    client: context.client,
    workloads: caches,
    dependencies: context.dependencies,
    recorder: context.recorder,
    governance: context.governance,
  });
  const controller = new Controller({
    name: WORKLOAD_CONTROLLER_NAME,
    reconciler,
    logger: logger.child({ controller: WORKLOAD_CONTROLLER_NAME }),
    metrics: context.metrics,
    concurrency: context.concurrency,
    scheduler,
    gate: context.shard,
    splitKey: (key) => {
      const parsed = parseWorkloadKey(key);
      if (!parsed) throw new Error(`work-queue key "${key}" is not Kind/namespace/name`);
      return { namespace: parsed.namespace, name: parsed.name };
    },
  });
  return { informers, gates, addOns, caches, controller, forgetReports: (key) => reconciler.forgetReports(key) };
}
