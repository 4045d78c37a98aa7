// `npm run cluster -- --kubeconfig-out FILE`: a real single-node cluster in the foreground until SIGTERM or Ctrl-C.
import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { clusterAssets } from './build.js';
import { DEMO_IMAGE_CONFIGMAP, startNodeCluster } from './harness.js';

/** Where `--build-only` writes the scripts' full output. */
const BUILD_LOG_DIR = process.env.CUSTOMAPP_CLUSTER_CACHE ?? join(homedir(), '.cache/customapp-operator/cluster');

const USAGE = `Usage: npm run cluster -- [--kubeconfig-out FILE] [--build-only]

Starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a node (containerd, runc, CNI bridge,
kubelet, kube-proxy) on this machine, builds and loads the pause, demo and operator images, prints the kubeconfig
path and the demo image, and runs until SIGTERM or Ctrl-C; then removes everything it made. Needs root.

  --kubeconfig-out FILE   also write the admin kubeconfig to FILE (removed again at exit)
  --build-only            install the Debian packages and build the binaries and images, then exit (npm test's
                          pretest runs this unless KUBE_TARGET leaves out "cluster")
  --help                  this text
`;

interface Args {
  readonly kubeconfigOut?: string;
  readonly buildOnly: boolean;
  readonly help: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  let kubeconfigOut: string | undefined;
  let buildOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return { help: true, buildOnly: false };
    if (arg === '--build-only') {
      buildOnly = true;
      continue;
    }
    if (arg === '--kubeconfig-out') {
      const value = argv[++i];
      if (!value) throw new Error('--kubeconfig-out needs a file name');
      kubeconfigOut = resolve(value);
    } else if (arg.startsWith('--kubeconfig-out=')) {
      kubeconfigOut = resolve(arg.slice('--kubeconfig-out='.length));
    } else {
      throw new Error(`unknown argument "${arg}"`);
    }
  }
  return { kubeconfigOut, buildOnly, help: false };
}

/** Whether KUBE_TARGET (the tests' target selection: emulator, envtest, cluster) leaves the node out. */
function nodeDeselected(env: NodeJS.ProcessEnv): boolean {
  const raw = env.KUBE_TARGET?.trim();
  return Boolean(raw) && !raw!.split(',').some((target) => target.trim() === 'cluster');
}

/**
 * The scripts' own summary lines (`envtest: …`, `cluster-build: …`): what `npm test` shows of a build. Everything
 * else (apt-get, go, buildah) goes only to the log file, which a failure names.
 */
const SUMMARY_LINE = /^(envtest|cluster-deps|cluster-build|cluster-images): /;

/** The build alone, for `npm test`'s pretest: a few plain progress lines on `out`, the full output in a log file. */
async function buildOnly(out: NodeJS.WritableStream): Promise<number> {
  mkdirSync(BUILD_LOG_DIR, { recursive: true });
  const logFile = join(BUILD_LOG_DIR, 'build.log');
  const log = createWriteStream(logFile);
  const started = Date.now();
  let announced = false;
  const progress = (line: string): void => {
    log.write(`${line}\n`);
    if (!SUMMARY_LINE.test(line)) return;
    if (!announced) out.write(`building what the real node needs (the first run takes minutes; full output: ${logFile})\n`);
    announced = true;
    out.write(`  ${line}\n`);
  };
  try {
    const assets = await clusterAssets(progress);
    log.write(`${JSON.stringify({ event: 'built', ms: Date.now() - started, binDir: assets.binDir, images: assets.images })}\n`);
    if (announced) out.write(`built in ${Math.round((Date.now() - started) / 1000)} s\n`);
    return 0;
  } catch (error) {
    log.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    out.write(`the real node's build failed (the tests on it will fail and say so); full output: ${logFile}\n`);
    return 1;
  } finally {
    await new Promise((done) => log.end(done));
  }
}

async function main(argv: readonly string[]): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const logger = pino({ base: { component: 'cluster' } }, pino.destination(2));
  if (args.buildOnly) {
    if (nodeDeselected(process.env)) {
      logger.info({ event: 'buildSkipped', kubeTarget: process.env.KUBE_TARGET }, 'KUBE_TARGET leaves out the node');
      return 0;
    }
    return buildOnly(process.stderr);
  }
  let stopRequested: (signal: string) => void = () => {};
  const stopSignal = new Promise<string>((done) => (stopRequested = done));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stopRequested(signal));

  const cluster = await startNodeCluster({ log: (event, fields) => logger.info({ event, ...fields }) });
  let kubeconfigPath = cluster.kubeconfigPath;
  if (args.kubeconfigOut) {
    writeFileSync(args.kubeconfigOut, cluster.kubeconfig, { mode: 0o600 });
    kubeconfigPath = args.kubeconfigOut;
  }
  logger.info({ event: 'ready', ms: cluster.timings.total, server: cluster.server, timings: cluster.timings }, 'cluster ready');
  process.stdout.write(
    [
      `kubeconfig: ${kubeconfigPath}`,
      `demo image: ${cluster.images.demo}`,
      `operator image: ${cluster.images.operator} (loaded into the node: kubectl apply -f dist/ runs it)`,
      `node: ${cluster.addresses.nodeName} ${cluster.addresses.nodeIp} (slot ${cluster.addresses.slot}, host interface ${cluster.addresses.hostInterface}); pods ${cluster.addresses.podCidr}; services ${cluster.addresses.serviceCidr}`,
      `logs: ${cluster.logDir}`,
      `the demo image is also in ConfigMap ${DEMO_IMAGE_CONFIGMAP.namespace}/${DEMO_IMAGE_CONFIGMAP.name} (data.${DEMO_IMAGE_CONFIGMAP.key})`,
      'Ctrl-C or SIGTERM stops the cluster and removes everything it made.',
      '',
    ].join('\n'),
  );

  // Runs until a signal, or until a component dies.
  let watchTimer: NodeJS.Timeout | undefined;
  const componentDied = new Promise<string>((done) => {
    watchTimer = setInterval(() => {
      const failure = cluster.failure();
      if (failure) done(failure);
    }, 1000);
  });
  const reason = await Promise.race([stopSignal.then((signal) => `signal ${signal}`), componentDied]);
  clearInterval(watchTimer);
  const failed = !reason.startsWith('signal');
  logger.info({ event: 'stopping', reason }, failed ? 'a component stopped' : 'stopping');
  const stopStart = Date.now();
  try {
    await cluster.stop();
  } finally {
    if (args.kubeconfigOut) rmSync(args.kubeconfigOut, { force: true });
  }
  logger.info({ event: 'stopped', ms: Date.now() - stopStart }, 'everything removed');
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`cluster: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    if (error instanceof AggregateError) for (const inner of error.errors) process.stderr.write(`  ${String(inner)}\n`);
    process.exit(1);
  },
);
