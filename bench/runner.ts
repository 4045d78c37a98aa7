// The operator process under benchmark: the shared operator with one strategy's DependencySource, serving /stats.
//
// Usage: node --import tsx --expose-gc bench/runner.ts --strategy <name> --kubeconfig <path>
//          [--stats-bind-address 127.0.0.1:0] [--max-concurrent-reconciles 4] [--log-level warn] [--profile-dir DIR]
// Prints `{"msg":"stats listening","address":"host:port"}` on stdout, logs (pino JSON) on stderr; SIGTERM, or the end of
// stdin (the harness is gone), stops it.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { UNGOVERNED } from '../operator/governance/governance.js';
import { createOperator, type Operator } from '../operator/operator.js';
import type { RequestSample } from '../operator/kube/options.js';
import { createSource, isStrategyName, type BenchSource } from './strategies/index.js';
import { PerObjectSource } from './strategies/per-object.js';
import type { OperatorStats } from './operator-stats.js';
import { countRequest, type RequestCounts } from './stats.js';
import { PhaseProfiler } from './phase-profile.js';

interface RunnerArgs {
  readonly strategy: string;
  readonly kubeconfig: string;
  readonly statsAddress: string;
  readonly workers?: number;
  readonly logLevel: string;
  /** Profile the process from its start, cut at the harness's phase boundaries (`POST /profile`), into this directory. */
  readonly profileDir?: string;
}

function parseArgs(argv: readonly string[]): RunnerArgs {
  const values = new Map<string, string>();
  for (let index = 0; index < argv.length; index += 2) {
    const flag = argv[index]!;
    const value = argv[index + 1];
    if (!flag.startsWith('--') || value === undefined)
      throw new Error(`runner: expected --flag value pairs, got "${argv.slice(index).join(' ')}"`);
    values.set(flag.slice(2), value);
  }
  const strategy = values.get('strategy') ?? '';
  const kubeconfig = values.get('kubeconfig') ?? '';
  if (!isStrategyName(strategy)) throw new Error(`runner: --strategy "${strategy}" is not a TypeScript strategy`);
  if (!kubeconfig) throw new Error('runner: --kubeconfig is required');
  const workers = values.has('max-concurrent-reconciles') ? Number(values.get('max-concurrent-reconciles')) : undefined;
  return {
    strategy,
    kubeconfig,
    statsAddress: values.get('stats-bind-address') ?? '127.0.0.1:0',
    workers,
    logLevel: values.get('log-level') ?? 'warn',
    profileDir: values.get('profile-dir'),
  };
}

/** The operator's rest_client_requests_total, plus the requests a strategy made with its own client. */
async function requestCounts(operator: Operator, external: RequestCounts): Promise<RequestCounts> {
  const counts: RequestCounts = {};
  for (const { labels, value } of (await operator.metrics.restRequests.get()).values) {
    countRequest(counts, String(labels.verb), String(labels.resource), value);
  }
  for (const [verb, resources] of Object.entries(external)) {
    for (const [resource, count] of Object.entries(resources)) countRequest(counts, verb, resource, count);
  }
  return counts;
}

async function stats(operator: Operator, source: BenchSource | undefined, external: RequestCounts, gc: boolean): Promise<OperatorStats> {
  const reconciles = (await operator.metrics.reconcileTotal.get()).values.reduce((sum, { value }) => sum + value, 0);
  const requests = await requestCounts(operator, external);
  const cachedObjects: Record<string, number> = {
    'customapps.app.example.com': operator.apps.store.size,
    'deployments.apps': operator.deployments.store.size,
    services: operator.services.store.size,
    configmaps: source?.cachedObjects() ?? 0,
  };
  const reconcileSteps: Record<string, { count: number; seconds: number }> = {};
  for (const { metricName, labels, value } of (await operator.metrics.reconcileStepTime.get()).values) {
    const step = String(labels.step);
    const entry = (reconcileSteps[step] ??= { count: 0, seconds: 0 });
    if (metricName?.endsWith('_sum')) entry.seconds = value;
    else if (metricName?.endsWith('_count')) entry.count = value;
  }
  const collect = (globalThis as { gc?: () => void }).gc;
  if (gc && collect) collect();
  const memory = process.memoryUsage();
  return {
    ready: operator.reconciling,
    heapUsedBytes: memory.heapUsed,
    heapTotalBytes: memory.heapTotal,
    rssBytes: memory.rss,
    requests,
    openWatches: -1,
    reconciles,
    cachedObjects,
    reconcileSteps,
    gcForced: gc && Boolean(collect),
    notes: source instanceof PerObjectSource ? { deadInformers: source.deadInformers } : undefined,
  };
}

/**
 * `POST /profile?save=<label>` cuts the phase profile there (see {@link PhaseProfiler.cut}): 200 with the file written,
 * 404 when the runner profiles nothing, 400 for a bad label. Without `save` the samples since the last cut are dropped.
 */
function answerProfile(profiler: PhaseProfiler | undefined, url: URL, response: ServerResponse): void {
  if (!profiler) {
    response.writeHead(404).end('this runner was started without --profile-dir');
    return;
  }
  profiler.cut(url.searchParams.get('save') ?? undefined).then(
    (path) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: path ?? null })),
    (error: unknown) => response.writeHead(400).end(String(error)),
  );
}

async function serveStats(
  address: string,
  answer: (gc: boolean) => Promise<OperatorStats>,
  profiler: PhaseProfiler | undefined,
): Promise<Server> {
  const colon = address.lastIndexOf(':');
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://runner');
    if (url.pathname === '/profile' && request.method === 'POST') {
      answerProfile(profiler, url, response);
      return;
    }
    if (url.pathname !== '/stats') {
      response.writeHead(404).end();
      return;
    }
    answer(url.searchParams.get('gc') === '1').then(
      (body) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  // The harness polls now and then: keep its connection open between polls rather than race its reuse.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(address.slice(colon + 1)), address.slice(0, colon) || '127.0.0.1', resolve);
  });
  return server;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const profiler = args.profileDir === undefined ? undefined : new PhaseProfiler(args.profileDir);
  await profiler?.start();
  const logger = pino({ level: args.logLevel, base: { logger: 'bench-runner', strategy: args.strategy } }, pino.destination(2));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(args.kubeconfig);
  const external: RequestCounts = {};
  const onRequest = (sample: RequestSample): void =>
    countRequest(external, sample.verb, sample.subresource ? `${sample.resource}/${sample.subresource}` : sample.resource);
  let source: BenchSource | undefined;
  const operator = await createOperator({
    kubeConfig,
    logger,
    maxConcurrentReconciles: args.workers,
    // The API servers of the benchmark run no Deployment controller, so no rollout ever completes: with the rollout
    // budget on, every rollout past the tenth would wait forever, and the flap breaker would hold the repeated updates
    // of the same ConfigMaps. The benchmark measures the watches and the reconcile, so the governance is off (its cost
    // is measured on the real node: test/node/rollout-governance.test.ts).
    rollouts: UNGOVERNED,
    dependencies: (context) =>
      (source = createSource(args.strategy, {
        client: context.client,
        kubeConfig,
        onRequest,
        logger: context.logger,
        metrics: context.metrics,
      })),
  });
  const server = await serveStats(args.statsAddress, (gc) => stats(operator, source, external, gc), profiler);
  const { address, port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'stats listening', address: `${address}:${port}` })}\n`);

  const stop = async (signal: string): Promise<void> => {
    logger.info({ signal }, 'stopping');
    await operator.stop();
    await profiler?.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
  };
  await new Promise<void>((resolve, reject) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stop(signal).then(resolve, reject));
    // The harness holds our stdin open: its end means the harness is gone (even by SIGKILL), so no runner outlives it.
    process.stdin.once('end', () => stop('harness gone').then(resolve, reject));
    process.stdin.resume();
    // Only a failure ends the run on its own (operator.done also resolves once the workers run without leader election).
    operator.done.catch(reject);
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'runner failed', err: String((error as Error)?.stack ?? error) })}\n`);
    process.exit(1);
  },
);
