// `npm run soak`: the full fault soak (1,000 CustomApps, ≥ 3 SIGKILLs) and the full churn (10 × 1,000), with their
// figures; `--target cluster`: the fault soak on the real node (the operator's image, node faults).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startCluster } from '../support/targets.js';
import { installOperatorResources } from '../support/operator-harness.js';
import { HEAP_TOLERANCE, resourcesGrown, runChurn, type ChurnReport } from '../reliability/churn.js';
import { clean, runFaultSoak, type SoakReport } from '../reliability/fault-soak.js';
import { SeededRandom, seedFromEnvironment } from '../reliability/support/random.js';
import { checkRegistryModel } from '../../operator/dependencies/testing/registry-model.js';
import { checkElectorModel } from '../../operator/leader/testing/elector-model.js';
import { checkRolloutModel } from '../../operator/reconcile/testing/rollout-model.js';
import { type NodeSoakReport, nodeSoakHolds, nodeSoakSummary, recoveryLines, runNodeSoak } from '../node/node-soak.js';
import { NODE_FAULT_KINDS, type NodeFaultKind } from '../node/node-faults.js';

const USAGE = `npm run soak -- [options]
  --target <where>     emulator (default: the soak, churn and models below) or cluster: the fault soak on the real
                       node (npm run cluster), with the operator's image and node faults; it takes --apps (default 40),
                       --workloads, --faults, --ops (default 0.5), --runs, --seed and --json
  --workloads <n>      with --target cluster: Deployments opted in by annotation (default 20)
  --faults <n>         with --target cluster: node faults per run, every kind once first (default 12)
  --fault-kinds <k,…>  with --target cluster: only these kinds of fault (comma-separated, of ${NODE_FAULT_KINDS.join(', ')});
                       default every kind
  --runs <n>           with --target cluster: runs, each on a fresh node, seeds seed, seed+1, … (default 1)
  --sharding           with --target cluster: the chart's sharding (each replica works on its share, a Lease each);
                       the faults aimed at the leader hit a random shard, the invariants read the ring
  --replicas <n>       with --target cluster: operator replicas (default 2, or 3 with --sharding)
  --operator-arg <a>   with --target cluster: one more operator argument (repeatable)
  --artifacts <dir>    with --target cluster: the operator pods' logs and the audit log of each run, in <dir>/run-<n>
  --apps <n>           CustomApps in the fault soak (default 1000)
  --stream <seconds>   length of the random stream of changes and faults (default 120)
  --ops <n>            user operations per second during the stream (default 40)
  --kills <n>          SIGKILLs of the operator process, each followed by a restart (default 4)
  --churn-rounds <n>   churn rounds (default 10)
  --churn-count <n>    CustomApps per churn round (default 1000)
  --only <part>        run one part: soak, churn, or models (the model-based checks of the dependency
                       registry, the leader elector and the rollout governance)
  --registry-runs <n>  random runs of the dependency registry's model check (default 100000)
  --elector-runs <n>   random runs of the leader elector's model check (default 5000)
  --rollout-runs <n>   random runs of the rollout governance's model check (default 20000)
  --json <file>        also write both reports as JSON
  --seed <n>           the seed (default SOAK_SEED, or a fresh one; always printed)
`;

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name}: "${raw}" is not a non-negative number`);
  return value;
}

/** `--fault-kinds`: a comma-separated list of kinds of node fault, each checked. */
function faultKinds(raw: string | undefined): readonly NodeFaultKind[] {
  if (raw === undefined) return NODE_FAULT_KINDS;
  const kinds = raw.split(',').map((kind) => kind.trim());
  const unknown = kinds.filter((kind) => !(NODE_FAULT_KINDS as readonly string[]).includes(kind));
  if (kinds.length === 0 || unknown.length > 0)
    throw new Error(`--fault-kinds: "${unknown.join(', ') || raw}" is not among ${NODE_FAULT_KINDS.join(', ')}`);
  return kinds as NodeFaultKind[];
}

const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function soakSummary(report: SoakReport): string {
  const { faults, recoveries, invariants, timings } = report;
  return [
    `fault soak (seed ${report.seed}): ${report.options.apps} CustomApps in ${report.namespaces} namespaces, ${seconds(timings.streamMs)} of stream at ${report.options.opsPerSecond} ops/s, ${faults.kills} SIGKILLs`,
    `  operations: ${Object.entries(report.operations)
      .map(([op, count]) => `${op} ${count}`)
      .join(', ')}`,
    `  faults injected: ${faults.failed500} × 500, ${faults.failed429} × 429 + Retry-After, ${faults.watchesEnded} watches ended, ${faults.watchesReset} watches reset, ${faults.forced410} forced 410s, ${faults.compactions} compactions, ${faults.competingWrites} competing writes → ${faults.conflicts409} × 409 to the operator, ${faults.kills} SIGKILLs`,
    `  operator recoveries: ${recoveries.watchRetries} watch retries, ${recoveries.relists} relists, ${recoveries.reconcileErrors} reconcile errors retried, ${recoveries.workqueueRetries} work-queue retries, ${recoveries.reconciles} reconciles; ${recoveries.leadershipLosses} leadership losses, ${recoveries.crashes} crashes`,
    `  soak driver errors: ${report.driverErrors.length}`,
    `  timings: setup ${seconds(timings.setupMs)}, cold convergence ${seconds(timings.coldConvergenceMs)}, quiescence ${seconds(timings.quiescenceMs)} (${report.violationsAtStreamEnd} violations when the stream stopped)`,
    `  invariants: ${invariants.liveApps} live CustomApps, ${invariants.deletedApps} deleted; lost updates ${invariants.lostUpdates.length}, stuck finalizers ${invariants.stuckFinalizers.length}, orphans ${invariants.orphans.length}, watch mismatches ${invariants.watchMismatches.length}; open dependency watches: server ${invariants.openWatches.server}, operator ${invariants.openWatches.operator}`,
    ...[...invariants.lostUpdates, ...invariants.stuckFinalizers, ...invariants.orphans, ...invariants.watchMismatches]
      .slice(0, 20)
      .map((line) => `    ✘ ${line}`),
  ].join('\n');
}

function churnSummary(report: ChurnReport): string {
  return [
    `churn: ${report.rounds} rounds × ${report.count} CustomApps, rounds ${report.roundMs.map((ms) => seconds(ms)).join(', ')}`,
    `  heap after forced GC: cold ${mib(report.cold.memory.heapUsed)}, baseline after round 1 ${mib(report.baseline.memory.heapUsed)}, after round ${report.rounds} ${mib(report.after.memory.heapUsed)} (${(report.heapGrowth * 100).toFixed(1)}%, limit ${HEAP_TOLERANCE * 100}%); RSS ${mib(report.after.memory.rss)}`,
    `  peak per round: ${report.peak.dependencyWatches} dependency watches over ${report.peak.streams} streams; at the end: ${JSON.stringify(report.end)}`,
    `  live handles: baseline ${JSON.stringify(report.resources.baseline)}, after ${JSON.stringify(report.resources.after)}`,
  ].join('\n');
}

function churnHolds(report: ChurnReport): boolean {
  return (
    report.heapGrowth <= HEAP_TOLERANCE &&
    report.end.dependencyWatches === 0 &&
    report.end.streams === 0 &&
    report.end.subscribers === 0 &&
    report.end.serverDependencyWatches === 0 &&
    resourcesGrown(report.resources.baseline, report.resources.after).length === 0
  );
}

/** The command line's options (every value a string, checked where it is read). */
function parseOptions(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      apps: { type: 'string' },
      stream: { type: 'string' },
      ops: { type: 'string' },
      kills: { type: 'string' },
      'churn-rounds': { type: 'string' },
      'churn-count': { type: 'string' },
      only: { type: 'string' },
      'registry-runs': { type: 'string' },
      'elector-runs': { type: 'string' },
      'rollout-runs': { type: 'string' },
      json: { type: 'string' },
      seed: { type: 'string' },
      target: { type: 'string' },
      workloads: { type: 'string' },
      faults: { type: 'string' },
      'fault-kinds': { type: 'string' },
      runs: { type: 'string' },
      artifacts: { type: 'string' },
      replicas: { type: 'string' },
      sharding: { type: 'boolean' },
      'operator-arg': { type: 'string', multiple: true },
      help: { type: 'boolean' },
    },
  }).values;
}

type Options = ReturnType<typeof parseOptions>;

/** Writes one line of the soak's output. */
function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** `--target cluster`: the node soak, each run on a fresh node; answers the exit code. */
async function runNodeSoaks(values: Options, seed: number): Promise<number> {
  const reports: NodeSoakReport[] = [];
  for (let run = 0; run < positive('runs', values.runs, 1); run += 1) {
    const runSeed = (seed + run) % 4294967296;
    const cluster = await startCluster('cluster', { cluster: { log: (event) => event !== 'build' && say(`  · node ${event}`) } });
    try {
      const report = await runNodeSoak(cluster, {
        apps: positive('apps', values.apps, 40),
        workloads: positive('workloads', values.workloads, 20),
        configMaps: 4,
        secrets: 3,
        faults: positive('faults', values.faults, 12),
        faultKinds: faultKinds(values['fault-kinds']),
        opsPerSecond: positive('ops', values.ops, 0.5),
        seed: runSeed,
        sharding: values.sharding ?? false,
        replicas: positive('replicas', values.replicas, values.sharding ? 3 : 2),
        operatorArgs: values['operator-arg'] ?? [],
        ...(values.artifacts ? { artifactsDir: join(values.artifacts, `run-${run + 1}`) } : {}),
        log: (line) => say(`  · ${line}`),
      });
      reports.push(report);
      say(`run ${run + 1} (seed ${runSeed}): ${nodeSoakHolds(report) ? 'every invariant holds' : 'SOME INVARIANTS ARE BROKEN'}`);
      for (const line of recoveryLines(report)) say(`  ${line}`);
      say(`  invariants: ${JSON.stringify(report.invariants)}`);
    } finally {
      await cluster.stop();
    }
  }
  say(nodeSoakSummary(reports));
  if (values.json) writeFileSync(values.json, `${JSON.stringify(reports, null, 2)}\n`);
  return reports.every(nodeSoakHolds) ? 0 : 1;
}

/** The model-based checks of the dependency registry, the leader elector and the rollout governance. */
async function runModels(values: Options, seed: number): Promise<void> {
  const registryRuns = positive('registry-runs', values['registry-runs'], 100_000);
  const electorRuns = positive('elector-runs', values['elector-runs'], 5_000);
  // fast-check's seeds are 32-bit integers; the soak's seed is reused so that one number replays everything.
  const modelSeed = seed | 0;
  const started = performance.now();
  await checkRegistryModel({ numRuns: registryRuns, seed: modelSeed });
  say(`dependency registry model: ${registryRuns} runs held (seed ${modelSeed}) in ${seconds(performance.now() - started)}`);
  const electorStarted = performance.now();
  const elector = await checkElectorModel({ numRuns: electorRuns, seed: modelSeed });
  say(
    `leader elector model: ${electorRuns} runs held (seed ${modelSeed}), ${elector.terms} leadership terms, ${elector.writes} writes, in ${seconds(performance.now() - electorStarted)}`,
  );
  const rolloutRuns = positive('rollout-runs', values['rollout-runs'], 20_000);
  const rolloutStarted = performance.now();
  const rollout = await checkRolloutModel({ numRuns: rolloutRuns, seed: modelSeed });
  say(
    `rollout governance model: ${rolloutRuns} runs held (seed ${modelSeed}), ${rollout.contentRollouts} content rollouts, ${rollout.queuedSeen} apps queued, ${rollout.restarts} restarts, in ${seconds(performance.now() - rolloutStarted)}`,
  );
}

/** The fault soak on the emulator; answers its report, whether it holds or not. */
async function runEmulatorSoak(values: Options, seed: number): Promise<SoakReport> {
  let report: SoakReport;
  const cluster = await startCluster('emulator', { emulator: { random: new SeededRandom(seed).next } });
  try {
    await installOperatorResources(cluster);
    report = await runFaultSoak(cluster, {
      apps: positive('apps', values.apps, 1000),
      streamMs: positive('stream', values.stream, 120) * 1000,
      opsPerSecond: positive('ops', values.ops, 40),
      kills: positive('kills', values.kills, 4),
      seed,
      quiescenceTimeoutMs: 300_000,
      log: (line) => say(`  · ${line}`),
    });
  } finally {
    await cluster.stop();
  }
  say(soakSummary(report));
  return report;
}

/** The churn on the emulator; answers its report, whether it holds or not. */
async function runChurnRounds(values: Options): Promise<ChurnReport> {
  let report: ChurnReport;
  const cluster = await startCluster('emulator');
  try {
    await installOperatorResources(cluster);
    report = await runChurn(cluster, {
      rounds: positive('churn-rounds', values['churn-rounds'], 10),
      count: positive('churn-count', values['churn-count'], 1000),
      log: (line) => say(`  · ${line}`),
    });
  } finally {
    await cluster.stop();
  }
  say(churnSummary(report));
  return report;
}

async function main(argv: readonly string[]): Promise<number> {
  const values = parseOptions(argv);
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.target !== undefined && !['emulator', 'cluster'].includes(values.target))
    throw new Error(`--target: "${values.target}" is not emulator or cluster`);
  if (values.only !== undefined && !['soak', 'churn', 'models'].includes(values.only))
    throw new Error(`--only: "${values.only}" is not soak, churn or models`);
  const seed = values.seed === undefined ? seedFromEnvironment() : seedFromEnvironment({ SOAK_SEED: values.seed });
  say(`seed ${seed} (repeat with SOAK_SEED=${seed})`);
  if (values.target === 'cluster') return runNodeSoaks(values, seed);
  let holds = true;
  const reports: { soak?: SoakReport; churn?: ChurnReport } = {};

  const part = (name: 'soak' | 'churn' | 'models'): boolean => values.only === undefined || values.only === name;
  if (part('models')) await runModels(values, seed);
  if (part('soak')) {
    reports.soak = await runEmulatorSoak(values, seed);
    holds &&= clean(reports.soak.invariants) && reports.soak.recoveries.crashes === 0 && reports.soak.driverErrors.length === 0;
  }
  if (part('churn')) {
    reports.churn = await runChurnRounds(values);
    holds &&= churnHolds(reports.churn);
  }
  if (values.json) writeFileSync(values.json, `${JSON.stringify(reports, null, 2)}\n`);
  say(holds ? 'every invariant holds' : 'SOME INVARIANTS ARE BROKEN (see above)');
  return holds ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
