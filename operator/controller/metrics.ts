// The operator's Prometheus metrics, in their own prom-client Registry, named as controller-runtime and client-go name them.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestSample } from '../kube/options.js';
import type { QueueHooks } from '../queue/work-queue.js';

/** Outcome label of `controller_runtime_reconcile_total`, as controller-runtime spells it. */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/** controller-runtime's `controller_runtime_reconcile_time_seconds` buckets. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5,
  5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue buckets: `prometheus.ExponentialBuckets(10e-9, 10, 12)`, 10 ns … 1000 s. */
const WORKQUEUE_BUCKETS = Array.from({ length: 12 }, (_, index) => 1e-8 * 10 ** index);
/** client-go's `rest_client_request_duration_seconds` buckets. */
const REST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
/** `customapp_reconcile_step_seconds`: the REST buckets, with room below them for the steps that only read caches. */
const STEP_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, ...REST_BUCKETS];

/** Options of {@link OperatorMetrics}. */
export interface OperatorMetricsOptions {
  /** Also export Node.js process metrics (`process_*`, `nodejs_*`). @default false */
  readonly processMetrics?: boolean;
}

/**
 * Every metric of one operator instance. Its own Registry, so that two operators in one process (tests, the
 * benchmark) do not share counters, and `/metrics` serves exactly this.
 */
export class OperatorMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;
  readonly queueDepth: Gauge<'name'>;
  readonly queueAdds: Counter<'name'>;
  readonly queueRetries: Counter<'name'>;
  readonly queueDuration: Histogram<'name'>;
  readonly workDuration: Histogram<'name'>;
  readonly restRequests: Counter<'verb' | 'resource' | 'code'>;
  readonly restDuration: Histogram<'verb' | 'resource'>;
  readonly leaderStatus: Gauge<'name'>;
  readonly reconcileStepTime: Histogram<'step'>;

  // long-functions: data table: one definition per metric, read as a table.
  constructor(options: OperatorMetricsOptions = {}) {
    const registers = [this.registry];
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
    this.maxConcurrentReconciles = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });
    this.queueDepth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers });
    this.queueAdds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.queueRetries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.queueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name'],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: ['name'],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    });
    this.restRequests = new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests, partitioned by verb, resource and status code',
      labelNames: ['verb', 'resource', 'code'],
      registers,
    });
    this.restDuration = new Histogram({
      name: 'rest_client_request_duration_seconds',
      help: 'Request latency in seconds, by verb and resource (watches: until the stream ends)',
      labelNames: ['verb', 'resource'],
      buckets: REST_BUCKETS,
      registers,
    });
    this.leaderStatus = new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master',
      labelNames: ['name'],
      registers,
    });
    this.reconcileStepTime = new Histogram({
      name: 'customapp_reconcile_step_seconds',
      help: 'Time of each step of a CustomApp reconcile: cache reads and desired state, and each write, Event and status write',
      labelNames: ['step'],
      buckets: STEP_BUCKETS,
      registers,
    });
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** The KubeClient's `onRequest`: counts every API request by verb, resource (with subresource) and status code. */
  readonly onRequest = (sample: RequestSample): void => {
    const resource = sample.subresource ? `${sample.resource}/${sample.subresource}` : sample.resource;
    this.restRequests.inc({ verb: sample.verb, resource, code: String(sample.code) });
    this.restDuration.observe({ verb: sample.verb, resource }, sample.durationMs / 1000);
  };

  /** The work queue's hooks, feeding the `workqueue_*` metrics of the queue `name`. */
  queueHooks(name: string): QueueHooks {
    return {
      onAdd: () => this.queueAdds.inc({ name }),
      onDepth: (depth) => this.queueDepth.set({ name }, depth),
      onGet: (_key, waitedMs) => this.queueDuration.observe({ name }, waitedMs / 1000),
      onDone: (_key, workedMs) => this.workDuration.observe({ name }, workedMs / 1000),
      onRetry: () => this.queueRetries.inc({ name }),
    };
  }

  /** Counts one finished reconcile. */
  observeReconcile(controller: string, result: ReconcileResult, durationMs: number): void {
    this.reconcileTotal.inc({ controller, result });
    if (result === 'error') this.reconcileErrors.inc({ controller });
    this.reconcileTime.observe({ controller }, durationMs / 1000);
  }

  /** The sum of a counter's values whose labels include `labels` (tests, the benchmark). */
  async total(metric: string, labels: Readonly<Record<string, string>> = {}): Promise<number> {
    const found = await this.registry.getSingleMetric(metric)?.get();
    if (!found) return 0;
    return found.values
      .filter((value) => {
        const name = (value as { metricName?: string }).metricName;
        return name === undefined || name === metric;
      })
      .filter((value) => Object.entries(labels).every(([name, wanted]) => String(value.labels[name]) === wanted))
      .reduce((sum, value) => sum + value.value, 0);
  }
}
