// Starts a real single-node cluster: envtest's etcd, kube-apiserver and kube-controller-manager (every controller),
// plus kube-scheduler and a node (containerd, runc, CNI bridge, kubelet, kube-proxy) in its own namespaces.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startEnvtest, type Envtest, type StaticToken } from '../harness.js';
import { pollReady, type PollOptions } from '../poll.js';
import type { NodeAddresses } from './addresses.js';
import { clusterAssets, type ClusterAssets } from './build.js';
import { kubeletClientCertificates } from './certs.js';
import { containerdConfig, cniConfig, kubeletConfig, NODE_STATE } from './node-config.js';
import { createNodeSandbox, type Daemon, type NodeSandbox } from './node-sandbox.js';
import { restartOnFailure, type RestartOptions } from './restart.js';
import { acquireSlot, SLOTS_DIR, type SlotLease } from './slot.js';

/** How often the node's start polls a component it waits for. */
const POLL_MS = 250;

/** The ConfigMap where the cluster records its demo image: `kube-public/customapp-demo-image`, key `image`. */
export const DEMO_IMAGE_CONFIGMAP = { namespace: 'kube-public', name: 'customapp-demo-image', key: 'image' } as const;

/** The components {@link NodeCluster.stopComponent} stops and starts again. */
export type NodeComponent = 'etcd' | 'kube-apiserver' | 'containerd';

/**
 * The API server's audit policy: nothing from kube-system's controllers (their volume would drown the rest), Lease
 * writes of other ServiceAccounts with their request and response (the holder and its renew time), and every other
 * request of a ServiceAccount at the Metadata level (who, which verb on what, when, with which answer), and the
 * kubelet's requests of ConfigMaps and Secrets.
 */
export const AUDIT_POLICY = JSON.stringify({
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [
    { level: 'None', userGroups: ['system:serviceaccounts:kube-system'] },
    {
      level: 'RequestResponse',
      userGroups: ['system:serviceaccounts'],
      verbs: ['create', 'update', 'patch'],
      resources: [{ group: 'coordination.k8s.io', resources: ['leases'] }],
    },
    { level: 'Metadata', userGroups: ['system:serviceaccounts'] },
    // The kubelet reads the ConfigMaps and Secrets of a pod's environment from its own watches when it starts a
    // container: when a pod runs older content than its template names, these show when the kubelet's watch was back.
    { level: 'Metadata', userGroups: ['system:nodes'], resources: [{ group: '', resources: ['configmaps', 'secrets'] }] },
    { level: 'None' },
  ],
});

/** A progress event of {@link startNodeCluster}: a step and its fields (durations in ms). */
export type ProgressLog = (event: string, fields?: Record<string, unknown>) => void;

/** Options of {@link startNodeCluster}. */
export interface NodeClusterOptions {
  /** Receives progress events (build lines, each phase with its duration). @default none */
  readonly log?: ProgressLog;
  /** The clock of the durations and timeouts. @default Date.now */
  readonly now?: () => number;
  /** How long the node may take to become Ready once its binaries and images are there. @default 180_000 */
  readonly startTimeoutMs?: number;
}

/** A running single-node cluster. */
export interface NodeCluster {
  /** The API server URL (on the host's end of the node link). */
  readonly server: string;
  /** The admin kubeconfig file and YAML (user `admin` in `system:masters`). */
  readonly kubeconfigPath: string;
  readonly kubeconfig: string;
  readonly adminToken: string;
  readonly caPem: string;
  /** The Kubernetes version, for example `v1.34.4`. */
  readonly version: string;
  readonly addresses: NodeAddresses;
  /** The images loaded into the node, by role. */
  readonly images: { readonly pause: string; readonly demo: string; readonly operator: string };
  /** Milliseconds per start phase (assets, slot, apiserver, containerd, images, node ready, …) and in total. */
  readonly timings: Readonly<Record<string, number>>;
  /** The host directory of the logs of every component. */
  readonly logDir: string;
  /** The envtest part: requests as admin, ServiceAccount kubeconfigs. */
  readonly envtest: Envtest;
  /** Runs a command in the node's network and mount namespaces (for example `iptables-save`). */
  nodeRun(command: string, args: readonly string[]): Promise<string>;
  /** Runs containerd's `ctr` in the node, in the CRI's `k8s.io` namespace. */
  ctr(args: readonly string[]): Promise<string>;
  /**
   * The API server's audit log (JSON lines, one per request at its end): the requests of every ServiceAccount outside
   * kube-system at the Metadata level, and their Lease writes with the request and response, so a test can tell who
   * held a Lease when each write landed ({@link AUDIT_POLICY}).
   */
  readonly auditLogPath: string;
  /**
   * Stops a component as an outage would: etcd or kube-apiserver (data and flags kept), or containerd (its shims and
   * so the pods' containers keep running, as on a node whose runtime restarts). Its exit is not a failure.
   */
  stopComponent(name: NodeComponent): Promise<void>;
  /** Starts a component stopped by {@link NodeCluster.stopComponent} as it was, and waits until it answers. */
  startComponent(name: NodeComponent): Promise<void>;
  /** Why a component stopped, if one did. */
  failure(): string | undefined;
  /** Removes everything: pods, containers, the node's namespaces, interfaces, mounts, cgroups, processes, files. */
  stop(): Promise<void>;
}

/** The component identities: each a bearer token in the API server's token file, as bootstrap RBAC expects them. */
function componentTokens(nodeName: string): { kubelet: StaticToken; proxy: StaticToken; scheduler: StaticToken } {
  const token = () => randomBytes(24).toString('hex');
  return {
    kubelet: { token: token(), user: `system:node:${nodeName}`, groups: ['system:nodes'] },
    proxy: { token: token(), user: 'system:kube-proxy' },
    scheduler: { token: token(), user: 'system:kube-scheduler' },
  };
}

/** The start's phases: each one's milliseconds since the previous, logged as it ends. */
function startPhases(
  now: () => number,
  log: (event: string, fields: Record<string, unknown>) => void,
): { timings: Record<string, number>; phase: (name: string, fields?: Record<string, unknown>) => void } {
  const timings: Record<string, number> = {};
  let phaseStart = now();
  const phase = (name: string, fields: Record<string, unknown> = {}): void => {
    timings[name] = now() - phaseStart;
    phaseStart = now();
    log(name, { ms: timings[name], ...fields });
  };
  return { timings, phase };
}

/**
 * Stops the node's daemons and pods first, while the node's network exists (their connections close), then the API
 * server (it waits for open streams to end), then the namespaces, cgroups and files; every step runs even when one fails.
 */
async function stopNodeCluster(slot: SlotLease, envtest: Envtest | undefined): Promise<void> {
  const errors: unknown[] = [];
  await slot.stopWorkloads().catch((error) => errors.push(error));
  await envtest?.stop().catch((error) => errors.push(error));
  await slot.release().catch((error) => errors.push(error));
  if (errors.length > 0) throw new AggregateError(errors, `stopping the node cluster in slot ${slot.addresses.slot} failed`);
}

/** The node's container runtime: its CNI and containerd configuration written, containerd's start, and `ctr`. */
function containerRuntime(
  sandbox: NodeSandbox,
  hostDir: string,
  assets: ClusterAssets,
  daemons: Daemon[],
  { now, failure }: { now: () => number; failure: () => string | undefined },
): { startContainerd: () => Promise<void>; ctr: (args: readonly string[]) => Promise<string> } {
  const cniDir = join(hostDir, 'cni');
  mkdirSync(cniDir, { recursive: true });
  writeFileSync(join(cniDir, '10-customapp.conflist'), cniConfig(sandbox.addresses));
  writeFileSync(join(hostDir, 'containerd.toml'), containerdConfig({ pauseImage: assets.images.pause.name, cniConfDir: cniDir }));
  const ctr = (args: readonly string[]): Promise<string> =>
    sandbox.run('ctr', ['--address', NODE_STATE.containerdSocket, '--namespace', 'k8s.io', ...args], 300_000);
  const startContainerd = async (): Promise<void> => {
    daemons.push(sandbox.spawnDaemon('containerd', 'containerd', ['--config', join(hostDir, 'containerd.toml')]));
    const answers = async (): Promise<boolean> => {
      await ctr(['version']);
      return true;
    };
    await pollReady('containerd', 30_000, answers, failure, { intervalMs: POLL_MS, now });
  };
  return { startContainerd, ctr };
}

/** Starts envtest's control plane for the node: bound to the host's end of the node link, with the node's identities. */
async function startNodeApiserver(
  hostDir: string,
  auditLogPath: string,
  addresses: NodeAddresses,
  tokens: ReturnType<typeof componentTokens>,
  certs: { certFile: string; keyFile: string },
): Promise<Envtest> {
  const auditPolicyPath = join(hostDir, 'audit-policy.json');
  writeFileSync(auditPolicyPath, AUDIT_POLICY);
  return startEnvtest({
    controllerManager: 'all',
    bindAddress: addresses.hostIp,
    serviceClusterIpRange: addresses.serviceCidr,
    tokens: [tokens.kubelet, tokens.proxy, tokens.scheduler],
    tmpDir: hostDir, // inside the slot: a SIGKILLed run's etcd data goes with the slot's teardown
    logDir: dirname(auditLogPath),
    apiserverFlags: nodeApiserverFlags(certs, auditPolicyPath, auditLogPath),
  });
}

/** Starts containerd and imports every image into it; answers the import's milliseconds. */
async function startAndImport(
  startContainerd: () => Promise<void>,
  ctr: (args: readonly string[]) => Promise<string>,
  assets: ClusterAssets,
  now: () => number,
): Promise<number> {
  await startContainerd();
  const importStart = now();
  for (const image of Object.values(assets.images)) await ctr(['images', 'import', image.archive]);
  return now() - importStart;
}

/** Writes `<name>.kubeconfig` in `hostDir` for a component's token; answers its path. */
function writeKubeconfig(hostDir: string, env: Envtest, name: string, token: StaticToken): string {
  const path = join(hostDir, `${name}.kubeconfig`);
  writeFileSync(path, env.tokenKubeconfig(token.user, token.token));
  return path;
}

/** {@link NodeCluster.stopComponent} and {@link NodeCluster.startComponent}: containerd here, the control plane envtest's. */
function componentControl(
  env: Envtest,
  daemons: Daemon[],
  startContainerd: () => Promise<void>,
): Pick<NodeCluster, 'stopComponent' | 'startComponent'> {
  return {
    async stopComponent(name) {
      if (name !== 'containerd') return env.stopComponent(name);
      await stopContainerd(daemons);
    },
    async startComponent(name) {
      if (name !== 'containerd') return env.startComponent(name);
      if (daemons.some((daemon) => daemon.name === 'containerd')) throw new Error('containerd is running: stop it first');
      await startContainerd();
    },
  };
}

/** How {@link NodeCluster} reaches its API server as admin: envtest's. */
function adminAccess(env: Envtest): Pick<NodeCluster, 'server' | 'kubeconfigPath' | 'kubeconfig' | 'adminToken' | 'caPem' | 'version'> {
  const { server, kubeconfigPath, kubeconfig, adminToken, caPem, version } = env;
  return { server, kubeconfigPath, kubeconfig, adminToken, caPem, version };
}

/** kube-apiserver's flags on the node: Node authorization, the kubelet's client certificate, a blocking audit log. */
function nodeApiserverFlags(
  certs: { certFile: string; keyFile: string },
  auditPolicyPath: string,
  auditLogPath: string,
): Record<string, string> {
  return {
    'authorization-mode': 'Node,RBAC',
    'enable-admission-plugins': 'NodeRestriction,OwnerReferencesPermissionEnforcement',
    'disable-admission-plugins': '', // the ServiceAccount admission plugin mounts the pods' API tokens
    'kubelet-client-certificate': certs.certFile,
    'kubelet-client-key': certs.keyFile,
    'kubelet-preferred-address-types': 'InternalIP',
    'audit-policy-file': auditPolicyPath,
    'audit-log-path': auditLogPath,
    'audit-log-format': 'json',
    'audit-log-mode': 'blocking',
  };
}

/** kube-scheduler's arguments: one kubeconfig, its own identity's, for the API and for its delegated authentication. */
function schedulerArgs(kubeconfig: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    '--v=1',
  ];
}

/** The kubelet's arguments (its configuration file is kubelet.json in `hostDir`). */
function kubeletArgs(hostDir: string, addresses: NodeAddresses, kubeconfig: string): string[] {
  return [
    `--config=${join(hostDir, 'kubelet.json')}`,
    `--kubeconfig=${kubeconfig}`,
    `--hostname-override=${addresses.nodeName}`,
    `--node-ip=${addresses.nodeIp}`,
    `--root-dir=${NODE_STATE.kubeletRoot}`,
    `--cert-dir=${NODE_STATE.kubeletRoot}/pki`,
    '--v=1',
  ];
}

function kubeProxyArgs(addresses: NodeAddresses, kubeconfig: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--hostname-override=${addresses.nodeName}`,
    `--cluster-cidr=${addresses.podCidr}`,
    '--proxy-mode=iptables',
    '--metrics-bind-address=127.0.0.1:10249',
    '--healthz-bind-address=127.0.0.1:10256',
    // Leave the host-wide conntrack sysctls alone.
    '--conntrack-max-per-core=0',
    '--conntrack-min=0',
    '--conntrack-tcp-timeout-established=0',
    '--conntrack-tcp-timeout-close-wait=0',
    '--v=1',
  ];
}

/**
 * Starts the kubelet and kube-proxy. The kubelet is started again once should it fail of itself, as its unit's restart
 * policy would on a real node ({@link restartOnFailure}).
 */
function nodeAgents(
  spawn: (name: string, args: string[]) => Daemon,
  hostDir: string,
  addresses: NodeAddresses,
  kubeconfigFor: (name: string, token: StaticToken) => string,
  tokens: ReturnType<typeof componentTokens>,
  restart: Omit<RestartOptions, 'restarts'>,
): Daemon[] {
  const kubeletKubeconfig = kubeconfigFor('kubelet', tokens.kubelet);
  return [
    restartOnFailure(() => spawn('kubelet', kubeletArgs(hostDir, addresses, kubeletKubeconfig)), { restarts: 1, ...restart }),
    spawn('kube-proxy', kubeProxyArgs(addresses, kubeconfigFor('kube-proxy', tokens.proxy))),
  ];
}

/** Whether the node reports Ready. */
async function nodeReady(env: Envtest, nodeName: string): Promise<boolean> {
  const node = await env.request('GET', `/api/v1/nodes/${nodeName}`);
  return node.status === 200 && node.body.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
}

/** Whether kube-controller-manager has made the `default` ServiceAccount and published `kube-root-ca.crt`. */
async function defaultAccountReady(env: Envtest): Promise<boolean> {
  const account = await env.request('GET', '/api/v1/namespaces/default/serviceaccounts/default');
  const rootCa = await env.request('GET', '/api/v1/namespaces/default/configmaps/kube-root-ca.crt');
  return account.status === 200 && rootCa.status === 200;
}

/**
 * Waits until the node reports Ready (the `nodeReady` phase), then until kube-controller-manager has made the
 * `default` ServiceAccount and published `kube-root-ca.crt`: each wait ends at once when a component has stopped.
 */
async function awaitNodeReady(
  env: Envtest,
  nodeName: string,
  timeoutMs: number,
  failure: () => string | undefined,
  polling: PollOptions,
  phase: (name: string) => void,
): Promise<void> {
  await pollReady(`node ${nodeName} Ready`, timeoutMs, () => nodeReady(env, nodeName), failure, polling);
  phase('nodeReady');
  await pollReady('the default ServiceAccount and kube-root-ca.crt', timeoutMs, () => defaultAccountReady(env), failure, polling);
}

/** Records the demo image's name in {@link DEMO_IMAGE_CONFIGMAP}. */
async function recordDemoImage(env: Envtest, image: string): Promise<void> {
  const recorded = await env.request('POST', `/api/v1/namespaces/${DEMO_IMAGE_CONFIGMAP.namespace}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: DEMO_IMAGE_CONFIGMAP.name, namespace: DEMO_IMAGE_CONFIGMAP.namespace },
    data: { [DEMO_IMAGE_CONFIGMAP.key]: image },
  });
  if (recorded.status !== 201) throw new Error(`recording the demo image: ${recorded.status} ${JSON.stringify(recorded.body)}`);
}

/** Stops containerd (SIGTERM) and takes it out of `daemons`, as an outage would; its images and containers stay. */
async function stopContainerd(daemons: Daemon[]): Promise<void> {
  const index = daemons.findIndex((daemon) => daemon.name === 'containerd');
  if (index < 0) throw new Error('containerd is not running');
  const [daemon] = daemons.splice(index, 1);
  if (daemon!.exitReason()) return;
  const exited = new Promise<void>((done) => daemon!.process.once('exit', () => done()));
  daemon!.process.kill('SIGTERM');
  await exited;
}

/**
 * Starts the cluster: builds or finds its binaries and images, takes a free node slot (clearing what a killed
 * predecessor left there), starts the node's namespaces, envtest's control plane bound to the host's end of the node
 * link, containerd with the images imported, kube-scheduler, the kubelet (started again once should it fail, as its
 * unit's restart policy would on a real node) and kube-proxy, then waits until the node is
 * Ready, the `default` ServiceAccount and `kube-root-ca.crt` exist, and records the demo image in
 * {@link DEMO_IMAGE_CONFIGMAP}. Needs root. On any failure it removes what it made and rethrows.
 */
export async function startNodeCluster(options: NodeClusterOptions = {}): Promise<NodeCluster> {
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});
  const started = now();
  const { timings, phase } = startPhases(now, log);

  if (process.getuid?.() !== 0) {
    throw new Error('npm run cluster needs root: it creates network namespaces, cgroups, a veth pair and mounts (uid is not 0)');
  }
  const assets: ClusterAssets = await clusterAssets((line) => log('build', { line }));
  phase('assets', { binDir: assets.binDir });

  const slot: SlotLease = await acquireSlot(now);
  const { addresses } = slot;
  phase('slot', { slot: addresses.slot, hostInterface: addresses.hostInterface });

  let envtest: Envtest | undefined;
  const daemons: Daemon[] = [];
  const failure = (): string | undefined =>
    (slot.alive() ? undefined : 'the slot reaper exited') ?? daemons.map((daemon) => daemon.exitReason()).find(Boolean);
  let stopping = false;
  const stop = (): Promise<void> => {
    stopping = true;
    return stopNodeCluster(slot, envtest);
  };

  try {
    const hostDir = join(SLOTS_DIR, String(addresses.slot));
    const logDir = join(hostDir, 'logs');
    mkdirSync(logDir, { recursive: true });
    const certs = await kubeletClientCertificates(hostDir);
    const sandbox: NodeSandbox = await createNodeSandbox({ addresses, logDir });
    phase('namespaces', { holderPid: sandbox.holderPid, nodeIp: addresses.nodeIp, hostIp: addresses.hostIp });

    const { startContainerd, ctr } = containerRuntime(sandbox, hostDir, assets, daemons, { now, failure });

    // The node's runtime and the control plane start side by side.
    const runtimeReady = startAndImport(startContainerd, ctr, assets, now);

    const tokens = componentTokens(addresses.nodeName);
    const auditLogPath = join(logDir, 'audit.log');
    envtest = await startNodeApiserver(hostDir, auditLogPath, addresses, tokens, certs);
    const env = envtest;
    phase('apiserver', { server: env.server, version: env.version });
    const kubeconfigFor = (name: string, token: StaticToken): string => writeKubeconfig(hostDir, env, name, token);
    const spawn = (name: string, args: string[]): Daemon => sandbox.spawnDaemon(name, join(assets.binDir, name), args);
    daemons.push(spawn('kube-scheduler', schedulerArgs(kubeconfigFor('kube-scheduler', tokens.scheduler))));

    const importMs = await runtimeReady;
    phase('containerd', { importMs, images: Object.values(assets.images).map((image) => image.name) });

    writeFileSync(join(hostDir, 'kubelet.json'), kubeletConfig({ addresses, cgroupRoot: sandbox.cgroupRoot, clientCaFile: certs.caFile }));
    daemons.push(...nodeAgents(spawn, hostDir, addresses, kubeconfigFor, tokens, { log, stopping: () => stopping }));

    await awaitNodeReady(env, addresses.nodeName, options.startTimeoutMs ?? 180_000, failure, { intervalMs: POLL_MS, now }, phase);
    await recordDemoImage(env, assets.images.demo.name);
    phase('accounts');
    timings.total = now() - started;

    return {
      ...adminAccess(env),
      addresses,
      images: { pause: assets.images.pause.name, demo: assets.images.demo.name, operator: assets.images.operator.name },
      timings,
      logDir,
      envtest: env,
      nodeRun: (command, args) => sandbox.run(command, args),
      ctr,
      auditLogPath,
      ...componentControl(env, daemons, startContainerd),
      failure,
      stop,
    };
  } catch (error) {
    await stop().catch((stopError) => log('stopFailed', { error: String(stopError) }));
    throw error;
  }
}
