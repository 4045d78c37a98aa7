// The fault soak: an operator process under random changes, API faults, competing writers and SIGKILLs, then every invariant.
import { CONFIG_HASH_ANNOTATION, OPERATOR_NAME, OPERATOR_NAMESPACE, SECRET_HASH_ANNOTATION } from '../../infra/customapp-api.js';
import type { CustomApp } from '../../operator/custom-app.js';
import { contentHash, type HashableContent } from '../../operator/deps/content-hash.js';
import { DEFAULT_COLLAPSE_THRESHOLD, DEFAULT_SPLIT_THRESHOLD } from '../../operator/deps/registry.js';
import type { KubeClient, KubeObject } from '../../operator/kube/client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../operator/kube/errors.js';
import { CONFIGMAPS, CUSTOM_APPS, DEPLOYMENTS, SECRETS, SERVICES } from '../../operator/kube/resources.js';
import type { Deployment, Service } from '../../operator/objects.js';
import { isControlledBy, OWNED_SELECTOR } from '../../operator/reconcile/labels.js';
import type { TestCluster } from '../support/cluster.js';
import { adminClient, createAll, createNamespace, objects } from '../support/operator-harness.js';
import { OperatorProcess } from '../support/operator-process.js';
import { OPERATOR_USER } from './support/cluster-role.js';
import { podAnnotation } from './support/cluster-reads.js';
import { forEachConcurrently } from './support/concurrently.js';
import { MAX_SERVICES } from './support/limits.js';
import { scrape, sumOf, type MetricSample } from './support/prometheus.js';
import { SeededRandom } from './support/random.js';

/** Options of {@link runFaultSoak}. */
export interface SoakOptions {
  /** CustomApps created before the stream starts (about as many live throughout). */
  readonly apps: number;
  /** How long the random stream of changes and faults runs. */
  readonly streamMs: number;
  /** User operations per second during the stream. */
  readonly opsPerSecond: number;
  /** SIGKILLs (each followed by a restart) spread over the stream. */
  readonly kills: number;
  readonly seed: number;
  /** How long quiescence may take after the stream. @default 180_000 */
  readonly quiescenceTimeoutMs?: number;
  /** Progress lines. @default none */
  readonly log?: (line: string) => void;
}

/** Every fault injected, by kind. */
export interface FaultCounts {
  /** Requests of the operator answered 500 / 429 + Retry-After by the emulator (2.5% each). */
  readonly failed500: number;
  readonly failed429: number;
  /** Open watches of the operator ended cleanly / reset (TCP) by the emulator. */
  readonly watchesEnded: number;
  readonly watchesReset: number;
  /** Re-watches answered with an in-stream 410 Expired. */
  readonly forced410: number;
  /** Times the whole history was forgotten (every resumed watch gets 410). */
  readonly compactions: number;
  /** Writes by the competing writer on the operator's Deployments and the CustomApps' metadata. */
  readonly competingWrites: number;
  /** 409 Conflicts the operator got (rest_client_requests_total{code="409"}, summed over its processes). */
  readonly conflicts409: number;
  readonly kills: number;
}

/** How the operator coped, from its metrics and logs (summed over its processes). */
export interface Recoveries {
  readonly watchRetries: number;
  readonly relists: number;
  readonly reconcileErrors: number;
  readonly workqueueRetries: number;
  readonly reconciles: number;
  /** Processes that exited on their own after failing to renew the Lease (by design: exit 1, restarted). */
  readonly leadershipLosses: number;
  /** Processes that exited on their own for any other reason. */
  readonly crashes: number;
}

/** The invariants after quiescence; every list must be empty. */
export interface Invariants {
  readonly liveApps: number;
  readonly deletedApps: number;
  /** Live CustomApps whose Deployment, Service or status does not match the latest spec, ConfigMap and Secret. */
  readonly lostUpdates: readonly string[];
  /** CustomApps with a deletionTimestamp still present. */
  readonly stuckFinalizers: readonly string[];
  /** Deleted CustomApps whose Deployment or Service still exists. */
  readonly orphans: readonly string[];
  /** Dependency watches (operator metrics and API server) that differ from the referenced set. */
  readonly watchMismatches: readonly string[];
  /** Open ConfigMap and Secret watches of the operator, as the API server counts them and as the operator does. */
  readonly openWatches: { readonly server: number; readonly operator: number };
}

export interface SoakReport {
  readonly seed: number;
  readonly options: Omit<SoakOptions, 'log'>;
  readonly namespaces: number;
  readonly operations: Readonly<Record<string, number>>;
  readonly faults: FaultCounts;
  readonly recoveries: Recoveries;
  readonly invariants: Invariants;
  /** Violations found when the stream stopped, before quiescence (shows that the checks see a cluster in motion). */
  readonly violationsAtStreamEnd: number;
  /** Errors of the soak's own requests other than the races it expects (404, 409): none in a valid run. */
  readonly driverErrors: readonly string[];
  readonly timings: {
    readonly setupMs: number;
    readonly coldConvergenceMs: number;
    readonly streamMs: number;
    readonly quiescenceMs: number;
  };
}

type RefKind = 'ConfigMap' | 'Secret';

interface AppSpec {
  image: string;
  configMapName?: string;
  secretName?: string;
  replicas: number;
  port?: number;
}

/** The soak's own picture of what it asked for: names, not content (the cluster is the truth at the end). */
class World {
  /** Namespace → ConfigMap and Secret names (whether they exist now). */
  readonly refs = new Map<string, Record<RefKind, Map<string, boolean>>>();
  /** `namespace/name` → spec of live CustomApps. */
  readonly live = new Map<string, AppSpec>();
  readonly everCreated = new Set<string>();
  /** CustomApps whose Deployment the operator is about to update (the competing writer races it there first). */
  private readonly changed: string[] = [];
  private version = 0;

  constructor(readonly random: SeededRandom) {}

  nextValue(): string {
    this.version += 1;
    return `v${this.version}`;
  }

  /** Notes that the operator is about to write these CustomApps' Deployments. */
  touched(...keys: string[]): void {
    this.changed.push(...keys);
    this.changed.splice(0, Math.max(0, this.changed.length - 5));
  }

  /** The CustomApp whose Deployment was most recently due for an update, if any is left. */
  takeTouched(): string | undefined {
    return this.changed.pop();
  }

  /** The live CustomApps that reference a ConfigMap or Secret. */
  referencing(namespace: string, kind: RefKind, name: string): string[] {
    return [...this.live]
      .filter(([key, spec]) => key.startsWith(`${namespace}/`) && (kind === 'ConfigMap' ? spec.configMapName : spec.secretName) === name)
      .map(([key]) => key);
  }

  namespaces(): string[] {
    return [...this.refs.keys()];
  }

  refNames(namespace: string, kind: RefKind, existing?: boolean): string[] {
    return [...this.refs.get(namespace)![kind]].filter(([, exists]) => existing === undefined || exists === existing).map(([name]) => name);
  }

  randomSpec(namespace: string): AppSpec {
    const random = this.random;
    return {
      image: `example/soak:${random.int(1000)}`,
      configMapName: random.chance(0.9) ? random.pick(this.refNames(namespace, 'ConfigMap')) : undefined,
      secretName: random.chance(0.7) ? random.pick(this.refNames(namespace, 'Secret')) : undefined,
      replicas: 1 + random.int(3),
      port: random.chance(0.3) ? this.randomPort() : undefined,
    };
  }

  /** A port for a CustomApp, or undefined when the live Services would exceed {@link MAX_SERVICES}. */
  randomPort(): number | undefined {
    const ported = [...this.live.values()].filter((spec) => spec.port).length;
    return ported < MAX_SERVICES ? 8000 + this.random.int(100) : undefined;
  }
}

/** Namespace sizes from a seed: some far past the collapse threshold, some below the split threshold, some between. */
function namespaceSizes(total: number, random: SeededRandom): number[] {
  const sizes: number[] = [];
  for (let left = total; left > 0; ) {
    const size = Math.min(left, random.pick([2, 3, 4, 6, 8, 9, 14, 25, 40, 80]));
    sizes.push(size);
    left -= size;
  }
  return sizes;
}

const tolerated = (error: unknown): boolean => isNotFound(error) || isConflict(error) || isAlreadyExists(error);

function customApp(namespace: string, name: string, spec: AppSpec): CustomApp {
  return objects.customApp(namespace, name, { ...spec });
}

const contentOf = (object: (KubeObject & HashableContent) | undefined): string | undefined => (object ? contentHash(object) : undefined);

/** One operator process and what it reported before it ended. */
class Generation {
  readonly tally = new Map<string, number>();
  metricsUrl?: string;
  leading = false;
  lastMetrics: MetricSample[] = [];
  /** Set when the soak killed it on purpose. */
  killed = false;
  exited = false;

  constructor(readonly process: OperatorProcess) {}

  /** Resolves when the process has exited (it never rejects). */
  async watchExit(): Promise<void> {
    await this.process.exited;
    this.exited = true;
  }

  /** Counts the log lines received so far and forgets them (the soak logs a lot). */
  drain(): void {
    for (const line of this.process.lines.splice(0)) {
      const msg = String(line.msg);
      this.tally.set(msg, (this.tally.get(msg) ?? 0) + 1);
      if (msg === 'started' && line.metrics) this.metricsUrl = String(line.metrics);
      if (msg === 'controller.start') this.leading = true;
    }
  }

  async scrape(): Promise<void> {
    this.drain();
    if (!this.metricsUrl) return;
    this.lastMetrics = await scrape(this.metricsUrl).catch(() => this.lastMetrics);
  }

  count(msg: string): number {
    return this.tally.get(msg) ?? 0;
  }
}

/** Random timers that stop together. */
class Ticker {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private readonly running = new Set<Promise<unknown>>();

  /** `onError` hears what an action threw (the soak counts it); the timer goes on. */
  constructor(private readonly onError: (error: unknown) => void) {}

  /** Runs `action` again and again, waiting a random delay in [minMs, maxMs) before each. */
  every(random: SeededRandom, minMs: number, maxMs: number, action: () => unknown): void {
    const schedule = (): void => {
      if (this.stopped) return;
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          const run = Promise.resolve()
            .then(action)
            .catch(this.onError)
            .finally(() => {
              this.running.delete(run);
              schedule();
            });
          this.running.add(run);
        },
        minMs + random.next() * (maxMs - minMs),
      );
      this.timers.add(timer);
    };
    schedule();
  }

  /** Stops scheduling and waits for the actions in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all(this.running);
  }
}

/**
 * Runs the soak against an emulator cluster with dist/ applied, and answers what happened. It never throws for a
 * broken invariant: the report lists every violation (the test and `npm run soak` judge it).
 */
export async function runFaultSoak(cluster: TestCluster, options: SoakOptions): Promise<SoakReport> {
  const emulator = cluster.emulator;
  if (!emulator) throw new Error('the fault soak needs the emulator (its fault injection)');
  const log = options.log ?? (() => undefined);
  const random = new SeededRandom(options.seed);
  const world = new World(random.fork());
  const admin = await adminClient(cluster);
  const { path: kubeconfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
  const operations: Record<string, number> = {};
  const generations: Generation[] = [];
  let current: Generation | undefined;
  const exits: Promise<void>[] = [];
  const startOperator = (): Generation => {
    const generation = new Generation(
      new OperatorProcess([
        `--kubeconfig=${kubeconfig}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=0',
        '--log-level=info',
        '--leader-elect',
        '--leader-elect-lease-duration=3s',
        '--leader-elect-renew-deadline=2s',
        '--leader-elect-retry-period=500ms',
      ]),
    );
    exits.push(generation.watchExit());
    generations.push(generation);
    current = generation;
    return generation;
  };
  /** Scrapes the running operator; one that exited on its own (not killed) is replaced, as its Deployment would be. */
  const tend = async (): Promise<void> => {
    const generation = current;
    if (!generation) return;
    if (generation.exited && !generation.killed) {
      generation.drain();
      log(`the operator exited on its own (${generation.count('leader.lost') > 0 ? 'it lost the Lease' : 'a crash'}); restarting it`);
      startOperator();
      return;
    }
    await generation.scrape();
  };
  const errors: string[] = [];
  const noteError = (error: unknown): void => {
    if (errors.length < 20) log(`unexpected error in the soak driver: ${(error as Error).message ?? String(error)}`);
    errors.push((error as Error).message ?? String(error));
  };
  const scraper = new Ticker(noteError);
  const faults = new Ticker(noteError);
  const stream = new Ticker(noteError);
  const started = performance.now();
  try {
    // ── setup: namespaces, ConfigMaps, Secrets, CustomApps ──
    const sizes = namespaceSizes(options.apps, random.fork());
    const creates: Array<() => Promise<void>> = [];
    sizes.forEach((size, index) => {
      const namespace = `soak-${index}`;
      const pools: Record<RefKind, Map<string, boolean>> = { ConfigMap: new Map(), Secret: new Map() };
      world.refs.set(namespace, pools);
      for (let ref = 0; ref < Math.max(1, Math.ceil(size * 0.7)); ref += 1) pools.ConfigMap.set(`config-${ref}`, true);
      for (let ref = 0; ref < Math.max(1, Math.ceil(size * 0.5)); ref += 1) pools.Secret.set(`secret-${ref}`, true);
      for (let app = 0; app < size; app += 1) {
        const spec = world.randomSpec(namespace);
        world.live.set(`${namespace}/app-${app}`, spec);
        world.everCreated.add(`${namespace}/app-${app}`);
        creates.push(() => createAll(admin, customApp(namespace, `app-${app}`, spec)));
      }
    });
    for (const namespace of world.namespaces()) await createNamespace(admin, namespace);
    const refCreates = world
      .namespaces()
      .flatMap((namespace) =>
        (['ConfigMap', 'Secret'] as const).flatMap((kind) =>
          world
            .refNames(namespace, kind)
            .map(
              (name) => () =>
                createAll(
                  admin,
                  kind === 'ConfigMap'
                    ? objects.configMap(namespace, name, { VALUE: world.nextValue() })
                    : objects.secret(namespace, name, { TOKEN: world.nextValue() }),
                ),
            ),
        ),
      );
    await forEachConcurrently(refCreates, 50, (create) => create());
    await forEachConcurrently(creates, 50, (create) => create());
    const setupMs = performance.now() - started;
    log(
      `setup: ${options.apps} CustomApps in ${sizes.length} namespaces (sizes ${sizes.join(' ')}), ${refCreates.length} ConfigMaps and Secrets, ${(setupMs / 1000).toFixed(1)} s`,
    );

    // ── the operator, and cold convergence ──
    const coldStarted = performance.now();
    startOperator();
    scraper.every(random.fork(), 1000, 1001, tend);
    const checker = new InvariantChecker(admin, cluster, world, () => current);
    let lastReport = performance.now();
    await waitUntil(
      async () => {
        const left = await checker.unconverged();
        if (left.length > 0 && performance.now() - lastReport > 10_000) {
          lastReport = performance.now();
          log(`cold start: ${left.length} CustomApps not converged yet, e.g. ${left.slice(0, 3).join('; ')}`);
        }
        return left.length === 0;
      },
      300_000,
      'cold convergence',
    );
    const coldConvergenceMs = performance.now() - coldStarted;
    log(`cold start: every CustomApp converged ${(coldConvergenceMs / 1000).toFixed(1)} s after the operator started`);

    // ── the stream: user changes, faults, competing writers, kills ──
    const streamStarted = performance.now();
    const failure500 = emulator.faults.failRequests({ match: { user: OPERATOR_USER }, rate: 0.025, code: 500 });
    const failure429 = emulator.faults.failRequests({ match: { user: OPERATOR_USER }, rate: 0.025, code: 429, retryAfterSeconds: 1 });
    const injected = { watchesEnded: 0, watchesReset: 0, forced410Requested: 0, compactions: 0, competingWrites: 0, kills: 0 };
    const faultRandom = random.fork();
    const watchResources = ['configmaps', 'secrets', 'customapps', 'deployments', 'services'];
    faults.every(faultRandom, 500, 2500, () => {
      const resource = faultRandom.pick(watchResources);
      if (faultRandom.chance(0.4)) {
        emulator.faults.expireNextWatch({ user: OPERATOR_USER, resource });
        injected.forced410Requested += 1;
      }
      const mode = faultRandom.chance(0.5) ? 'end' : 'reset';
      const dropped = emulator.faults.dropWatches({ user: OPERATOR_USER, resource }, mode);
      if (mode === 'end') injected.watchesEnded += dropped;
      else injected.watchesReset += dropped;
    });
    faults.every(faultRandom, 8000, 16000, () => {
      emulator.faults.compact();
      injected.compactions += 1;
    });
    const competitor = random.fork();
    // The competing writer: a burst of writes on a Deployment the operator is about to update (or any), so that the
    // operator's cached resourceVersion is stale when it writes; sometimes a drift (replicas) it must revert, or a
    // label on the CustomApp (which races the finalizer patch).
    faults.every(competitor, 20, 120, async () => {
      const key = world.takeTouched() ?? competitor.pick([...world.live.keys()]);
      const [namespace, name] = key.split('/') as [string, string];
      for (let write = 0; write < 3; write += 1) {
        const roll = competitor.next();
        await (roll < 0.6
          ? admin.patch(DEPLOYMENTS, namespace, name, 'merge', {
              metadata: { annotations: { 'soak.example.com/touched': competitor.next().toString(36) } },
            })
          : roll < 0.85
            ? admin.patch(DEPLOYMENTS, namespace, name, 'merge', { spec: { replicas: 7 } })
            : admin.patch(CUSTOM_APPS, namespace, name, 'merge', {
                metadata: { labels: { 'soak.example.com/touched': competitor.next().toString(36).slice(2, 10) } },
              })
        ).then(
          () => {
            injected.competingWrites += 1;
          },
          (error: unknown) => {
            if (!tolerated(error)) throw error;
          },
        );
      }
    });
    const ops = new OperationStream(admin, world, random.fork(), operations);
    stream.every(random.fork(), 1000 / options.opsPerSecond / 2, (1000 / options.opsPerSecond) * 1.5, () => ops.step());
    const killRandom = random.fork();
    for (let kill = 0; kill < options.kills; kill += 1) {
      const at = streamStarted + (options.streamMs * (kill + 0.3 + killRandom.next() * 0.4)) / options.kills;
      await sleep(at - performance.now());
      const victim = current!;
      await victim.scrape();
      victim.killed = true;
      victim.process.kill('SIGKILL');
      await victim.process.exited;
      victim.drain();
      injected.kills += 1;
      startOperator();
      log(
        `kill ${kill + 1}/${options.kills}: SIGKILL at ${((performance.now() - streamStarted) / 1000).toFixed(1)} s into the stream; restarted`,
      );
    }
    await sleep(streamStarted + options.streamMs - performance.now());
    await stream.stop();
    await faults.stop();
    const failures = new Map(
      emulator.faults
        .list()
        .filter((fault) => fault.kind === 'failure')
        .map((fault) => [fault.id, (fault.spec as { failed: number }).failed]),
    );
    const pendingExpiries = emulator.faults.list().filter((fault) => fault.kind === 'expire-next-watch').length;
    emulator.faults.reset();
    const streamMs = performance.now() - streamStarted;
    log(
      `stream: ${Object.values(operations).reduce((sum, count) => sum + count, 0)} operations in ${(streamMs / 1000).toFixed(1)} s ${JSON.stringify(operations)}`,
    );

    // ── quiescence: every referenced object exists again, then every invariant ──
    const quiescenceStarted = performance.now();
    await ops.recreateMissingReferences();
    let invariants = await checker.check();
    const atStreamEnd = violations(invariants);
    log(`at the end of the stream: ${atStreamEnd} invariant violations (not yet converged); waiting for quiescence`);
    const deadline = performance.now() + (options.quiescenceTimeoutMs ?? 180_000);
    while (!clean(invariants) && performance.now() < deadline) {
      await sleep(500);
      invariants = await checker.check();
    }
    await waitUntil(
      async () => {
        await current!.scrape();
        return (
          sumOf(current!.lastMetrics, 'workqueue_depth') === 0 && sumOf(current!.lastMetrics, 'controller_runtime_active_workers') === 0
        );
      },
      30_000,
      'the operator is idle',
    ).catch(() => undefined);
    await current!.scrape();
    invariants = await checker.check();
    const quiescenceMs = performance.now() - quiescenceStarted;
    log(`quiescence: ${(quiescenceMs / 1000).toFixed(1)} s`);

    const summed = (name: string, labels: Record<string, string> = {}): number =>
      generations.reduce((sum, generation) => sum + sumOf(generation.lastMetrics, name, labels), 0);
    const lines = (msg: string): number => generations.reduce((sum, generation) => sum + generation.count(msg), 0);
    return {
      seed: options.seed,
      options: {
        apps: options.apps,
        streamMs: options.streamMs,
        opsPerSecond: options.opsPerSecond,
        kills: options.kills,
        seed: options.seed,
        quiescenceTimeoutMs: options.quiescenceTimeoutMs,
      },
      namespaces: sizes.length,
      operations,
      faults: {
        failed500: failures.get(failure500) ?? 0,
        failed429: failures.get(failure429) ?? 0,
        watchesEnded: injected.watchesEnded,
        watchesReset: injected.watchesReset,
        forced410: injected.forced410Requested - pendingExpiries,
        compactions: injected.compactions,
        competingWrites: injected.competingWrites,
        conflicts409: summed('rest_client_requests_total', { code: '409' }),
        kills: injected.kills,
      },
      recoveries: {
        watchRetries: lines('retry'),
        relists: lines('relist'),
        reconcileErrors: summed('controller_runtime_reconcile_errors_total'),
        workqueueRetries: summed('workqueue_retries_total'),
        reconciles: summed('controller_runtime_reconcile_total'),
        leadershipLosses: generations.filter((generation) => generation.exited && !generation.killed && generation.count('leader.lost') > 0)
          .length,
        crashes: generations.filter((generation) => generation.exited && !generation.killed && generation.count('leader.lost') === 0)
          .length,
      },
      invariants,
      violationsAtStreamEnd: atStreamEnd,
      driverErrors: errors,
      timings: { setupMs, coldConvergenceMs, streamMs, quiescenceMs },
    };
  } finally {
    await stream.stop();
    await faults.stop();
    await scraper.stop();
    emulator.faults.reset();
    for (const generation of generations) await generation.process.dispose();
    await Promise.all(exits);
    admin.close();
  }
}

/** How many invariants are broken, over all kinds. */
export function violations(invariants: Invariants): number {
  return invariants.lostUpdates.length + invariants.stuckFinalizers.length + invariants.orphans.length + invariants.watchMismatches.length;
}

/** True when no invariant is broken. */
export function clean(invariants: Invariants): boolean {
  return violations(invariants) === 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, Math.max(0, ms)));
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(250);
  }
}

/** The random stream of user changes. */
class OperationStream {
  private nextApp = 0;
  private readonly deleted: string[] = [];

  constructor(
    private readonly admin: KubeClient,
    private readonly world: World,
    private readonly random: SeededRandom,
    private readonly counts: Record<string, number>,
  ) {}

  /** One random operation; races with the soak's own earlier operations (404, 409) are counted, not failures. */
  async step(): Promise<void> {
    const { random, world } = this;
    const op = random.weighted({
      createApp: 10,
      deleteApp: 8,
      image: 15,
      replicas: 5,
      port: 5,
      switchConfigMap: 7,
      switchSecret: 4,
      editConfigMap: 20,
      labelConfigMap: 3,
      editSecret: 12,
      deleteConfigMap: 3,
      recreateConfigMap: 3,
      deleteSecret: 2,
      recreateSecret: 2,
    });
    const namespace = random.pick(world.namespaces());
    const liveHere = [...world.live.keys()].filter((key) => key.startsWith(`${namespace}/`));
    const outcome = await this.apply(op, namespace, liveHere).then(
      () => op,
      (error: unknown) => {
        if (!tolerated(error)) throw error;
        return `${op} (raced)`;
      },
    );
    this.counts[outcome] = (this.counts[outcome] ?? 0) + 1;
  }

  private async apply(op: string, namespace: string, liveHere: string[]): Promise<void> {
    const { random, world, admin } = this;
    const someApp = (): [string, AppSpec] | undefined => {
      if (liveHere.length === 0) return undefined;
      const key = random.pick(liveHere);
      return [key, world.live.get(key)!];
    };
    const patchSpec = async (change: (spec: AppSpec) => Partial<Record<keyof AppSpec, unknown>>): Promise<void> => {
      const picked = someApp();
      if (!picked) return;
      const [key, spec] = picked;
      const patch = change(spec);
      Object.assign(spec, Object.fromEntries(Object.entries(patch).map(([field, value]) => [field, value ?? undefined])));
      await admin.patch(CUSTOM_APPS, namespace, key.split('/')[1]!, 'merge', { spec: patch });
      world.touched(key);
    };
    const kind: RefKind = op.includes('Secret') ? 'Secret' : 'ConfigMap';
    const resource = kind === 'ConfigMap' ? CONFIGMAPS : SECRETS;
    switch (op) {
      case 'createApp': {
        const reuse = this.deleted.findIndex((key) => key.startsWith(`${namespace}/`));
        const key = reuse >= 0 && random.chance(0.4) ? this.deleted.splice(reuse, 1)[0]! : `${namespace}/new-${(this.nextApp += 1)}`;
        const spec = world.randomSpec(namespace);
        world.live.set(key, spec);
        world.everCreated.add(key);
        await createAll(admin, customApp(namespace, key.split('/')[1]!, spec));
        return;
      }
      case 'deleteApp': {
        const picked = someApp();
        if (!picked) return;
        world.live.delete(picked[0]);
        this.deleted.push(picked[0]);
        await admin.delete(CUSTOM_APPS, namespace, picked[0].split('/')[1]!);
        return;
      }
      case 'image':
        return patchSpec(() => ({ image: `example/soak:${random.int(1000)}` }));
      case 'replicas':
        return patchSpec(() => ({ replicas: 1 + random.int(4) }));
      case 'port':
        return patchSpec((spec) => ({ port: spec.port ? null : (world.randomPort() ?? null) }));
      case 'switchConfigMap':
        return patchSpec(() => ({ configMapName: random.chance(0.9) ? random.pick(world.refNames(namespace, 'ConfigMap')) : null }));
      case 'switchSecret':
        return patchSpec(() => ({ secretName: random.chance(0.9) ? random.pick(world.refNames(namespace, 'Secret')) : null }));
      case 'editConfigMap':
      case 'editSecret': {
        const names = world.refNames(namespace, kind, true);
        if (names.length === 0) return;
        const data = kind === 'ConfigMap' ? { data: { VALUE: world.nextValue() } } : { stringData: { TOKEN: world.nextValue() } };
        const name = random.pick(names);
        await admin.patch(resource, namespace, name, 'merge', data);
        world.touched(...world.referencing(namespace, kind, name));
        return;
      }
      case 'labelConfigMap': {
        const names = world.refNames(namespace, 'ConfigMap', true);
        if (names.length === 0) return;
        await admin.patch(CONFIGMAPS, namespace, random.pick(names), 'merge', {
          metadata: { labels: { 'soak.example.com/touched': world.nextValue() } },
        });
        return;
      }
      case 'deleteConfigMap':
      case 'deleteSecret': {
        const names = world.refNames(namespace, kind, true);
        if (names.length <= 1) return;
        const name = random.pick(names);
        world.refs.get(namespace)![kind].set(name, false);
        await admin.delete(resource, namespace, name);
        return;
      }
      case 'recreateConfigMap':
      case 'recreateSecret': {
        const names = world.refNames(namespace, kind, false);
        if (names.length === 0) return;
        await this.recreate(namespace, kind, random.pick(names));
        return;
      }
    }
  }

  private async recreate(namespace: string, kind: RefKind, name: string): Promise<void> {
    this.world.refs.get(namespace)![kind].set(name, true);
    await createAll(
      this.admin,
      kind === 'ConfigMap'
        ? objects.configMap(namespace, name, { VALUE: this.world.nextValue() })
        : objects.secret(namespace, name, { TOKEN: this.world.nextValue() }),
    );
  }

  /** Recreates every ConfigMap and Secret the stream deleted, so that every live CustomApp can converge. */
  async recreateMissingReferences(): Promise<void> {
    for (const namespace of this.world.namespaces()) {
      for (const kind of ['ConfigMap', 'Secret'] as const) {
        for (const name of this.world.refNames(namespace, kind, false)) {
          await this.recreate(namespace, kind, name).catch((error: unknown) => {
            if (!isAlreadyExists(error)) throw error;
          });
        }
      }
    }
  }
}

/** Reads the whole cluster and the operator's metrics, and lists every broken invariant. */
class InvariantChecker {
  constructor(
    private readonly admin: KubeClient,
    private readonly cluster: TestCluster,
    private readonly world: World,
    private readonly operator: () => Generation | undefined,
  ) {}

  /** The live CustomApps that do not run their latest spec and content yet (the cold-start check). */
  async unconverged(): Promise<readonly string[]> {
    if (!this.operator()?.leading) return ['the operator does not lead yet'];
    return (await this.check()).lostUpdates;
  }

  async check(): Promise<Invariants> {
    const { admin } = this;
    const [apps, deployments, services, configMaps, secrets] = await Promise.all([
      admin.list<CustomApp>(CUSTOM_APPS),
      admin.list<Deployment>(DEPLOYMENTS, { labelSelector: OWNED_SELECTOR }),
      admin.list<Service>(SERVICES, { labelSelector: OWNED_SELECTOR }),
      admin.list<KubeObject & HashableContent>(CONFIGMAPS),
      admin.list<KubeObject & HashableContent>(SECRETS),
    ]);
    const byKey = <T extends KubeObject>(items: readonly T[]): Map<string, T> =>
      new Map(items.map((item) => [`${item.metadata.namespace}/${item.metadata.name}`, item]));
    const deploymentOf = byKey(deployments.items);
    const serviceOf = byKey(services.items);
    const configMapOf = byKey(configMaps.items);
    const secretOf = byKey(secrets.items);
    const appOf = byKey(apps.items);

    const lostUpdates: string[] = [];
    const stuckFinalizers: string[] = [];
    const referenced = new Map<string, number>();
    for (const app of apps.items) {
      const namespace = app.metadata.namespace!;
      const key = `${namespace}/${app.metadata.name}`;
      if (!this.world.everCreated.has(key)) continue;
      if (app.metadata.deletionTimestamp) {
        stuckFinalizers.push(key);
        continue;
      }
      const { spec } = app;
      for (const [kind, name] of [
        ['ConfigMap', spec.configMapName],
        ['Secret', spec.secretName],
      ] as const) {
        if (name) referenced.set(`${kind}/${namespace}/${name}`, (referenced.get(`${kind}/${namespace}/${name}`) ?? 0) + 1);
      }
      const deployment = deploymentOf.get(key);
      const problems: string[] = [];
      const expectedConfig = spec.configMapName
        ? (contentOf(configMapOf.get(`${namespace}/${spec.configMapName}`)) ?? 'missing')
        : undefined;
      const expectedSecret = spec.secretName ? (contentOf(secretOf.get(`${namespace}/${spec.secretName}`)) ?? 'missing') : undefined;
      if (!deployment) problems.push('no Deployment');
      else {
        const container = deployment.spec.template.spec.containers[0];
        if (!isControlledBy(deployment, app)) problems.push('Deployment not controlled by it');
        if (container?.image !== spec.image) problems.push(`image ${container?.image} ≠ ${spec.image}`);
        if ((deployment.spec.replicas ?? 1) !== (spec.replicas ?? 1))
          problems.push(`replicas ${deployment.spec.replicas} ≠ ${spec.replicas}`);
        if (podAnnotation(deployment, CONFIG_HASH_ANNOTATION) !== expectedConfig)
          problems.push(`config-hash ${podAnnotation(deployment, CONFIG_HASH_ANNOTATION)?.slice(0, 8)} ≠ ${expectedConfig?.slice(0, 8)}`);
        if (podAnnotation(deployment, SECRET_HASH_ANNOTATION) !== expectedSecret)
          problems.push(`secret-hash ${podAnnotation(deployment, SECRET_HASH_ANNOTATION)?.slice(0, 8)} ≠ ${expectedSecret?.slice(0, 8)}`);
      }
      const service = serviceOf.get(key);
      if (spec.port && service?.spec.ports?.[0]?.port !== spec.port)
        problems.push(`Service port ${service?.spec.ports?.[0]?.port} ≠ ${spec.port}`);
      if (!spec.port && service) problems.push('a Service without spec.port');
      if (app.status?.observedGeneration !== app.metadata.generation)
        problems.push(`observedGeneration ${app.status?.observedGeneration} ≠ ${app.metadata.generation}`);
      if (app.status?.configHash !== expectedConfig) problems.push('status.configHash');
      if (app.status?.secretHash !== expectedSecret) problems.push('status.secretHash');
      if (problems.length > 0) lostUpdates.push(`${key}: ${problems.join(', ')}`);
    }
    const orphans: string[] = [];
    for (const key of this.world.everCreated) {
      if (appOf.has(key)) continue;
      if (deploymentOf.has(key)) orphans.push(`${key}: Deployment left`);
      if (serviceOf.has(key)) orphans.push(`${key}: Service left`);
    }
    const { mismatches, server, operator } = this.watches(referenced);
    return {
      liveApps: apps.items.length,
      deletedApps: [...this.world.everCreated].filter((key) => !appOf.has(key)).length,
      lostUpdates,
      stuckFinalizers,
      orphans,
      watchMismatches: mismatches,
      openWatches: { server, operator },
    };
  }

  /** The operator's dependency watches against the referenced set: its metrics, and the server's open watches. */
  private watches(referenced: ReadonlyMap<string, number>): { mismatches: string[]; server: number; operator: number } {
    const counters = this.cluster.emulator!.counters;
    const metrics = this.operator()?.lastMetrics ?? [];
    const mismatches: string[] = [];
    for (const kind of ['ConfigMap', 'Secret'] as const) {
      const refs = [...referenced].filter(([key]) => key.startsWith(`${kind}/`));
      const watched = sumOf(metrics, 'customapp_dependency_watches_active', { kind });
      const subscribers = sumOf(metrics, 'customapp_dependency_subscribers', { kind });
      if (watched !== refs.length) mismatches.push(`${kind}: ${watched} watched ≠ ${refs.length} referenced`);
      const holders = refs.reduce((sum, [, count]) => sum + count, 0);
      if (subscribers !== holders) mismatches.push(`${kind}: ${subscribers} subscriptions ≠ ${holders} (CustomApp, ${kind}) pairs`);
      const resource = kind === 'ConfigMap' ? 'configmaps' : 'secrets';
      for (const namespace of this.world.namespaces()) {
        const count = refs.filter(([key]) => key.startsWith(`${kind}/${namespace}/`)).length;
        const open = counters.openWatchCount({ resource, namespace, user: OPERATOR_USER });
        const perObject = open === count && count <= DEFAULT_COLLAPSE_THRESHOLD;
        const collapsed = open === 1 && count >= DEFAULT_SPLIT_THRESHOLD;
        if (!(perObject || collapsed))
          mismatches.push(`${kind} in ${namespace}: ${open} open watches on the server for ${count} referenced objects`);
      }
    }
    for (const resource of ['customapps', 'deployments', 'services']) {
      const open = counters.openWatchCount({ resource, user: OPERATOR_USER });
      if (open !== 1) mismatches.push(`${open} open ${resource} watches on the server (one informer)`);
    }
    const server =
      counters.openWatchCount({ resource: 'configmaps', user: OPERATOR_USER }) +
      counters.openWatchCount({ resource: 'secrets', user: OPERATOR_USER });
    const operator = sumOf(metrics, 'customapp_watch_streams_open');
    if (server !== operator) mismatches.push(`the server has ${server} open dependency watches, the operator ${operator} streams`);
    return { mismatches, server, operator };
  }
}
