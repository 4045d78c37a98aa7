// The fault soak on the real node: the operator's image (2 replicas leader-elected, or 3 shards) under user edits and node
// faults, then the invariants read from the cluster itself (the pods' pages, ReplicaSets, the audit log, the metrics).
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CONFIG_HASH_ANNOTATION,
  LEADER_ELECTION_LEASE,
  OPERATOR_NAME,
  OPERATOR_NAMESPACE,
  SECRET_HASH_ANNOTATION,
} from '../../api/customapp.js';
import { RELOAD_ANNOTATION, TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { KubeClient } from '../../operator/kube/client.js';
import { CONFIGMAPS, SECRETS } from '../../operator/kube/resources.js';
import type { KubeObject, Lease } from '../../operator/kube/objects.js';
import { RING_SELECTOR, shardLeaseName } from '../../operator/manager/sharding.js';
import { ownerOf } from '../../operator/shard/ring.js';
import { acknowledgedView } from '../../operator/shard/shard.js';
import { contentHash, type HashableContent } from '../../operator/dependencies/content-hash.js';
import { decodeHashes } from '../../operator/podtemplate/hash-annotation.js';
import { keyedSecretHash } from '../support/secret-hash.js';
import type { TestCluster } from '../support/targets.js';
import { metricsReaderToken, scrapeHttps } from '../support/metrics-scrape.js';
import { installChart } from '../support/chart-install.js';
import { adminClient, createAll, createNamespace, objects } from '../support/operator-harness.js';
import { parseMetrics, sumOf } from '../reliability/support/prometheus.js';
import { SeededRandom } from '../reliability/support/random.js';
import { leaseTerms, listsAndWatches, type ListsAndWatches, readAuditLog, writesOutsideTerms } from './audit-log.js';
import { resubscriptions, scopeChanges } from './scope-changes.js';
import { writesOutsideClaims } from './shard-claims.js';
import {
  BLOCKS_THE_API,
  faultSchedule,
  type InjectedFault,
  injectFault,
  NODE_FAULT_KINDS,
  type NodeFaultKind,
  type OperatorInstall,
  operatorPods,
} from './node-faults.js';
import { applyObjects, demoPage, get, kubectlOk, podReady, podsOf, rolloutComplete, waitFor } from './node-helpers.js';

/** Options of {@link runNodeSoak}. */
export interface NodeSoakOptions {
  /** CustomApps (besides the probe). */
  readonly apps: number;
  /** Deployments opted in by annotation. */
  readonly workloads: number;
  /** Shared ConfigMaps and Secrets the apps and workloads read. */
  readonly configMaps: number;
  readonly secrets: number;
  /** Faults injected, one after another (every kind once first). */
  readonly faults: number;
  /** The kinds of fault to draw from. @default every kind ({@link NODE_FAULT_KINDS}) */
  readonly faultKinds?: readonly NodeFaultKind[];
  /** User operations per second while the faults run. */
  readonly opsPerSecond: number;
  readonly seed: number;
  /**
   * The chart's `sharding`: every replica holds a Lease of its own and works on its share of the objects; the faults
   * aimed at the leader hit a random shard, and the invariants read the ring (see {@link NodeSoakReport}). @default false
   */
  readonly sharding?: boolean;
  /** Operator replicas. @default 2, or 3 when sharded */
  readonly replicas?: number;
  /** More operator arguments (a sharded run's flags). @default none */
  readonly operatorArgs?: readonly string[];
  /** How long the end waits for every app to run its latest content. @default 300_000 */
  readonly quiescenceTimeoutMs?: number;
  /** A directory for the operator pods' logs (current and previous containers) and the audit log, at the end. @default none */
  readonly artifactsDir?: string;
  readonly log?: (line: string) => void;
}

/** How the operator came back after one fault. */
export interface Recovery extends InjectedFault {
  /**
   * From the fault's end to the operator's first reconcile of the probe's edit: the new hash in its Deployment's
   * template, or in `status.pendingRollout` when the rollout budget queues it.
   */
  readonly reconcileMs?: number;
  /** From the fault's end to the probe's new template written (the budget let it go). */
  readonly writtenMs?: number;
  /** From the fault's end to the probe's rollout complete with the new template (rollouts resumed). */
  readonly rolloutMs?: number;
  /**
   * After a kube-apiserver or etcd restart: each operator pod's LISTs and distinct WATCH streams in the next 60 s, and
   * whether its process started in that time (a cold start lists every collection once, which is no relist).
   */
  readonly relists?: readonly (ListsAndWatches & { readonly coldStart: boolean })[];
  /**
   * From the fault's end until kube-proxy routed the `kubernetes` Service to the API server again, the way the
   * operator's pods reach it. The probe's recovery is awaited from
   * then on: until that moment no replica can reach the API, whatever it does.
   */
  readonly serviceMs?: number;
  /** The operator pods whose container restarted between the fault's start and the probe's rollout (a fresh process lists everything). */
  readonly restarted: readonly string[];
  /**
   * When sharded: the pod whose shard owned the probe as the fault began (by the views the ring's held Leases
   * acknowledged; several, `a | b`, while they disagree), so that a fault on the probe's own shard reads apart.
   */
  readonly probeOwner?: string;
}

/** What a run found. */
export interface NodeSoakReport {
  readonly seed: number;
  readonly options: Omit<NodeSoakOptions, 'log'>;
  readonly operations: Readonly<Record<string, number>>;
  readonly recoveries: readonly Recovery[];
  readonly faultsByKind: Readonly<Record<string, number>>;
  readonly invariants: {
    /** Apps or workloads whose pods do not all run their latest content (read in the pods), their template not at it. */
    readonly stale: readonly string[];
    /** Pods rolled to the latest content that the kubelet started with older values ({@link ContentFindings}). */
    readonly startedWithOlderContent: readonly string[];
    /** Apps or workloads with more template revisions than content changes made to them (a double rollout). */
    readonly doubleRollouts: readonly string[];
    readonly stuckFinalizers: readonly string[];
    readonly orphans: readonly string[];
    /**
     * The leader's dependency watches against what the live apps and workloads reference; when sharded, each shard's
     * against what the apps and workloads it owns in the view it acknowledged reference.
     */
    readonly watchMismatches: readonly string[];
    /**
     * Writes that arrived while another replica (or no one) held the Lease, out of all the operator's writes; when
     * sharded, writes for an object (a CustomApp, its Deployment or Service, a workload) that arrived while their writer
     * did not own it in the ring, out of all such writes ({@link writesOutsideClaims}).
     */
    readonly fencing: { readonly violations: readonly string[]; readonly writes: number };
    /** Content rollouts seen in progress at once, sampled, against the budget. */
    readonly budget: { readonly maxSeen: number; readonly limit: number; readonly samples: number; readonly overruns: readonly string[] };
    /**
     * LISTs beyond one per watch after a kube-apiserver restart; when sharded, a collection listed more than once plus
     * once per change of the pod's cache scope meanwhile, from its log (its view changed, or it acknowledged a view:
     * each scoped cache lists once per change).
     */
    readonly relistStorms: readonly string[];
  };
  readonly timings: { readonly setupMs: number; readonly streamMs: number; readonly quiescenceMs: number };
}

/** The rollout budget the chart's Deployment runs with (`--max-concurrent-rollouts`' default). */
const ROLLOUT_BUDGET = 10;
const NS = 'node-soak';
/** The operator's install: its pods, and its leader's Lease unless sharded. */
const installOf = (sharding: boolean): OperatorInstall => ({
  namespace: OPERATOR_NAMESPACE,
  selector: `app.kubernetes.io/name=${OPERATOR_NAME}`,
  ...(sharding ? {} : { lease: LEADER_ELECTION_LEASE }),
});
const OPERATOR_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_NAME}`;
const REVISION = 'deployment.kubernetes.io/revision';
/**
 * The demo app's resources: a small CPU request, so that dozens of apps and their surge pods fit the node's two cores
 * (the CustomApp's default request is 50m).
 */
export const DEMO_RESOURCES = { requests: { cpu: '5m', memory: '16Mi' }, limits: { memory: '64Mi' } } as const;

/** Every invariant held. */
export function nodeSoakHolds(report: NodeSoakReport): boolean {
  const { invariants } = report;
  return (
    invariants.stale.length === 0 &&
    invariants.doubleRollouts.length === 0 &&
    invariants.stuckFinalizers.length === 0 &&
    invariants.orphans.length === 0 &&
    invariants.watchMismatches.length === 0 &&
    invariants.fencing.violations.length === 0 &&
    invariants.budget.maxSeen <= invariants.budget.limit &&
    invariants.relistStorms.length === 0
  );
}

/** The soak's summary line: runs, faults by kind, invariants held. */
export function nodeSoakSummary(reports: readonly NodeSoakReport[]): string {
  const kinds: Record<string, number> = {};
  for (const report of reports) for (const [kind, count] of Object.entries(report.faultsByKind)) kinds[kind] = (kinds[kind] ?? 0) + count;
  const held = reports.filter(nodeSoakHolds).length;
  const startedOld = reports.reduce((sum, report) => sum + report.invariants.startedWithOlderContent.length, 0);
  return `node soak: ${reports.length} runs (seeds ${reports.map((report) => report.seed).join(', ')}), faults ${Object.entries(kinds)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(
      ', ',
    )}; invariants held in ${held}/${reports.length} runs${startedOld > 0 ? `; ${startedOld} pods rolled to the latest content started by the kubelet with older values` : ''}`;
}

/** One target of the soak: a CustomApp or an opted-in Deployment, what it reads, and the content changes made to it. */
export interface Target {
  readonly kind: 'CustomApp' | 'Deployment';
  readonly name: string;
  configMap: string;
  readonly secret: string;
  replicas: number;
  live: boolean;
  /** Content or template changes the soak made to it (a failed write counts: it may have landed). */
  changes: number;
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, Math.max(0, ms)));

function workload(name: string, target: Target, image: string): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS, annotations: { [RELOAD_ANNOTATION]: 'true' } },
    spec: {
      replicas: target.replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'app',
              image,
              envFrom: [{ configMapRef: { name: target.configMap } }],
              env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: target.secret, key: 'TOKEN' } } }],
            },
          ],
        },
      },
    },
  };
}

/** A soak under way: its cluster and client, the seeded choices, and every target with what the soak changed in it. */
interface SoakRun {
  readonly cluster: TestCluster;
  readonly node: NonNullable<TestCluster['node']>;
  readonly admin: KubeClient;
  readonly options: NodeSoakOptions;
  readonly install: OperatorInstall;
  readonly log: (line: string) => void;
  readonly random: SeededRandom;
  readonly image: string;
  readonly configMaps: readonly string[];
  readonly secrets: readonly string[];
  /** Every target ever created, by `kind/name`. */
  readonly targets: Map<string, Target>;
  /** The probe: a CustomApp on a ConfigMap and a Secret of its own, edited after each fault to measure the recovery. */
  readonly probe: Target;
  /** Each user operation's count (a failed one under `<op> (failed)`). */
  readonly operations: Record<string, number>;
  /** A value never written before, for each edit. */
  readonly nextValue: () => string;
  /**
   * Every line of each operator pod's logs read so far, by pod: read before and after each fault and at the end, for a
   * pod deleted or a container killed twice takes its log with it.
   */
  readonly operatorLogs: Map<string, Set<string>>;
}

/** The content rollouts sampled in progress at once during the stream, against the budget. */
interface BudgetSamples {
  maxSeen: number;
  readonly limit: number;
  samples: number;
  readonly overruns: string[];
}

/** The stream of user edits and the budget sampler, running until `stop`. */
interface Stream {
  /** While true, no edit is made (a fault that blocks the API is under way). */
  blocked: boolean;
  readonly budget: BudgetSamples;
  /** Ends both loops and waits for them. */
  stop(): Promise<void>;
}

/**
 * Runs one soak on a started node: installs the operator's chart (2 replicas, `--workloads=deployments`), creates the
 * apps, workloads and their shared objects, then runs the seeded stream of edits while it injects the seeded faults
 * one after another (each followed by the probe's recovery), and ends with every invariant. It throws only when the
 * soak itself cannot run; a broken invariant is in the report.
 */
export async function runNodeSoak(cluster: TestCluster, options: NodeSoakOptions): Promise<NodeSoakReport> {
  const node = cluster.node;
  if (!node) throw new Error('the node soak needs the real node (KUBE_TARGET=cluster)');
  const random = new SeededRandom(options.seed);
  const admin: KubeClient = await adminClient(cluster);
  const started = Date.now();
  let version = 0;
  const run: SoakRun = {
    cluster,
    node,
    admin,
    options,
    install: installOf(options.sharding ?? false),
    log: options.log ?? (() => {}),
    random,
    image: node.images.demo,
    configMaps: Array.from({ length: options.configMaps }, (_, index) => `shared-${index}`),
    secrets: Array.from({ length: options.secrets }, (_, index) => `token-${index}`),
    targets: new Map(),
    probe: { kind: 'CustomApp', name: 'probe', configMap: 'probe', secret: 'probe', replicas: 1, live: true, changes: 0 },
    operations: {},
    nextValue: () => `v${(version += 1)}`,
    operatorLogs: new Map(),
  };
  try {
    await installOperator(cluster, options);
    await createTargets(run);
    const setupMs = Date.now() - started;
    run.log(`setup: ${options.apps} CustomApps and ${options.workloads} workloads rolled out in ${(setupMs / 1000).toFixed(1)} s`);

    // ── the stream of user edits, the budget sampler, and the faults one after another ──
    const stream = startStream(run);
    const streamStarted = Date.now();
    const recoveries: Recovery[] = [];
    const processStarts = new Map<string, Set<number>>();
    // The stream and the sampler stop however the faults end: a fault that throws must not leave them running.
    try {
      await injectFaults(run, stream, recoveries, processStarts);
    } finally {
      await stream.stop();
    }
    const streamMs = Date.now() - streamStarted;

    // ── quiescence, then every invariant from the cluster ──
    const quiescenceStarted = Date.now();
    const live = [...run.targets.values()].filter((target) => target.live);
    // A pod the kubelet started with older values heals only with a later rollout: the wait is for the operator's part.
    const { stale, startedWithOlderContent } = await waitFor(
      'every app and workload rolled to its latest content',
      options.quiescenceTimeoutMs ?? 300_000,
      async () => {
        const findings = await contentFindings(cluster, live);
        return findings.stale.length === 0 ? findings : undefined;
      },
      { intervalMs: 5_000 },
    ).catch(() => contentFindings(cluster, live));
    const quiescenceMs = Date.now() - quiescenceStarted;
    run.log(
      `quiescence: ${(quiescenceMs / 1000).toFixed(1)} s, ${stale.length} stale, ${startedWithOlderContent.length} pods started by the kubelet with older content`,
    );
    const invariants = await clusterInvariants(run, live, processStarts);
    await readOperatorLogs(run, options.artifactsDir);
    const { withRelists, relistStorms, fencing } = auditLogFindings(run, recoveries, processStarts);
    if (options.artifactsDir) copyFileSync(run.node.auditLogPath, join(options.artifactsDir, 'audit.log'));
    const faultsByKind: Record<string, number> = {};
    for (const recovery of recoveries) faultsByKind[recovery.kind] = (faultsByKind[recovery.kind] ?? 0) + 1;
    const { log: _log, ...reported } = options;
    return {
      seed: options.seed,
      options: reported,
      operations: run.operations,
      recoveries: withRelists,
      faultsByKind,
      invariants: { stale, startedWithOlderContent, ...invariants, fencing, budget: stream.budget, relistStorms },
      timings: { setupMs, streamMs, quiescenceMs },
    };
  } finally {
    admin.close();
  }
}

/** Applies the operator's chart (sharded or not, with `operatorArgs` added to its container) and waits for its rollout. */
async function installOperator(cluster: TestCluster, options: NodeSoakOptions): Promise<void> {
  const sharding = options.sharding ?? false;
  await installChart(cluster, { replicas: options.replicas ?? (sharding ? 3 : 2), workloads: ['deployments'], sharding });
  if (options.operatorArgs?.length) {
    const patch = options.operatorArgs.map((arg) => ({ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: arg }));
    await kubectlOk(cluster, ['-n', OPERATOR_NAMESPACE, 'patch', 'deployment', OPERATOR_NAME, '--type=json', '-p', JSON.stringify(patch)]);
  }
  await kubectlOk(cluster, ['-n', OPERATOR_NAMESPACE, 'rollout', 'status', `deployment/${OPERATOR_NAME}`, '--timeout=300s'], {
    timeoutMs: 320_000,
  });
}

/** Creates a CustomApp on a random shared ConfigMap and Secret, and records it as a target. */
async function addApp(run: SoakRun, name: string): Promise<void> {
  const { random } = run;
  const target: Target = {
    kind: 'CustomApp',
    name,
    configMap: random.pick(run.configMaps),
    secret: random.pick(run.secrets),
    replicas: 1,
    live: true,
    changes: 0,
  };
  run.targets.set(`CustomApp/${name}`, target);
  await createAll(
    run.admin,
    objects.customApp(NS, name, {
      image: run.image,
      configMapName: target.configMap,
      secretName: target.secret,
      replicas: target.replicas,
      resources: DEMO_RESOURCES,
    }),
  );
}

/** Creates the shared ConfigMaps and Secrets, the apps, the probe and the workloads, and waits until all rolled out. */
async function createTargets(run: SoakRun): Promise<void> {
  const { admin, node, options, random, targets, probe, image, configMaps, secrets } = run;
  await createNamespace(admin, NS);
  for (const name of [...configMaps, 'probe']) await createAll(admin, objects.configMap(NS, name, { VALUE: run.nextValue() }));
  // The probe reads a ConfigMap and a Secret of its own: on a shared Secret the stream's edits can open the flap
  // breaker (more than 5 changes in 60 s), which rightly holds the probe's rollout, edit included, until that Secret
  // has been quiet for 60 s: the stream never lets it be, and the recovery would be the breaker's, not the fault's.
  for (const name of [...secrets, 'probe']) await createAll(admin, objects.secret(NS, name, { TOKEN: run.nextValue() }));
  for (let index = 0; index < options.apps; index += 1) await addApp(run, `app-${index}`);
  targets.set('CustomApp/probe', probe);
  await createAll(
    admin,
    objects.customApp(NS, 'probe', { image, configMapName: 'probe', secretName: probe.secret, replicas: 1, resources: DEMO_RESOURCES }),
  );
  const workloads = Array.from({ length: options.workloads }, (_, index): [string, Target] => [
    `wl-${index}`,
    {
      kind: 'Deployment',
      name: `wl-${index}`,
      configMap: random.pick(configMaps),
      secret: random.pick(secrets),
      replicas: 1,
      live: true,
      changes: 0,
    },
  ]);
  for (const [name, target] of workloads) targets.set(`Deployment/${name}`, target);
  await applyObjects(
    run.cluster,
    workloads.map(([name, target]) => workload(name, target, image)),
  );
  await waitFor(
    'every app and workload rolled out',
    600_000,
    async () => {
      const deployments = (await get(node, `/apis/apps/v1/namespaces/${NS}/deployments`)).items as any[];
      return deployments.length === targets.size && deployments.every(rolloutComplete) ? true : undefined;
    },
    { intervalMs: 2_000 },
  );
}

/** The Deployment of a target (a CustomApp's child, or the workload itself). */
function deploymentOf(node: NonNullable<TestCluster['node']>, target: Target): Promise<any> {
  return get(node, `/apis/apps/v1/namespaces/${NS}/deployments/${target.name}`);
}

/** Makes one user write and counts it; the targets it touches count a change first (a failed write may have landed). */
async function write(run: SoakRun, op: string, affected: readonly Target[], request: () => Promise<unknown>): Promise<void> {
  const count = (name: string): void => {
    run.operations[name] = (run.operations[name] ?? 0) + 1;
  };
  for (const target of affected) target.changes += 1;
  await request().then(
    () => count(op),
    () => count(`${op} (failed)`),
  );
}

/** The live targets that read this ConfigMap or Secret. */
function referencing(run: SoakRun, kind: 'ConfigMap' | 'Secret', name: string): Target[] {
  return [...run.targets.values()].filter((target) => target.live && (kind === 'ConfigMap' ? target.configMap : target.secret) === name);
}

/** One random user edit: a shared object's content or labels, an app's ConfigMap or replicas, an app deleted or created. */
async function userEdit(run: SoakRun, nextAppName: () => string): Promise<void> {
  const { random, admin, configMaps, secrets, nextValue } = run;
  const apps = [...run.targets.values()].filter((target) => target.kind === 'CustomApp' && target.live && target !== run.probe);
  const op = random.weighted({
    editConfigMap: 30,
    editSecret: 20,
    labelConfigMap: 8,
    switchConfigMap: 8,
    replicas: 6,
    deleteApp: 4,
    createApp: 4,
  });
  switch (op) {
    case 'editConfigMap': {
      const name = random.pick(configMaps);
      return write(run, op, referencing(run, 'ConfigMap', name), () =>
        admin.patch(CONFIGMAPS, NS, name, 'merge', { data: { VALUE: nextValue() } }),
      );
    }
    case 'editSecret': {
      const name = random.pick(secrets);
      return write(run, op, referencing(run, 'Secret', name), () =>
        admin.patch(SECRETS, NS, name, 'merge', { stringData: { TOKEN: nextValue() } }),
      );
    }
    case 'labelConfigMap': {
      const name = random.pick(configMaps);
      return write(run, op, [], () => admin.patch(CONFIGMAPS, NS, name, 'merge', { metadata: { labels: { touched: nextValue() } } }));
    }
    case 'switchConfigMap': {
      if (apps.length === 0) return;
      const app = random.pick(apps);
      app.configMap = random.pick(configMaps.filter((name) => name !== app.configMap));
      return write(run, op, [app], () => admin.patch(CUSTOM_APPS, NS, app.name, 'merge', { spec: { configMapName: app.configMap } }));
    }
    case 'replicas': {
      if (apps.length === 0) return;
      const app = random.pick(apps);
      app.replicas = app.replicas === 1 ? 2 : 1;
      return write(run, op, [], () => admin.patch(CUSTOM_APPS, NS, app.name, 'merge', { spec: { replicas: app.replicas } }));
    }
    case 'deleteApp': {
      if (apps.length <= 1) return;
      const app = random.pick(apps);
      app.live = false;
      return write(run, op, [], () => admin.delete(CUSTOM_APPS, NS, app.name));
    }
    case 'createApp': {
      const name = nextAppName();
      return write(run, op, [], () => addApp(run, name));
    }
  }
}

/** Starts the stream of user edits at the options' pace and the sampler of content rollouts in progress. */
function startStream(run: SoakRun): Stream {
  const { random, options, node } = run;
  let streaming = true;
  let nextApp = options.apps;
  const stream: Stream = {
    blocked: false,
    budget: { maxSeen: 0, limit: ROLLOUT_BUDGET, samples: 0, overruns: [] },
    stop: async () => {
      streaming = false;
      await Promise.all([streamLoop, sampleLoop]);
    },
  };
  const streamLoop = (async () => {
    const gapMs = 1000 / options.opsPerSecond;
    while (streaming) {
      if (!stream.blocked) await userEdit(run, () => `app-${nextApp++}`);
      await sleep(gapMs * (0.5 + random.next()));
    }
  })();
  const { budget } = stream;
  const sampleLoop = (async () => {
    while (streaming) {
      const seen = await contentRolloutsInProgress(node).catch(() => undefined);
      if (seen !== undefined) {
        budget.samples += 1;
        budget.maxSeen = Math.max(budget.maxSeen, seen.length);
        if (seen.length > ROLLOUT_BUDGET) budget.overruns.push(`${new Date().toISOString()}: ${seen.join('; ')}`);
      }
      await sleep(2_000);
    }
  })();
  return stream;
}

/** Injects the seeded faults one after another, each followed by the probe's edit and its recovery, into `recoveries`. */
async function injectFaults(run: SoakRun, stream: Stream, recoveries: Recovery[], processStarts: Map<string, Set<number>>): Promise<void> {
  const { random, options, node, admin, probe, log } = run;
  const faultRandom = random.fork();
  for (const planned of faultSchedule(faultRandom, options.faults, options.faultKinds ?? NODE_FAULT_KINDS)) {
    await sleep(10_000 + faultRandom.int(10_001));
    await readOperatorLogs(run);
    const before = (await deploymentOf(node, probe)).spec.template.metadata.annotations?.[CONFIG_HASH_ANNOTATION];
    let expected: string | undefined;
    const editProbe = (): Promise<void> =>
      write(run, 'editProbe', [probe], async () => {
        expected = contentHash(
          await admin.patch<KubeObject & HashableContent>(CONFIGMAPS, NS, 'probe', 'merge', { data: { VALUE: run.nextValue() } }),
        );
      });
    const restartsBefore = await operatorRestarts(run, processStarts);
    const probeOwner = options.sharding ? await probeOwnerPod(run).catch((error: Error) => `unknown (${error.message})`) : undefined;
    const blocks = BLOCKS_THE_API.has(planned.kind);
    stream.blocked = blocks;
    const fault = await injectFault(node, run.install, planned, faultRandom, blocks ? undefined : editProbe);
    stream.blocked = false;
    if (blocks) await editProbe();
    const serviceMs = Math.max(0, (await apiThroughService(node)) - fault.endedAt);
    const recovery: Partial<Awaited<ReturnType<typeof measureRecovery>>> = await measureRecovery(
      node,
      probe.name,
      before,
      expected,
      fault.endedAt,
    ).catch(async (error: Error) => {
      await logNoRecovery(run, fault.kind, error, expected);
      return {};
    });
    const restartsAfter = await operatorRestarts(run, processStarts);
    const restarted = [...restartsAfter].filter(([pod, restarts]) => restarts > (restartsBefore.get(pod) ?? 0)).map(([pod]) => pod);
    recoveries.push({ ...fault, ...recovery, serviceMs, restarted, ...(probeOwner ? { probeOwner } : {}) });
    await readOperatorLogs(run, options.artifactsDir, `fault-${recoveries.length}-`);
    log(
      `fault ${recoveries.length}/${options.faults}: ${fault.kind} (${fault.detail}); the API through its Service ${serviceMs} ms, reconcile ${recovery.reconcileMs ?? '–'} ms, template ${recovery.writtenMs ?? '–'} ms, rollout ${recovery.rolloutMs ?? '–'} ms after its end${probeOwner ? `; the probe's shard ${probeOwner}` : ''}`,
    );
  }
}

/** Logs what the operator showed of the probe when it did not act on its edit after a fault, for the next look. */
async function logNoRecovery(run: SoakRun, kind: NodeFaultKind, error: Error, expected: string | undefined): Promise<void> {
  const { node, probe } = run;
  const app = await get(node, `/apis/app.example.com/v1/namespaces/${NS}/customapps/${probe.name}`).catch(() => undefined);
  const annotations = (await deploymentOf(node, probe).catch(() => undefined))?.metadata?.annotations;
  const { pods, leader } = await operatorPods(node, run.install).catch(() => ({ pods: [] as any[], leader: undefined }));
  const acting = run.options.sharding
    ? `the probe's owner in each shard's acknowledged view ${JSON.stringify(await probeOwners(run).catch((cause: Error) => cause.message))}`
    : `the leader ${leader?.metadata.name ?? 'none'}`;
  run.log(
    `  no recovery after ${kind}: ${error.message}; expected ${expected}; the probe's status ${JSON.stringify(app?.status)}; its Deployment's annotations ${JSON.stringify(annotations)}; the operator pods ${pods.map(podState).join(', ')}; ${acting}`,
  );
}

/** The pod (or pods, while the views disagree) whose shard owns the probe in the views the ring's held Leases acknowledged. */
async function probeOwnerPod(run: SoakRun): Promise<string> {
  const owners = new Set<string>();
  for (const lease of await ringLeases(run.node)) {
    const view = acknowledgedView(lease);
    if (lease.spec?.holderIdentity && view) owners.add(ownerOf(ringKey(run.probe), view)?.slice(shardLeaseName('').length) ?? 'no one');
  }
  return owners.size > 0 ? [...owners].sort().join(' | ') : 'no one';
}

/** Each ring Lease's holder and the member its acknowledged view gives the probe to. */
async function probeOwners(run: SoakRun): Promise<Record<string, string>> {
  const owners: Record<string, string> = {};
  for (const lease of await ringLeases(run.node)) {
    const view = acknowledgedView(lease);
    owners[`${lease.metadata.name} (${lease.spec?.holderIdentity || 'released'})`] = view
      ? (ownerOf(ringKey(run.probe), view) ?? 'no one')
      : 'no view';
  }
  return owners;
}

/** The ring's Leases. */
async function ringLeases(node: NonNullable<TestCluster['node']>): Promise<Lease[]> {
  return (
    await get(
      node,
      `/apis/coordination.k8s.io/v1/namespaces/${OPERATOR_NAMESPACE}/leases?labelSelector=${encodeURIComponent(RING_SELECTOR)}`,
    )
  ).items as Lease[];
}

/** A target's key in the ring: a CustomApp's `namespace/name`, a workload's `Kind/namespace/name`. */
function ringKey(target: Target): string {
  return target.kind === 'CustomApp' ? `${NS}/${target.name}` : `${target.kind}/${NS}/${target.name}`;
}

/** The invariants read from the cluster after quiescence: double rollouts, stuck finalizers, orphans, the dependency watches. */
async function clusterInvariants(
  run: SoakRun,
  live: readonly Target[],
  processStarts: Map<string, Set<number>>,
): Promise<Pick<NodeSoakReport['invariants'], 'doubleRollouts' | 'stuckFinalizers' | 'orphans' | 'watchMismatches'>> {
  const { node, cluster, admin } = run;
  const doubleRollouts: string[] = [];
  for (const target of live) {
    const revision = Number((await deploymentOf(node, target)).metadata.annotations?.[REVISION] ?? 0);
    if (revision > 1 + target.changes)
      doubleRollouts.push(`${target.kind}/${target.name}: revision ${revision} after ${target.changes} content or template changes`);
  }
  const apps = (await get(node, `/apis/app.example.com/v1/namespaces/${NS}/customapps`)).items as any[];
  const stuckFinalizers = apps.filter((app) => app.metadata.deletionTimestamp).map((app) => app.metadata.name as string);
  const deleted = (): Target[] => [...run.targets.values()].filter((target) => !target.live);
  const orphans = await waitFor(
    'the deleted apps gone',
    60_000,
    async () => {
      const found = await orphansOf(node, deleted());
      return found.length === 0 ? found : undefined;
    },
    { intervalMs: 2_000 },
  ).catch(() => orphansOf(node, deleted()));
  // A view change (the last fault's pod back) moves keys and their refs between shards: give the ring a minute to settle.
  const token = await metricsReaderToken(cluster, admin, 'node-soak-metrics', 'scraper');
  const watchMismatches = run.options.sharding
    ? await waitFor(
        "each shard's watches matching its share",
        60_000,
        async () => {
          const found = await shardWatchMismatches(run, live, token);
          return found.length === 0 ? found : undefined;
        },
        { intervalMs: 5_000 },
      ).catch(() => shardWatchMismatches(run, live, token))
    : await leaderWatchMismatches(node, live, token);
  await operatorRestarts(run, processStarts);
  return { doubleRollouts, stuckFinalizers, orphans, watchMismatches };
}

/**
 * What the audit log shows of the operator: writes outside its Lease terms (when sharded, outside their writer's claims
 * in the ring), and after each kube-apiserver or etcd restart each pod's LISTs and watches. A storm, from a process that
 * did not start then: more LISTs than watches, beside the one fresh read of its Deployments per Lease term it takes;
 * when sharded, a collection listed more than once plus once per change of the pod's cache scope in the window, as its
 * log shows them ({@link scopeChanges}). The scope changes when the pod's view changes and again when it acknowledges
 * a view, each scoped cache lists once per change, and a view superseded before its acknowledgement still cost its
 * change: the audit log shows only the views acknowledged, so a bound from it took those LISTs for a storm.
 */
function auditLogFindings(
  run: SoakRun,
  recoveries: readonly Recovery[],
  processStarts: ReadonlyMap<string, Set<number>>,
): { withRelists: Recovery[]; relistStorms: string[]; fencing: NodeSoakReport['invariants']['fencing'] } {
  const events = readAuditLog(run.node.auditLogPath, OPERATOR_USER);
  const sharding = run.options.sharding ?? false;
  const terms = leaseTerms(events, LEADER_ELECTION_LEASE);
  const relistStorms: string[] = [];
  const withRelists = recoveries.map((recovery): Recovery => {
    if (recovery.kind !== 'apiserver-restart' && recovery.kind !== 'etcd-restart') return recovery;
    const [from, to] = [recovery.endedAt - 1_000, recovery.endedAt + 60_000];
    const relists = listsAndWatches(events, from, to).map((each) => ({
      ...each,
      coldStart: [...(processStarts.get(each.sender) ?? [])].some((at) => at >= from && at < to),
    }));
    if (recovery.kind === 'apiserver-restart')
      for (const each of relists) {
        if (each.coldStart) continue;
        const restart = new Date(recovery.endedAt).toISOString();
        const log = [...(run.operatorLogs.get(each.sender) ?? [])].join('\n');
        if (sharding) {
          const changes = scopeChanges(log, from, to);
          const over = Object.entries(each.listed).filter(([, count]) => count > 1 + changes);
          if (over.length > 0)
            relistStorms.push(
              `${each.sender} after the restart at ${restart}: ${changes} cache scope changes in its log, listed ${JSON.stringify(Object.fromEntries(over))}`,
            );
          continue;
        }
        // A replica that takes the Lease reads its Deployments afresh once, before it rebuilds the rollout budget: a
        // LIST by design, not a relist. So is the first LIST of a dependency stream subscribed again (the soak's
        // edits go on: an app switches away from a ConfigMap and another to it).
        const taken = terms.filter(
          (term) => term.sender === each.sender && term.holder !== '' && term.fromMs >= from && term.fromMs < to,
        ).length;
        const resubscribed = resubscriptions(log, from, to);
        if (each.lists > each.watches + taken + resubscribed)
          relistStorms.push(
            `${each.sender} after the restart at ${restart}: ${each.lists} LISTs for ${each.watches} watches, ${taken} Lease terms taken and ${resubscribed} streams subscribed again ${JSON.stringify(each.listed)}`,
          );
      }
    return { ...recovery, relists };
  });
  if (sharding) {
    const claims = writesOutsideClaims(events, { isWorkload: (name) => run.targets.get(`Deployment/${name}`) !== undefined });
    return {
      withRelists,
      relistStorms,
      fencing: {
        violations: claims.violations.map((each) => `${each.write} at ${each.at} from ${each.writer} for ${each.object}: ${each.why}`),
        writes: claims.writes,
      },
    };
  }
  const fencing = writesOutsideTerms(events, LEADER_ELECTION_LEASE);
  return {
    withRelists,
    relistStorms,
    fencing: {
      violations: fencing.violations.map((each) => `${each.write} at ${each.at} from ${each.writer} while ${each.holder} held the Lease`),
      writes: fencing.writes,
    },
  };
}

/**
 * Each live operator pod's container restarts; the start times of its current and previous containers are added to
 * `starts` (by pod), so that a fresh process's first LISTs are not taken for a relist.
 */
async function operatorRestarts(run: SoakRun, starts: Map<string, Set<number>>): Promise<Map<string, number>> {
  const { pods } = await operatorPods(run.node, run.install);
  for (const pod of pods) {
    const status = pod.status?.containerStatuses?.[0];
    const seen = starts.get(pod.metadata.name) ?? new Set<number>();
    starts.set(pod.metadata.name, seen);
    for (const at of [status?.state?.running?.startedAt, status?.lastState?.terminated?.startedAt]) if (at) seen.add(Date.parse(at));
  }
  return new Map(pods.map((pod) => [pod.metadata.name as string, (pod.status?.containerStatuses?.[0]?.restartCount as number) ?? 0]));
}

/** One operator pod as a missed recovery reports it: its name, restarts, and its container's state (a crash loop's back-off shows here). */
function podState(pod: any): string {
  const status = pod.status?.containerStatuses?.[0];
  const state = Object.entries(status?.state ?? {})
    .map(
      ([name, detail]: [string, any]) =>
        `${name}${detail?.reason ? ` (${detail.reason})` : ''}${detail?.startedAt ? ` since ${detail.startedAt}` : ''}`,
    )
    .join(' ');
  return `${pod.metadata.name}: ${status?.restartCount ?? 0} restarts, ${state || 'no container'}`;
}

/**
 * Reads every operator pod's log and its previous container's into `run.operatorLogs` and, with `dir`, writes each into
 * `dir`, its name prefixed with `prefix`. Called before and after each fault too: the kubelet keeps one dead container
 * per pod, so a container killed twice loses the log of the first, the one that held the Lease when a later fault
 * struck, and a deleted pod loses both. A read that fails (the API down) leaves what was read before.
 */
async function readOperatorLogs(run: SoakRun, dir?: string, prefix = ''): Promise<void> {
  const { cluster } = run;
  if (dir) mkdirSync(dir, { recursive: true });
  const { pods } = await operatorPods(run.node, run.install).catch(() => ({ pods: [] as any[] }));
  for (const pod of pods) {
    const name: string = pod.metadata.name;
    for (const previous of [false, true]) {
      const args = ['-n', OPERATOR_NAMESPACE, 'logs', name, ...(previous ? ['--previous'] : [])];
      const answer = await cluster.kubectl(args);
      if (answer.code !== 0) continue;
      const lines = run.operatorLogs.get(name) ?? new Set<string>();
      for (const line of answer.stdout.split('\n')) if (line !== '') lines.add(line);
      run.operatorLogs.set(name, lines);
      if (dir) writeFileSync(join(dir, `${prefix}${name}${previous ? '.previous' : ''}.log`), answer.stdout);
    }
  }
}

/**
 * Waits until kube-proxy routes the `kubernetes` Service to the API server again, the path of every pod, and answers
 * when (ms since the epoch). kube-apiserver's graceful shutdown takes its address out of the
 * Service's endpoints, and kube-proxy rejects the Service's traffic ("has no endpoints") until its own EndpointSlice
 * watch, backing off since the outage began, sees the address again: 20 to 95 s after a restart on this machine,
 * during which no replica of the operator can reach the API.
 */
async function apiThroughService(node: NonNullable<TestCluster['node']>): Promise<number> {
  // kube-proxy's own record, read in the node: a ClusterIP with endpoints jumps to its KUBE-SVC chain in the nat table;
  // one without has no such rule (a REJECT in the filter table instead). The node itself cannot dial a ClusterIP here.
  const service = `-d ${node.addresses.kubernetesServiceIp}/32`;
  return waitFor(
    'kube-proxy routing the kubernetes Service to the API server',
    300_000,
    async () => {
      const rules = await node.nodeRun('iptables', ['-t', 'nat', '-S', 'KUBE-SERVICES']);
      return rules.split('\n').some((rule) => rule.includes(service) && rule.includes('-j KUBE-SVC-')) ? Date.now() : undefined;
    },
    { intervalMs: 250 },
  );
}

/**
 * Waits (called once the API answers through its Service again, each wait up to 180 s) until the operator reconciled the probe's edit (the `expected` hash, or any other than
 * `hashBefore` when the edit's answer was lost, in its Deployment's template or its `status.pendingRollout`), until it
 * wrote the template, and until that rollout completed; answers each in ms from the fault's end.
 */
async function measureRecovery(
  node: NonNullable<TestCluster['node']>,
  name: string,
  hashBefore: string | undefined,
  expected: string | undefined,
  endedAt: number,
): Promise<{ reconcileMs: number; writtenMs: number; rolloutMs: number }> {
  const path = `/apis/apps/v1/namespaces/${NS}/deployments/${name}`;
  const isNew = (hash: string | undefined): boolean => hash !== undefined && (expected ? hash === expected : hash !== hashBefore);
  const written = async (): Promise<boolean> => isNew((await get(node, path)).spec.template.metadata.annotations?.[CONFIG_HASH_ANNOTATION]);
  const reconciledAt = await waitFor(
    "the probe's edit reconciled after the fault",
    180_000,
    async () => {
      const app = await get(node, `/apis/app.example.com/v1/namespaces/${NS}/customapps/${name}`);
      return isNew(app.status?.pendingRollout?.toHash) || (await written()) ? Date.now() : undefined;
    },
    { intervalMs: 100 },
  );
  const writtenAt = await waitFor("the probe's template written", 180_000, async () => ((await written()) ? Date.now() : undefined), {
    intervalMs: 100,
  });
  const rolledAt = await waitFor(
    'the probe rolled out',
    180_000,
    async () => (rolloutComplete(await get(node, path)) ? Date.now() : undefined),
    {
      intervalMs: 250,
    },
  );
  const since = (at: number): number => Math.max(0, at - endedAt);
  return { reconcileMs: since(reconciledAt), writtenMs: since(writtenAt), rolloutMs: since(rolledAt) };
}

/**
 * Content rollouts in progress now, as the cluster shows them: Deployments whose rollout is not complete while pods of
 * an older ReplicaSet remain, and whose newest ReplicaSet differs from the one before only in its annotations (the
 * hashes: a spec change, which the budget does not govern, changes the pod spec).
 */
async function contentRolloutsInProgress(node: NonNullable<TestCluster['node']>): Promise<string[]> {
  const [deployments, replicaSets] = await Promise.all([
    get(node, `/apis/apps/v1/namespaces/${NS}/deployments`),
    get(node, `/apis/apps/v1/namespaces/${NS}/replicasets`),
  ]);
  const inProgress: string[] = [];
  for (const deployment of deployments.items as any[]) {
    if (rolloutComplete(deployment)) continue;
    const owned = (replicaSets.items as any[])
      .filter((rs) => rs.metadata.ownerReferences?.some((owner: any) => owner.uid === deployment.metadata.uid))
      .sort((a, b) => Number(b.metadata.annotations?.[REVISION] ?? 0) - Number(a.metadata.annotations?.[REVISION] ?? 0));
    const [newest, previous] = owned;
    if (!newest || !previous || !owned.slice(1).some((rs) => (rs.status?.replicas ?? 0) > 0)) continue;
    if (JSON.stringify(newest.spec.template.spec) === JSON.stringify(previous.spec.template.spec)) {
      const replicas = owned.map(
        (rs) => `${rs.metadata.annotations?.[REVISION]}:${rs.status?.replicas ?? 0}/${rs.status?.availableReplicas ?? 0}`,
      );
      inProgress.push(`${deployment.metadata.name} (revision:replicas/available ${replicas.join(' ')})`);
    }
  }
  return inProgress;
}

/** What {@link contentFindings} read in the pods of the live targets. */
export interface ContentFindings {
  /** Targets whose pods are not all Ready or not as many as wanted, or whose pod's template is not at the latest content. */
  readonly stale: string[];
  /**
   * Pods whose template carries the latest content's hashes (the operator rolled them to it) but which show older
   * values: the kubelet reads a pod's environment from its own watch of each ConfigMap and Secret, and a pod it starts
   * before that watch is back after a kube-apiserver restart gets the previous values. It happens without the operator,
   * to a plain Deployment rolled by kubectl, and only a later rollout heals it.
   */
  readonly startedWithOlderContent: string[];
}

/**
 * The live targets in `namespace`: their pods' count and readiness, and the VALUE of their ConfigMap and TOKEN of their
 * Secret on the demo's `/` against the latest in the cluster, each mismatch told apart by the hashes the pod carries.
 */
export async function contentFindings(cluster: TestCluster, live: readonly Target[], namespace = NS): Promise<ContentFindings> {
  const node = cluster.node!;
  const findings: ContentFindings = { stale: [], startedWithOlderContent: [] };
  const configMaps = new Map(
    ((await get(node, `/api/v1/namespaces/${namespace}/configmaps`)).items as any[]).map((cm) => [cm.metadata.name, cm]),
  );
  const secrets = new Map(
    ((await get(node, `/api/v1/namespaces/${namespace}/secrets`)).items as any[]).map((secret) => [secret.metadata.name, secret]),
  );
  for (const target of live) {
    const selector = target.kind === 'CustomApp' ? `app.kubernetes.io/instance=${target.name}` : `app=${target.name}`;
    const pods = (await podsOf(node, namespace, selector)).filter((pod) => !pod.metadata.deletionTimestamp);
    const configMap = configMaps.get(target.configMap);
    const secret = secrets.get(target.secret);
    const want = { VALUE: configMap?.data?.VALUE, TOKEN: Buffer.from(secret?.data?.TOKEN ?? '', 'base64').toString() };
    if (pods.length !== target.replicas || !pods.every(podReady)) {
      findings.stale.push(
        `${target.kind}/${target.name}: ${pods.filter(podReady).length} Ready pods of ${pods.length}, ${target.replicas} wanted`,
      );
      continue;
    }
    for (const pod of pods) {
      const page = await demoPage(cluster, namespace, pod.metadata.name).catch((error: Error) => `(unread: ${error.message})`);
      const shown = (name: string): string | undefined => new RegExp(`^${name}=(.*)$`, 'm').exec(page)?.[1];
      if (shown('VALUE') === want.VALUE && shown('TOKEN') === want.TOKEN) continue;
      const carried = carriedHashes(target, pod);
      const latest = { configMap: configMap && contentHash(configMap), secret: secret && keyedSecretHash(secret) };
      // Only a pod that names both objects' latest hashes was rolled to them: a missing object or hash is stale.
      const atLatest =
        latest.configMap !== undefined &&
        latest.secret !== undefined &&
        carried.configMap === latest.configMap &&
        carried.secret === latest.secret;
      (atLatest ? findings.startedWithOlderContent : findings.stale).push(
        `${target.kind}/${target.name}: pod ${pod.metadata.name} (created ${pod.metadata.creationTimestamp}) shows VALUE=${shown('VALUE')} TOKEN=${shown('TOKEN')}, latest ${want.VALUE} ${want.TOKEN}; its template's hashes ${JSON.stringify(carried)}, the latest content's ${JSON.stringify(latest)}`,
      );
    }
  }
  return findings;
}

/** The targets whose pods do not all show their latest content, for whatever reason ({@link contentFindings}). */
export async function staleTargets(cluster: TestCluster, live: readonly Target[], namespace = NS): Promise<string[]> {
  const { stale, startedWithOlderContent } = await contentFindings(cluster, live, namespace);
  return [...stale, ...startedWithOlderContent];
}

/** The hashes of its ConfigMap and Secret a pod's template carries: a CustomApp's own annotations, a workload's map. */
function carriedHashes(target: Target, pod: any): { configMap?: string; secret?: string } {
  const annotations = pod.metadata.annotations ?? {};
  if (target.kind === 'CustomApp') return { configMap: annotations[CONFIG_HASH_ANNOTATION], secret: annotations[SECRET_HASH_ANNOTATION] };
  const hashes = decodeHashes(annotations[TEMPLATE_HASHES_ANNOTATION]);
  return {
    configMap: hashes?.get(`ConfigMap/${target.configMap}`) ?? undefined,
    secret: hashes?.get(`Secret/${target.secret}`) ?? undefined,
  };
}

/** What is left of deleted CustomApps: their Deployment, Service or pods. */
async function orphansOf(node: NonNullable<TestCluster['node']>, deleted: readonly Target[]): Promise<string[]> {
  const orphans: string[] = [];
  for (const target of deleted) {
    for (const path of [`/apis/apps/v1/namespaces/${NS}/deployments/${target.name}`, `/api/v1/namespaces/${NS}/services/${target.name}`]) {
      if ((await node.envtest.request('GET', path)).status !== 404) orphans.push(`${target.name}: ${path} left`);
    }
    const pods = await podsOf(node, NS, `app.kubernetes.io/instance=${target.name}`);
    if (pods.length > 0) orphans.push(`${target.name}: ${pods.length} pods left`);
  }
  return orphans;
}

/**
 * The leader's dependency watches and subscriptions (its /metrics, scraped on its pod's address with a
 * metrics-reader token) against the distinct ConfigMaps and Secrets the live apps and workloads reference.
 */
async function leaderWatchMismatches(node: NonNullable<TestCluster['node']>, live: readonly Target[], token: string): Promise<string[]> {
  const { leader } = await operatorPods(node, installOf(false));
  if (!leader) return ['no operator pod leads'];
  return watchMismatches(leader, await metricsOf(leader, token), live);
}

/**
 * Each shard's dependency watches and subscriptions against the ConfigMaps and Secrets of the live apps and workloads
 * it owns in the view its Lease acknowledges: a shard's caches keep only its own objects, so it watches only their
 * refs (a ConfigMap two shards' objects share is watched by both, and the sum over shards would count it twice).
 * Every shard must acknowledge one same view, which must give each live target to one of them.
 */
async function shardWatchMismatches(run: SoakRun, live: readonly Target[], token: string): Promise<string[]> {
  const { pods } = await operatorPods(run.node, run.install);
  const leases = new Map((await ringLeases(run.node)).map((lease) => [lease.metadata.name, lease]));
  const mismatches: string[] = [];
  const views = new Set<string>();
  let owned = 0;
  for (const pod of pods) {
    const member = shardLeaseName(pod.metadata.name);
    const view = leases.get(member) ? acknowledgedView(leases.get(member)!) : undefined;
    if (!view) {
      mismatches.push(`${pod.metadata.name}: its Lease ${member} ${leases.has(member) ? 'acknowledges no view' : 'is missing'}`);
      continue;
    }
    views.add(JSON.stringify(view));
    const own = live.filter((target) => ownerOf(ringKey(target), view) === member);
    owned += own.length;
    mismatches.push(...watchMismatches(pod, await metricsOf(pod, token), own));
  }
  if (views.size > 1) mismatches.push(`the shards acknowledge different views: ${[...views].join(' ≠ ')}`);
  else if (owned !== live.length) mismatches.push(`the shards' view gives ${owned} of the ${live.length} live targets to a running pod`);
  return mismatches;
}

/** An operator pod's /metrics (scraped on its pod's address with a metrics-reader token), or why not. */
async function metricsOf(pod: any, token: string): Promise<ReturnType<typeof parseMetrics> | string> {
  const answer = await scrapeHttps(`https://${pod.status.podIP}:8443/metrics`, { token });
  return answer.status === 200 ? parseMetrics(answer.body) : `GET /metrics: ${answer.status} ${answer.body.slice(0, 200)}`;
}

/** One replica's dependency watches and subscriptions against the distinct ConfigMaps and Secrets `targets` reference. */
function watchMismatches(pod: any, metrics: ReturnType<typeof parseMetrics> | string, targets: readonly Target[]): string[] {
  if (typeof metrics === 'string') return [`${pod.metadata.name}: ${metrics}`];
  const mismatches: string[] = [];
  for (const kind of ['ConfigMap', 'Secret'] as const) {
    const names = targets.map((target) => (kind === 'ConfigMap' ? target.configMap : target.secret));
    const watched = sumOf(metrics, 'customapp_dependency_watches_active', { kind });
    const subscribers = sumOf(metrics, 'customapp_dependency_subscribers', { kind });
    const at = `${pod.metadata.name}: ${kind}`;
    if (watched !== new Set(names).size) mismatches.push(`${at}: ${watched} watched ≠ ${new Set(names).size} referenced`);
    if (subscribers !== names.length) mismatches.push(`${at}: ${subscribers} subscriptions ≠ ${names.length} (holder, ${kind}) pairs`);
  }
  return mismatches;
}

/** The faults of a report by kind, and each one's recovery, as lines (the README's figures). */
export function recoveryLines(report: NodeSoakReport): string[] {
  return report.recoveries.map((recovery) => {
    const relists = recovery.relists
      ?.map((each) => `${each.sender}: ${each.lists} LISTs / ${each.watches} watches${each.coldStart ? ' (a cold start)' : ''}`)
      .join('; ');
    const restarted = recovery.restarted.length > 0 ? `; restarted: ${recovery.restarted.join(', ')}` : '';
    const owner = recovery.probeOwner ? `; the probe's shard ${recovery.probeOwner}` : '';
    return `${recovery.kind.padEnd(18)} ${String(recovery.endedAt - recovery.startedAt).padStart(6)} ms long; API through its Service +${recovery.serviceMs ?? '–'} ms, reconcile +${recovery.reconcileMs ?? '–'} ms, template +${recovery.writtenMs ?? '–'} ms, rollout +${recovery.rolloutMs ?? '–'} ms after its end${relists ? `; ${relists}` : ''}${restarted}${owner}  (${recovery.detail})`;
  });
}
