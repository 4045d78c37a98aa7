// What createOperator takes and what it answers: the options of a whole operator, and the running operator.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { SchedulerLike } from 'rxjs';
import type { Informer } from '../cache/informer.js';
import type { Controller } from '../controller/controller.js';
import type { OperatorMetrics } from '../controller/metrics.js';
import type { CustomApp } from '../customapp/custom-app.js';
import type { DependencyRegistry, DependencyRegistryOptions } from '../dependencies/registry.js';
import type { DependencySource } from '../dependencies/source.js';
import type { ListenAddress } from '../http/listen.js';
import type { KubeClient } from '../kube/client.js';
import type { Deployment, Service } from '../kube/objects.js';
import type { RolloutSettings } from '../governance/governance.js';
import type { LeaderElectionOptions } from '../leader/leader-elector.js';
import type { Logger } from '../log.js';
import type { WorkloadResource } from '../workload/workload.js';
import type { WorkloadParts } from './workloads.js';

/** The controller's name in metrics and logs. */
export const CONTROLLER_NAME = 'customapp';

/** What a DependencySource factory gets. */
export interface DependencyContext {
  readonly client: KubeClient;
  readonly logger: Logger;
  /** The operator's metrics registry, for the source's own gauges. */
  readonly metrics: Registry;
  readonly scheduler?: SchedulerLike;
}

/** Leader-election settings: the Lease and, optionally, controller-runtime's durations (15 s, 10 s, 2 s) and the identity. */
export type LeaderElectionSettings = Pick<
  LeaderElectionOptions,
  'namespace' | 'name' | 'identity' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'
>;

/**
 * Sharding settings (`--sharding`): the namespace of the ring's Leases, this replica's name in the ring (its Lease is
 * named after it) and the Lease durations (leader election's flags and defaults: 15 s, 10 s, 2 s).
 */
export type ShardingSettings = Pick<LeaderElectionOptions, 'namespace' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'> & {
  readonly identity: string;
};

/** Options of `createOperator` (operator/operator.ts). */
export interface OperatorOptions {
  /** Where the API server is (or pass `client`). */
  readonly kubeConfig?: KubeConfig;
  /** An API client to use instead of one built from `kubeConfig`; its requests are not counted in our metrics then. */
  readonly client?: KubeClient;
  /**
   * Whether the client built from `kubeConfig` reads ConfigMaps and Secrets as protobuf (`KubeClientOptions.protobuf`).
   * @default true
   */
  readonly protobuf?: boolean;
  /**
   * Watch only these namespaces: the CustomApps, their Deployments, Services and Events, the ConfigMaps and Secrets
   * they reference and the opted-in workloads, each with one watcher per namespace and never at cluster scope (so a
   * Role in each of them is all the RBAC it needs). At least one, each once. @default all namespaces
   */
  readonly namespaces?: readonly string[];
  /** @default a silent logger */
  readonly logger?: Logger;
  /** Keys reconciled at once. @default 4 */
  readonly maxConcurrentReconciles?: number;
  /** Reconcile only while holding this Lease. @default no leader election */
  readonly leaderElection?: LeaderElectionSettings;
  /**
   * Share the work with the other replicas of the ring: each holds its own Lease and reconciles only the keys it owns
   * (operator/shard/). Excludes `leaderElection`. @default no sharding
   */
  readonly sharding?: ShardingSettings;
  /** Where /metrics listens (`orFreePort`: or a free port when that one is busy). @default not served */
  readonly metricsBindAddress?: ListenAddress;
  /**
   * Serve /metrics over HTTPS, each request authenticated by a TokenReview and authorized by a SubjectAccessReview
   * (operator/http/secure-metrics.ts); false serves plain HTTP to anyone who can reach it. @default true
   */
  readonly metricsSecure?: boolean;
  /** A directory with `tls.crt` and `tls.key` for /metrics, reloaded when they change. @default a self-signed certificate */
  readonly metricsCertDir?: string;
  /** Where /healthz and /readyz listen (`orFreePort`: or a free port when that one is busy). @default not served */
  readonly healthProbeBindAddress?: ListenAddress;
  /** Also export process_* and nodejs_* metrics. @default false */
  readonly processMetrics?: boolean;
  /**
   * Builds the DependencySource the reconcile uses (the benchmark swaps strategies here).
   * @default the reference-counted, adaptive {@link DependencyRegistry} behind a `RegistryDependencySource`
   */
  readonly dependencies?: (context: DependencyContext) => DependencySource;
  /** Tuning of the default registry (thresholds, watch settings). @default its defaults */
  readonly registry?: Omit<DependencyRegistryOptions, 'client' | 'events' | 'logger' | 'metrics' | 'scheduler'>;
  /** Timers of the queue and the watches. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** How often a CustomApp whose Deployment name is taken by a foreign object is looked at again. @default 30_000 */
  readonly notOwnedRetryMs?: number;
  /**
   * The rollout budget and the flap breaker (`--max-concurrent-rollouts`, `--flap-threshold`, `--flap-window`).
   * @default on: 10 rollouts at once, breakers past 5 changes in 60 s (`DEFAULT_ROLLOUT_SETTINGS`)
   */
  readonly rollouts?: RolloutSettings;
  /**
   * The workload kinds served by annotation (`--workloads`): existing Deployments, StatefulSets, DaemonSets and Argo
   * Rollouts (served once their CRD is) that opt in roll on new content of the ConfigMaps and Secrets they use.
   * @default none (nothing more is watched)
   */
  readonly workloads?: readonly WorkloadResource[];
}

/** A running operator. */
export interface Operator {
  readonly client: KubeClient;
  readonly metrics: OperatorMetrics;
  readonly dependencies: DependencySource;
  /** The default registry, when `dependencies` was not replaced (for invariants: its physical streams). */
  readonly registry?: DependencyRegistry;
  readonly controller: Controller;
  readonly apps: Informer<CustomApp>;
  readonly deployments: Informer<Deployment>;
  readonly services: Informer<Service>;
  /** The workload domain (its informers and controller), when `workloads` names kinds. */
  readonly workloads?: WorkloadParts;
  /** This process's identity (the Lease holder name when it leads). */
  readonly identity: string;
  /** `https://host:port` of /metrics (`http://` with `metricsSecure: false`), when served. */
  readonly metricsUrl?: string;
  /** `http://host:port` of /healthz and /readyz, when served. */
  readonly healthUrl?: string;
  /** True once the CustomApp, Deployment and Service caches hold their first list. */
  readonly synced: boolean;
  /** True while the workers run (after the caches synced and, with leader election, the Lease was acquired). */
  readonly reconciling: boolean;
  /** Resolves when the workers start; never, if the operator stops first. */
  readonly started: Promise<void>;
  /** Resolves when the operator has stopped; rejects when it stopped on its own (leadership lost). */
  readonly done: Promise<void>;
  /** Stops intake, drains in-flight reconciles, unsubscribes every stream, releases the Lease, closes the servers. */
  stop(): Promise<void>;
}
