// What a benchmark strategy is: a DependencySource the shared operator runs with, plus what the benchmark reads from it.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KubeClient } from '../../operator/kube/client.js';
import type { RequestSample } from '../../operator/kube/options.js';
import type { DependencySource } from '../../operator/dependencies/source.js';

/** The TypeScript strategies, in the order the report lists them. */
export const STRATEGY_NAMES = ['naive-get', 'static-list-all', 'static-indexed', 'per-object', 'ours'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/** A {@link DependencySource} that also says how many objects it keeps in memory. */
export interface BenchSource extends DependencySource {
  /** ConfigMaps (or Secrets) held in this source's cache right now, whole or as hashes. */
  cachedObjects(): number;
}

/** What a strategy gets from the runner. */
export interface StrategyContext {
  /** The operator's API client: every request through it is counted. */
  readonly client: KubeClient;
  /** The kubeconfig, for the strategies that bring their own client (per-object uses @kubernetes/client-node). */
  readonly kubeConfig: KubeConfig;
  /** Reports a request made outside {@link client} (client-node's informers), so that it is counted too. */
  readonly onRequest: (sample: RequestSample) => void;
  readonly logger: Logger;
  /** The operator's metrics registry, for a source's own gauges. */
  readonly metrics?: Registry;
}
