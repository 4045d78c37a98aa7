// Churn: rounds of creating and deleting many CustomApps against an operator process, then its heap, handles and watches.
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import type { KubeClient } from '../../operator/kube/client.js';
import { isNotFound } from '../../operator/kube/errors.js';
import { DEPLOYMENTS } from '../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import { OWNED_SELECTOR } from '../../operator/customapp/labels.js';
import type { TestCluster } from '../support/targets.js';
import { adminClient, createAll, createNamespace, eventually, objects } from '../support/operator-harness.js';
import { OPERATOR_USER } from './support/cluster-role.js';
import { forEachConcurrently } from './support/concurrently.js';
import { MAX_SERVICES } from './support/limits.js';
import type { ProbeReport } from './support/probe-protocol.js';
import { startProbedOperator, type ProbedOperator } from './support/probed-operator.js';
import { sumOf } from './support/prometheus.js';

/** Options of {@link runChurn}. */
export interface ChurnOptions {
  /** Rounds of create-all then delete-all; the first is the warm-up that the baseline is taken after. */
  readonly rounds: number;
  /** CustomApps per round (half in one namespace, past the collapse threshold; the rest five per namespace). */
  readonly count: number;
  /** Progress lines. @default none */
  readonly log?: (line: string) => void;
  /** How long one round may take to converge or drain. @default 300_000 */
  readonly roundTimeoutMs?: number;
}

/** The operator's dependency watches (from its /metrics) and the API server's open watches of its identity. */
export interface WatchCounts {
  readonly dependencyWatches: number;
  readonly streams: number;
  readonly subscribers: number;
  /** Open ConfigMap and Secret watches of the operator's ServiceAccount, as the emulator counts them. */
  readonly serverDependencyWatches: number;
  /** Open CustomApp, Deployment and Service watches of the operator's ServiceAccount (its three informers). */
  readonly serverInformerWatches: number;
}

/** What the churn measured. */
export interface ChurnReport {
  readonly rounds: number;
  readonly count: number;
  /** Milliseconds each round took (create, converge, delete, drain). */
  readonly roundMs: readonly number[];
  /** After start, before any CustomApp. */
  readonly cold: ProbeReport;
  /** After the warm-up round (first-use allocations are done). */
  readonly baseline: ProbeReport;
  /** After the last round. */
  readonly after: ProbeReport;
  /** The live timers, sockets and handles by type, after the warm-up round and after the last (see {@link settledResources}). */
  readonly resources: { readonly baseline: Record<string, number>; readonly after: Record<string, number> };
  /** `after.heapUsed / baseline.heapUsed - 1`. */
  readonly heapGrowth: number;
  /** The largest number of dependency watches open during a round (proves the rounds exercised them). */
  readonly peak: WatchCounts;
  readonly end: WatchCounts;
}

/** The heap after churn may exceed the baseline by at most this fraction. */
export const HEAP_TOLERANCE = 0.1;

const LABEL = 'reliability.example.com/churn';
const BIG_NAMESPACE = 'churn-big';
const SMALL_NAMESPACE_SIZE = 5;

/** Where each CustomApp lives: half in one big namespace, the rest in namespaces of five. */
function placement(count: number): { namespace: string; name: string }[] {
  const big = Math.ceil(count / 2);
  return Array.from({ length: count }, (_, index) =>
    index < big
      ? { namespace: BIG_NAMESPACE, name: `app-${index}` }
      : { namespace: `churn-${Math.floor((index - big) / SMALL_NAMESPACE_SIZE)}`, name: `app-${index}` },
  );
}

/** Counts the types of `process.getActiveResourcesInfo()`. */
export function resourceCounts(report: ProbeReport): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of report.resources) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/**
 * How many more live resources of one type than at the baseline are not a leak: a timer that lives for seconds (the
 * write cache's sweep while an entry lasts, a requeue) may be there at one probe and not at another. A leak grows
 * with the rounds: one per round is 9 more after 10 rounds, one per CustomApp hundreds.
 */
export const RESOURCE_SLACK = 3;

/** The types with more than {@link RESOURCE_SLACK} live resources above the baseline, as `type: baseline → after`. */
export function resourcesGrown(baseline: Record<string, number>, after: Record<string, number>): string[] {
  return Object.entries(after)
    .filter(([type, count]) => count > (baseline[type] ?? 0) + RESOURCE_SLACK)
    .map(([type, count]) => `${type}: ${baseline[type] ?? 0} → ${count}`);
}

/**
 * The live resources by type once the transient ones are left out: the fewest of each type over `samples` probes
 * 200 ms apart. A timer of a write retrying on a busy pipe, or of a request in flight, comes and goes; a leaked one
 * stays in every sample, and grows with the rounds.
 */
async function settledResources(operator: ProbedOperator, first: ProbeReport, samples = 4): Promise<Record<string, number>> {
  const settled = resourceCounts(first);
  for (let sample = 1; sample < samples; sample += 1) {
    await new Promise((done) => setTimeout(done, 200));
    const counts = resourceCounts(await operator.probe());
    for (const type of Object.keys(settled)) settled[type] = Math.min(settled[type]!, counts[type] ?? 0);
  }
  return Object.fromEntries(Object.entries(settled).filter(([, count]) => count > 0));
}

async function watchCounts(operator: ProbedOperator, cluster: TestCluster): Promise<WatchCounts> {
  const samples = await operator.metrics();
  const open = (resource: string): number => cluster.emulator?.counters.openWatchCount({ resource, user: OPERATOR_USER }) ?? Number.NaN;
  return {
    dependencyWatches: sumOf(samples, 'customapp_dependency_watches_active'),
    streams: sumOf(samples, 'customapp_watch_streams_open'),
    subscribers: sumOf(samples, 'customapp_dependency_subscribers'),
    serverDependencyWatches: open('configmaps') + open('secrets'),
    serverInformerWatches: open('customapps') + open('deployments') + open('services'),
  };
}

/** Waits until the operator has nothing queued and nothing in flight. */
async function idle(operator: ProbedOperator): Promise<void> {
  await eventually(
    'the operator is idle',
    async () => {
      const samples = await operator.metrics();
      return sumOf(samples, 'workqueue_depth') === 0 && sumOf(samples, 'controller_runtime_active_workers') === 0;
    },
    60_000,
    100,
  );
}

async function oneRound(
  admin: KubeClient,
  operator: ProbedOperator,
  cluster: TestCluster,
  apps: readonly { namespace: string; name: string }[],
  timeoutMs: number,
): Promise<WatchCounts> {
  await forEachConcurrently(
    apps.map((app, index) => ({ ...app, port: index < MAX_SERVICES ? 8080 : undefined })),
    50,
    ({ namespace, name, port }) =>
      admin.create(CUSTOM_APPS, namespace, {
        ...objects.customApp(namespace, name, {
          image: 'example/churn:1',
          configMapName: `${name}-config`,
          secretName: `${name}-secret`,
          port,
        }),
        metadata: { name, namespace, labels: { [LABEL]: 'true' } },
      }),
  );
  await eventually(
    'every CustomApp of the round is reconciled',
    async () => {
      const listed = await admin.list<CustomApp>(CUSTOM_APPS, { labelSelector: LABEL });
      return (
        listed.items.filter((app) => app.status?.observedGeneration === app.metadata.generation && app.status?.secretHash).length ===
        apps.length
      );
    },
    timeoutMs,
    250,
  );
  const peak = await watchCounts(operator, cluster);
  await forEachConcurrently(apps, 50, ({ namespace, name }) =>
    admin.delete(CUSTOM_APPS, namespace, name).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    }),
  );
  await eventually(
    'every CustomApp and its children are gone, and every dependency watch released',
    async () => {
      const left = (await admin.list<CustomApp>(CUSTOM_APPS, { labelSelector: LABEL })).items.length;
      const children = (await admin.list(DEPLOYMENTS, { labelSelector: OWNED_SELECTOR })).items.length;
      const counts = await watchCounts(operator, cluster);
      return left === 0 && children === 0 && counts.dependencyWatches === 0 && counts.streams === 0;
    },
    timeoutMs,
    250,
  );
  await idle(operator);
  return peak;
}

/**
 * Runs `rounds` rounds of creating `count` CustomApps (each with its own ConfigMap and Secret; the first
 * {@link MAX_SERVICES} with a port, so a Service), waiting
 * until each is reconciled, deleting them all and waiting until everything is gone, against an operator process
 * (`operator/main.ts`, `--expose-gc`). Measures its heap after forced GCs and its live handles: at the start, after
 * the warm-up round, and after the last round; and its dependency watches, by its metrics and by the emulator.
 * The cluster must have dist/ applied.
 */
export async function runChurn(cluster: TestCluster, options: ChurnOptions): Promise<ChurnReport> {
  const log = options.log ?? (() => undefined);
  const timeoutMs = options.roundTimeoutMs ?? 300_000;
  const admin = await adminClient(cluster);
  const { path: kubeconfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
  const apps = placement(options.count);
  let operator: ProbedOperator | undefined;
  try {
    for (const namespace of new Set(apps.map((app) => app.namespace))) await createNamespace(admin, namespace);
    await forEachConcurrently(apps, 50, ({ namespace, name }) =>
      createAll(
        admin,
        objects.configMap(namespace, `${name}-config`, { APP: name }),
        objects.secret(namespace, `${name}-secret`, { TOKEN: name }),
      ),
    );
    operator = await startProbedOperator({ kubeconfig, logLevel: 'warn' });
    await idle(operator);
    const cold = await operator.probe();
    const roundMs: number[] = [];
    let baseline = cold;
    let baselineResources: Record<string, number> = {};
    let peak: WatchCounts | undefined;
    for (let round = 1; round <= options.rounds; round += 1) {
      const started = performance.now();
      const counts = await oneRound(admin, operator, cluster, apps, timeoutMs);
      if (!peak || counts.dependencyWatches > peak.dependencyWatches) peak = counts;
      roundMs.push(performance.now() - started);
      if (round === 1) {
        baseline = await operator.probe();
        baselineResources = await settledResources(operator, baseline);
      }
      log(
        `round ${round}/${options.rounds}: ${options.count} CustomApps created, reconciled and deleted in ${(roundMs.at(-1)! / 1000).toFixed(1)} s (peak ${counts.dependencyWatches} dependency watches over ${counts.streams} streams)`,
      );
    }
    const after = await operator.probe();
    const resources = { baseline: baselineResources, after: await settledResources(operator, after) };
    const end = await watchCounts(operator, cluster);
    return {
      rounds: options.rounds,
      count: options.count,
      roundMs,
      cold,
      baseline,
      after,
      resources,
      heapGrowth: after.memory.heapUsed / baseline.memory.heapUsed - 1,
      peak: peak!,
      end,
    };
  } finally {
    await operator?.dispose();
    admin.close();
  }
}
