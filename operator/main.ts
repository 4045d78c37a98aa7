// `npm start`: flags, the cluster (or the embedded emulator), then the operator until SIGTERM or SIGINT. Wiring only.
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { createOperator, type Operator, type OperatorOptions } from './operator.js';
import type { EmbeddedCluster } from './embedded.js';
import { ENDPOINT_FLAGS, parseFlags, usage, type Flags } from './flags.js';
import { AddressInUseError, formatBindAddress } from './http/listen.js';
import { resolveKubeConfig } from './kubeconfig.js';
import { createLogger, drainLogs, flushLogs, type Logger } from './log.js';

/** How long a stop may take after SIGTERM before the process exits anyway (the pod's grace period is 30 s). */
const SHUTDOWN_DEADLINE_MS = 25_000;

async function main(argv: readonly string[]): Promise<number> {
  let flags: Flags;
  try {
    flags = parseFlags(argv);
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    return 2;
  }
  if (flags.help) {
    process.stdout.write(usage());
    return 0;
  }
  const logger = createLogger({ level: flags.logLevel, format: flags.logFormat });
  // Log writes are asynchronous: whatever is still buffered is written out however the process exits.
  process.on('exit', () => flushLogs(logger));

  let embedded: EmbeddedCluster | undefined;
  let resolved: ReturnType<typeof resolveKubeConfig>;
  try {
    resolved = resolveKubeConfig({ flag: flags.kubeconfig });
  } catch (error) {
    logger.error({ err: error }, 'no usable kubeconfig');
    return 1;
  }
  if (resolved) {
    logger.info({ source: resolved.source, path: resolved.path, server: resolved.kubeConfig.getCurrentCluster()?.server }, 'kubeconfig');
  } else {
    // Loaded only here: in a cluster (the image) a kubeconfig is always found, and the start need not load what the
    // embedded default alone uses (its YAML parser, the manifests' applier).
    const { startEmbeddedCluster } = await import('./embedded.js');
    embedded = await startEmbeddedCluster({ logger });
  }

  // In the embedded default, a busy default port is no reason to fail: a free one is taken (and printed below).
  const orFreePort = (flag: string): boolean => embedded !== undefined && !flags.explicit.has(flag);
  let operator: Operator;
  try {
    operator = await createOperator(operatorOptions(flags, resolved?.kubeConfig ?? embedded!.operatorKubeConfig, logger, orFreePort));
  } catch (error) {
    await embedded?.stop();
    const busy = error instanceof Error && error.cause instanceof AddressInUseError ? error.cause : undefined;
    if (!busy) throw error;
    const flag = ENDPOINT_FLAGS[busy.endpoint as keyof typeof ENDPOINT_FLAGS];
    const address = formatBindAddress(busy.address);
    process.stderr.write(
      `error: --${flag}: "${address}" is already in use by another process; pass a free address (for example --${flag}=127.0.0.1:0 for any free port) or "0" to disable it\n`,
    );
    return 1;
  }
  if (embedded) {
    const { embeddedInstructions } = await import('./embedded.js');
    process.stdout.write(
      embeddedInstructions(embedded, {
        metricsUrl: operator.metricsUrl,
        healthUrl: operator.healthUrl,
        requested: { metrics: flags.metricsBindAddress?.port, probes: flags.healthProbeBindAddress?.port },
      }),
    );
  }

  const signalled = shutdownSignal(logger);

  let code = 0;
  try {
    await Promise.race([operator.done, signalled]);
  } catch (error) {
    logger.error({ err: error }, 'operator stopped on its own');
    code = 1;
  }
  await operator.stop();
  await embedded?.stop();
  logger.info({ code }, 'exit');
  await drainLogs(logger);
  return code;
}

/** The operator's options from the command line; `orFreePort(flag)` says whether a busy default port may be replaced. */
function operatorOptions(flags: Flags, kubeConfig: KubeConfig, logger: Logger, orFreePort: (flag: string) => boolean): OperatorOptions {
  const lease = { leaseDurationMs: flags.leaseDurationMs, renewDeadlineMs: flags.renewDeadlineMs, retryPeriodMs: flags.retryPeriodMs };
  return {
    kubeConfig,
    protobuf: flags.kubeApiContentType === 'application/vnd.kubernetes.protobuf',
    namespaces: flags.namespaces,
    logger,
    maxConcurrentReconciles: flags.maxConcurrentReconciles,
    rollouts: {
      maxConcurrentRollouts: flags.maxConcurrentRollouts,
      flapThreshold: flags.flapThreshold,
      flapWindowMs: flags.flapWindowMs,
    },
    workloads: flags.workloads,
    metricsBindAddress: flags.metricsBindAddress && { ...flags.metricsBindAddress, orFreePort: orFreePort(ENDPOINT_FLAGS.metrics) },
    metricsSecure: flags.metricsSecure,
    metricsCertDir: flags.metricsCertDir,
    healthProbeBindAddress: flags.healthProbeBindAddress && {
      ...flags.healthProbeBindAddress,
      orFreePort: orFreePort(ENDPOINT_FLAGS.probes),
    },
    processMetrics: true,
    leaderElection:
      flags.leaderElect && !flags.sharding
        ? { namespace: flags.leaderElectionNamespace, name: flags.leaderElectionId, ...lease }
        : undefined,
    sharding: flags.sharding
      ? { namespace: flags.leaderElectionNamespace, identity: flags.shardIdentity ?? process.env.POD_NAME ?? hostname(), ...lease }
      : undefined,
  };
}

/**
 * The first SIGTERM or SIGINT. After it, a second signal, or a stop that takes longer than
 * {@link SHUTDOWN_DEADLINE_MS}, exits at once (as controller-runtime does).
 */
function shutdownSignal(logger: Logger): Promise<NodeJS.Signals> {
  return new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      logger.info({ signal }, 'signal: shutting down');
      process.once('SIGTERM', () => process.exit(1));
      process.once('SIGINT', () => process.exit(1));
      setTimeout(() => {
        logger.error({ deadlineMs: SHUTDOWN_DEADLINE_MS }, 'shutdown deadline exceeded');
        process.exit(1);
      }, SHUTDOWN_DEADLINE_MS).unref();
      resolve(signal);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
