// The fault soak: an operator process under random changes, API faults, competing writers and SIGKILLs, then every invariant.
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import type { KubeClient } from '../../operator/kube/client.js';
import { eventually } from '../support/eventually.js';
import type { TestCluster } from '../support/targets.js';
import { adminClient, createAll, createNamespace, objects } from '../support/operator-harness.js';
import { OperatorProcess, PLAIN_METRICS_FLAGS, UNGOVERNED_FLAGS } from '../support/operator-process.js';
import { type FaultSchedule, scheduleFaults } from './fault-soak/faults.js';
import { InvariantChecker } from './fault-soak/invariants.js';
import { OperationStream } from './fault-soak/operations.js';
import { Generation } from './fault-soak/operator-generation.js';
import { clean, type SoakOptions, type SoakReport, violations } from './fault-soak/report.js';
import { Ticker } from './fault-soak/ticker.js';
import { customApp, namespaceSizes, type RefKind, World } from './fault-soak/world.js';
import { forEachConcurrently } from './support/concurrently.js';
import { sumOf } from './support/prometheus.js';
import { SeededRandom } from './support/random.js';

export { clean, violations } from './fault-soak/report.js';
export type { FaultCounts, Invariants, Recoveries, SoakOptions, SoakReport } from './fault-soak/report.js';

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
  const operators = operatorGenerations(kubeconfig, log);
  const { all: generations, exits } = operators;
  const current = (): Generation | undefined => operators.current;
  const { errors, noteError } = driverErrors(log);
  const scraper = new Ticker(noteError);
  const faults = new Ticker(noteError);
  const stream = new Ticker(noteError);
  const started = performance.now();
  try {
    // ── setup: namespaces, ConfigMaps, Secrets, CustomApps ──
    const { sizes, refCreates } = await createSoakWorld(admin, world, options.apps, random);
    const setupMs = performance.now() - started;
    log(
      `setup: ${options.apps} CustomApps in ${sizes.length} namespaces (sizes ${sizes.join(' ')}), ${refCreates} ConfigMaps and Secrets, ${(setupMs / 1000).toFixed(1)} s`,
    );

    // ── the operator, and cold convergence ──
    const coldStarted = performance.now();
    operators.start();
    scraper.every(random.fork(), 1000, 1001, () => operators.tend());
    const checker = new InvariantChecker(admin, cluster, world, current);
    await awaitColdConvergence(checker, log);
    const coldConvergenceMs = performance.now() - coldStarted;
    log(`cold start: every CustomApp converged ${(coldConvergenceMs / 1000).toFixed(1)} s after the operator started`);

    // ── the stream: user changes, faults, competing writers, kills ──
    const streamStarted = performance.now();
    const { failure500, failure429, injected } = scheduleFaults(emulator, faults, admin, world, random);
    const ops = new OperationStream(admin, world, random.fork(), operations);
    stream.every(random.fork(), 1000 / options.opsPerSecond / 2, (1000 / options.opsPerSecond) * 1.5, () => ops.step());
    const killRandom = random.fork();
    await killDuringStream(options, streamStarted, killRandom, operators, injected, log);
    await sleep(streamStarted + options.streamMs - performance.now());
    await stream.stop();
    await faults.stop();
    const { failures, pendingExpiries } = await endFaults(emulator, [failure500, failure429]);
    const streamMs = performance.now() - streamStarted;
    log(
      `stream: ${Object.values(operations).reduce((sum, count) => sum + count, 0)} operations in ${(streamMs / 1000).toFixed(1)} s ${JSON.stringify(operations)}`,
    );

    // ── quiescence: every referenced object exists again, then every invariant ──
    const quiescenceStarted = performance.now();
    await ops.recreateMissingReferences();
    const { invariants, atStreamEnd } = await awaitQuiescence(checker, current, options, log);
    const quiescenceMs = performance.now() - quiescenceStarted;
    log(`quiescence: ${(quiescenceMs / 1000).toFixed(1)} s`);

    return soakReport(options, generations, {
      namespaces: sizes.length,
      operations,
      failed500: failures.get(failure500) ?? 0,
      failed429: failures.get(failure429) ?? 0,
      injected,
      pendingExpiries,
      invariants,
      atStreamEnd,
      errors,
      timings: { setupMs, coldConvergenceMs, streamMs, quiescenceMs },
    });
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

/** The soak driver's own unexpected errors, and the handler its tickers report them to (the first 20 are logged). */
function driverErrors(log: (line: string) => void): { errors: string[]; noteError: (error: unknown) => void } {
  const errors: string[] = [];
  const noteError = (error: unknown): void => {
    if (errors.length < 20) log(`unexpected error in the soak driver: ${(error as Error).message ?? String(error)}`);
    errors.push((error as Error).message ?? String(error));
  };
  return { errors, noteError };
}

/** The operator processes of a soak, one generation after another: only the last runs. */
interface OperatorGenerations {
  readonly all: Generation[];
  /** Each generation's exit watch, awaited when the soak ends. */
  readonly exits: Promise<void>[];
  readonly current: Generation | undefined;
  /** Starts the next generation. */
  start(): Generation;
  /** Scrapes the running operator; one that exited on its own (not killed) is replaced, as its Deployment would be. */
  tend(): Promise<void>;
}

function operatorGenerations(kubeconfig: string, log: (line: string) => void): OperatorGenerations {
  let current: Generation | undefined;
  const generations: OperatorGenerations = {
    all: [],
    exits: [],
    get current() {
      return current;
    },
    start() {
      const generation = new Generation(new OperatorProcess(soakOperatorArgs(kubeconfig)));
      generations.exits.push(generation.watchExit());
      generations.all.push(generation);
      current = generation;
      return generation;
    },
    async tend() {
      const generation = generations.current;
      if (!generation) return;
      if (generation.exited && !generation.killed) {
        generation.drain();
        log(`the operator exited on its own (${generation.count('leader.lost') > 0 ? 'it lost the Lease' : 'a crash'}); restarting it`);
        for (const line of generation.leaderLines.slice(-8)) log(`    ${line}`);
        generations.start();
        return;
      }
      await generation.scrape();
    },
  };
  return generations;
}

/** Waits (up to 5 minutes) until every CustomApp has converged, logging the first unconverged ones every 10 s. */
async function awaitColdConvergence(checker: InvariantChecker, log: (line: string) => void): Promise<void> {
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
}

/** SIGKILLs the running operator `options.kills` times, spread over the stream at random, each replaced at once. */
async function killDuringStream(
  options: SoakOptions,
  streamStarted: number,
  killRandom: SeededRandom,
  operators: OperatorGenerations,
  injected: FaultSchedule['injected'],
  log: (line: string) => void,
): Promise<void> {
  for (let kill = 0; kill < options.kills; kill += 1) {
    const at = streamStarted + (options.streamMs * (kill + 0.3 + killRandom.next() * 0.4)) / options.kills;
    await sleep(at - performance.now());
    const victim = operators.current!;
    await victim.scrape();
    victim.killed = true;
    victim.process.kill('SIGKILL');
    await victim.process.exited;
    victim.drain();
    injected.kills += 1;
    operators.start();
    log(
      `kill ${kill + 1}/${options.kills}: SIGKILL at ${((performance.now() - streamStarted) / 1000).toFixed(1)} s into the stream; restarted`,
    );
  }
}

/** How long the forced 410s requested last in the stream may wait for the operator's next watches. */
const EXPIRY_DRAIN_MS = 15_000;

/**
 * Removes the emulator's faults: the failure rules at once, the forced 410s once served (each followed a dropped watch,
 * which the operator opens again after its backoff) or after {@link EXPIRY_DRAIN_MS}. Answers how many requests each
 * failure rule failed, and the 410s never served.
 */
async function endFaults(
  emulator: NonNullable<TestCluster['emulator']>,
  failureRules: readonly number[],
): Promise<{ failures: Map<number, number>; pendingExpiries: number }> {
  const failures = new Map(
    emulator.faults
      .list()
      .filter((fault) => fault.kind === 'failure')
      .map((fault) => [fault.id, (fault.spec as { failed: number }).failed]),
  );
  for (const rule of failureRules) emulator.faults.remove(rule);
  const pending = (): number => emulator.faults.list().filter((fault) => fault.kind === 'expire-next-watch').length;
  // One not served by then is counted as such, not an error.
  await eventually('the forced 410s served', () => pending() === 0, EXPIRY_DRAIN_MS, 100).catch(() => undefined);
  const pendingExpiries = pending();
  emulator.faults.reset();
  return { failures, pendingExpiries };
}

/**
 * Checks the invariants at the end of the stream, then again until they hold or the quiescence timeout passes, and a
 * last time once the operator is idle (or 30 s later); answers the last check and the violations at the stream's end.
 */
async function awaitQuiescence(
  checker: InvariantChecker,
  current: () => Generation | undefined,
  options: SoakOptions,
  log: (line: string) => void,
): Promise<{ invariants: SoakReport['invariants']; atStreamEnd: number }> {
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
      await current()!.scrape();
      return (
        sumOf(current()!.lastMetrics, 'workqueue_depth') === 0 && sumOf(current()!.lastMetrics, 'controller_runtime_active_workers') === 0
      );
    },
    30_000,
    'the operator is idle',
  ).catch(() => undefined);
  await current()!.scrape();
  invariants = await checker.check();
  return { invariants, atStreamEnd };
}

/** The operator's flags in the soak: a Lease that a SIGKILL's successor takes over within seconds, governance off. */
function soakOperatorArgs(kubeconfig: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    // Scraped over plain HTTP by the harness.
    ...PLAIN_METRICS_FLAGS,
    '--health-probe-bind-address=0',
    '--log-level=info',
    '--leader-elect',
    '--leader-elect-lease-duration=3s',
    '--leader-elect-renew-deadline=2s',
    '--leader-elect-retry-period=500ms',
    ...UNGOVERNED_FLAGS,
  ];
}

/**
 * Creates the soak's namespaces (sizes drawn from `random`), their ConfigMaps and Secrets and then their CustomApps,
 * recording each in `world`; answers the namespace sizes and how many ConfigMaps and Secrets it created.
 */
async function createSoakWorld(
  admin: KubeClient,
  world: World,
  apps: number,
  random: SeededRandom,
): Promise<{ sizes: number[]; refCreates: number }> {
  const sizes = namespaceSizes(apps, random.fork());
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
  return { sizes, refCreates: refCreates.length };
}

/** What the soak counted, for {@link soakReport}. */
interface SoakCounts {
  readonly namespaces: number;
  readonly operations: Record<string, number>;
  readonly failed500: number;
  readonly failed429: number;
  readonly injected: FaultSchedule['injected'];
  /** Forced 410s requested and never served (no watch of theirs started before the stream ended). */
  readonly pendingExpiries: number;
  readonly invariants: SoakReport['invariants'];
  readonly atStreamEnd: number;
  readonly errors: string[];
  readonly timings: SoakReport['timings'];
}

/** The soak's report: its counts, and the recoveries summed over every operator generation's metrics and logs. */
function soakReport(options: SoakOptions, generations: readonly Generation[], counts: SoakCounts): SoakReport {
  const { injected } = counts;
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
    namespaces: counts.namespaces,
    operations: counts.operations,
    faults: {
      failed500: counts.failed500,
      failed429: counts.failed429,
      watchesEnded: injected.watchesEnded,
      watchesReset: injected.watchesReset,
      forced410: injected.forced410Requested - counts.pendingExpiries,
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
      crashes: generations.filter((generation) => generation.exited && !generation.killed && generation.count('leader.lost') === 0).length,
    },
    invariants: counts.invariants,
    violationsAtStreamEnd: counts.atStreamEnd,
    driverErrors: counts.errors,
    timings: counts.timings,
  };
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
