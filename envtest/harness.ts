// Starts a real etcd and kube-apiserver (and optionally kube-controller-manager) on loopback for tests.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, createWriteStream, type WriteStream } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { pollReady, type PollOptions } from './poll.js';
import { freePort, startOnFreePorts } from './ports.js';

const execFileAsync = promisify(execFile);
const BUILD_SCRIPT = resolve(import.meta.dirname, 'build.sh');
/** How the start polls kube-apiserver and what it serves until they answer. */
const POLL: PollOptions = { intervalMs: 100 };

/** A bearer token that kube-apiserver accepts (a line of its --token-auth-file). */
export interface StaticToken {
  readonly token: string;
  readonly user: string;
  /** @default the user name */
  readonly uid?: string;
  readonly groups?: readonly string[];
}

/** Options of {@link startEnvtest}. */
export interface EnvtestOptions {
  /**
   * Also run kube-controller-manager. `true` (or `'gc'`) runs the garbage-collector and namespace controllers only,
   * so that ownerReference garbage collection and namespace deletion happen as in a real cluster (a bare
   * kube-apiserver does neither). `'all'` runs every default controller (Deployments, ReplicaSets, ServiceAccounts
   * and their tokens, nodes, endpoints, …) as the `system:kube-controller-manager` user with one ServiceAccount per
   * controller, publishes the serving CA as `kube-root-ca.crt` in every namespace, and signs legacy tokens with the
   * service-account key: what a cluster with a kubelet needs.
   * @default false
   */
  readonly controllerManager?: boolean | 'gc' | 'all';
  /**
   * Extra kube-apiserver flags, for example `--min-request-timeout=30` to make watches end sooner.
   * @default []
   */
  readonly apiserverArgs?: readonly string[];
  /**
   * kube-apiserver flags that replace the harness's value for the same flag (or add one), by name without dashes:
   * for example `{ 'authorization-mode': 'Node,RBAC', 'disable-admission-plugins': '' }`.
   * @default {}
   */
  readonly apiserverFlags?: Readonly<Record<string, string>>;
  /**
   * Extra etcd flags, for example `--quota-backend-bytes=8589934592` for more than etcd's default 2 GiB of data.
   * @default []
   */
  readonly etcdArgs?: readonly string[];
  /**
   * The address kube-apiserver binds and advertises (the `kubernetes` Service's endpoint), and the server URL's host.
   * It must be an address of this machine; a node cannot use loopback.
   * @default '127.0.0.1'
   */
  readonly bindAddress?: string;
  /**
   * The Service ClusterIP range.
   * @default '10.0.0.0/16' (room for the 10k-CustomApp benchmark's Services; the emulator serves the same range)
   */
  readonly serviceClusterIpRange?: string;
  /**
   * More identities besides `admin`, for example a kubelet's (`system:node:<name>` in `system:nodes`).
   * @default []
   */
  readonly tokens?: readonly StaticToken[];
  /**
   * Where the temporary directory (data, certificates, default logs) is made.
   * @default os.tmpdir()
   */
  readonly tmpDir?: string;
  /**
   * Where the process logs go: a directory (kept) or undefined (inside the temp dir, removed by stop()).
   * @default undefined
   */
  readonly logDir?: string;
  /**
   * How long to wait for the API server to become ready.
   * @default 60_000
   */
  readonly startTimeoutMs?: number;
}

/** A running envtest: a real API server with an admin identity. */
export interface Envtest {
  /** The API server URL, `https://<bindAddress>:<port>` (127.0.0.1 by default). */
  readonly server: string;
  /** The admin bearer token (user `admin`, group `system:masters`). */
  readonly adminToken: string;
  /** The CA that signed the serving certificate (PEM). */
  readonly caPem: string;
  /** The path of the admin kubeconfig (usable by kubectl and @kubernetes/client-node). */
  readonly kubeconfigPath: string;
  /** The admin kubeconfig YAML. */
  readonly kubeconfig: string;
  /** The kube-apiserver version, for example `v1.34.4`. */
  readonly version: string;
  /** Milliseconds from the call to a ready API server. */
  readonly startMs: number;
  /** Whether kube-controller-manager (garbage collection, namespace deletion) is running. */
  readonly controllerManager: boolean;
  /** The temporary directory holding data, certificates and (by default) logs. */
  readonly dir: string;
  /** A kubeconfig for a bearer token (one of {@link EnvtestOptions.tokens}): YAML. */
  tokenKubeconfig(user: string, token: string): string;
  /**
   * A kubeconfig for a ServiceAccount, with a token from the TokenRequest API (the ServiceAccount is created when
   * missing). Returns the YAML and the path of a file holding it.
   */
  serviceAccountKubeconfig(namespace: string, name: string, expirationSeconds?: number): Promise<{ kubeconfig: string; path: string }>;
  /** Sends one request as admin and returns the status and parsed body (tests, setup). */
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; body: any }>;
  /**
   * Stops one control-plane process (SIGTERM, then SIGKILL after 10 s), as an outage would: its data and flags stay,
   * and {@link Envtest.startComponent} starts it again. Its exit is not a failure.
   */
  stopComponent(name: ControlPlaneComponent): Promise<void>;
  /** Starts a component stopped by {@link Envtest.stopComponent} with the same flags, and waits until kube-apiserver is ready. */
  startComponent(name: ControlPlaneComponent): Promise<void>;
  /** Kills every process and removes the temporary directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** The processes {@link Envtest.stopComponent} can stop and start again. */
export type ControlPlaneComponent = 'etcd' | 'kube-apiserver';

/** Finds the envtest binaries: `KUBEBUILDER_ASSETS` as is, else the cache that envtest/build.sh fills (building it once). */
export async function envtestAssets(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [BUILD_SCRIPT], { env, maxBuffer: 16 << 20 });
    const lines = stdout.trim().split('\n');
    return lines[lines.length - 1]!;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`envtest binaries are unavailable: ${stderr.trim() || String(error)}`, { cause: error });
  }
}

/**
 * Runs a binary under a bash watchdog that kills it when this Node process disappears (even by SIGKILL), so a
 * crashed or killed test never leaves an orphan etcd or kube-apiserver behind.
 */
function spawnWatched(binary: string, args: readonly string[], log: WriteStream): ChildProcess {
  const script = [
    '"$@" & child=$!',
    "trap 'kill -TERM $child 2>/dev/null; wait $child; exit 0' TERM INT",
    `while kill -0 ${process.pid} 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 0.5; done`,
    'kill -TERM $child 2>/dev/null; sleep 2; kill -KILL $child 2>/dev/null; wait $child',
  ].join('\n');
  // Its own process group: a Ctrl-C in the terminal reaches the Node process, which stops the binaries in order.
  const child = spawn('bash', ['-c', script, 'watchdog', binary, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  return child;
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  // The whole process group (the watchdog and its binary): a SIGKILL of the watchdog alone would orphan a binary
  // still busy with its shutdown.
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }, 10_000);
  await exited;
  clearTimeout(timer);
}

const CONTROLLER_MANAGER_USER = 'system:kube-controller-manager';

/** One line of kube-apiserver's --token-auth-file: token,user,uid,"group1,group2". */
function tokenLine(token: StaticToken): string {
  for (const field of [token.token, token.user, token.uid ?? '', ...(token.groups ?? [])]) {
    if (/[",\s]/.test(field)) throw new Error(`static token field "${field}" holds a comma, quote or space`);
  }
  const groups = token.groups?.length ? `,"${token.groups.join(',')}"` : '';
  return `${token.token},${token.user},${token.uid ?? token.user}${groups}\n`;
}

function tokenKubeconfig(server: string, caPem: string, user: string, token: string): string {
  const ca = Buffer.from(caPem).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: envtest',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: envtest',
    '  context:',
    '    cluster: envtest',
    `    user: ${user}`,
    '    namespace: default',
    'current-context: envtest',
    '',
  ].join('\n');
}

/** An answer of the API server: its status, its body parsed as JSON (the text when it is not JSON), its headers. */
export interface HttpAnswer {
  readonly status: number;
  readonly body: any;
  readonly headers: IncomingHttpHeaders;
}

/** How {@link httpsJson} speaks to the API server. */
export interface HttpsJsonOptions {
  /** The CA of the server's certificate; without one, the certificate is not checked. */
  readonly ca?: string;
  /** The bearer token. */
  readonly token: string;
  /** @default 'application/json' */
  readonly accept?: string;
  /** The body's media type. @default 'application/json' */
  readonly contentType?: string;
  /** Gives up on an answer after this long. @default none */
  readonly timeoutMs?: number;
}

/** One request to an API server over https: a string body is sent as it is, any other as JSON. */
export function httpsJson(server: string, method: string, path: string, body: unknown, options: HttpsJsonOptions): Promise<HttpAnswer> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolveAnswer, reject) => {
    const req = httpsRequest(
      new URL(path, server),
      {
        method,
        ...(options.ca === undefined ? { rejectUnauthorized: false } : { ca: options.ca }),
        headers: {
          authorization: `Bearer ${options.token}`,
          accept: options.accept ?? 'application/json',
          ...(payload === undefined
            ? {}
            : { 'content-type': options.contentType ?? 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON: keep the text */
          }
          resolveAnswer({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.timeoutMs !== undefined) req.setTimeout(options.timeoutMs, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.end(payload);
  });
}

function tail(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}

/**
 * Starts etcd and kube-apiserver on free loopback ports in a temporary directory: a self-signed serving
 * certificate (generated by kube-apiserver in its --cert-dir), a fresh service-account signing key, RBAC
 * authorization, the OwnerReferencesPermissionEnforcement admission plugin, and an admin token in system:masters.
 */
export async function startEnvtest(options: EnvtestOptions = {}): Promise<Envtest> {
  // A free port is free when chosen, and another test may take it before etcd or kube-apiserver binds it (seen in
  // CI: "bind: address already in use"); the whole start is then tried again on new ports.
  return startOnFreePorts(
    () => startEnvtestOnce(options),
    (error) => /address already in use/.test((error as Error).message),
  );
}

/** A running process of the control plane, with its arguments, so that a stopped component starts again as it was. */
interface RunningProcess {
  readonly child: ChildProcess;
  readonly args: readonly string[];
}

/** The control plane's processes: started, watched for an unexpected exit, stopped in reverse order with their directory. */
interface ProcessGroup {
  launch(name: string, args: readonly string[]): ChildProcess;
  /** The first unexpected exit, with the end of its log. */
  failure(): string | undefined;
  /** The component by name, for stopping and starting it again. */
  component(name: ControlPlaneComponent): RunningProcess;
  /** Stops `child` without reporting its exit as a failure. */
  stopExpected(child: ChildProcess): Promise<void>;
  stop(): Promise<void>;
}

function processGroup(assets: string, dir: string, logDir: string): ProcessGroup {
  const children: ChildProcess[] = [];
  const logs: WriteStream[] = [];
  const exits = new Map<string, string>();
  const running = new Map<string, RunningProcess>();
  const expectedExits = new Set<ChildProcess>();
  let stopped = false;

  return {
    launch(name, args) {
      const logPath = join(logDir, `${name}.log`);
      // Appended: a component started again keeps its earlier lines.
      const log = createWriteStream(logPath, { flags: running.has(name) ? 'a' : 'w' });
      logs.push(log);
      const child = spawnWatched(join(assets, name), args, log);
      child.once('exit', (code, signal) => {
        if (!stopped && !expectedExits.has(child))
          exits.set(name, `${name} exited (code ${code}, signal ${signal}); last log lines:\n${tail(logPath)}`);
      });
      // A component started again takes its predecessor's place: stop() goes in reverse start order, so that
      // kube-apiserver always stops before etcd (without etcd it cannot finish its shutdown).
      const previous = running.get(name);
      if (previous) children[children.indexOf(previous.child)] = child;
      else children.push(child);
      running.set(name, { child, args });
      return child;
    },
    failure: () => [...exits.values()][0],
    component(name) {
      const found = running.get(name);
      if (!found) throw new Error(`no ${name} in this envtest`);
      return found;
    },
    async stopExpected(child) {
      expectedExits.add(child);
      await stopProcess(child);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const child of [...children].reverse()) await stopProcess(child);
      for (const log of logs) log.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The bearer tokens of the identities the harness itself uses. */
interface HarnessTokens {
  readonly admin: string;
  /** kube-controller-manager's own identity in 'all' mode. */
  readonly controllerManager: string;
}

/** Writes the service-account signing key pair and the token file into `dir`. */
function writeCredentials(dir: string, options: EnvtestOptions): HarnessTokens {
  const tokens = { admin: randomBytes(24).toString('hex'), controllerManager: randomBytes(24).toString('hex') };
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  // In 'all' mode kube-controller-manager runs as itself, as bootstrap RBAC expects (not as admin).
  const lines: StaticToken[] = [
    { token: tokens.admin, user: 'admin', uid: 'admin-uid', groups: ['system:masters'] },
    ...(options.controllerManager === 'all' ? [{ token: tokens.controllerManager, user: CONTROLLER_MANAGER_USER }] : []),
    ...(options.tokens ?? []),
  ];
  writeFileSync(join(dir, 'tokens.csv'), lines.map(tokenLine).join(''));
  return tokens;
}

function etcdArgs(dir: string, clientPort: number, peerPort: number, options: EnvtestOptions): string[] {
  return [
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${clientPort}`,
    `--advertise-client-urls=http://127.0.0.1:${clientPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
    '--unsafe-no-fsync=true',
    '--log-level=warn',
    ...(options.etcdArgs ?? []),
  ];
}

function apiserverArgs(dir: string, etcdClientPort: number, securePort: number, options: EnvtestOptions): string[] {
  const bindAddress = options.bindAddress ?? '127.0.0.1';
  const flags: Record<string, string> = {
    'etcd-servers': `http://127.0.0.1:${etcdClientPort}`,
    'cert-dir': join(dir, 'certs'),
    'secure-port': String(securePort),
    'bind-address': bindAddress,
    'advertise-address': bindAddress,
    'service-cluster-ip-range': options.serviceClusterIpRange ?? '10.0.0.0/16',
    'allow-privileged': 'true',
    'authorization-mode': 'RBAC',
    'token-auth-file': join(dir, 'tokens.csv'),
    'service-account-key-file': join(dir, 'sa.pub'),
    'service-account-signing-key-file': join(dir, 'sa.key'),
    'service-account-issuer': 'https://kubernetes.default.svc.cluster.local',
    'enable-admission-plugins': 'OwnerReferencesPermissionEnforcement',
    'disable-admission-plugins': 'ServiceAccount',
    'enable-priority-and-fairness': 'false',
    profiling: 'false',
    v: '0',
    ...options.apiserverFlags,
  };
  return [...Object.entries(flags).map(([flag, value]) => `--${flag}=${value}`), ...(options.apiserverArgs ?? [])];
}

/** Where a started API server answers, and how to reach it as admin. */
interface ApiServerAccess {
  readonly server: string;
  readonly caPem: string;
  readonly adminToken: string;
  readonly kubeconfigPath: string;
  /** The admin kubeconfig YAML, also at {@link kubeconfigPath}. */
  readonly kubeconfig: string;
  readonly dir: string;
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<HttpAnswer>;
}

/** kube-controller-manager's arguments: the gc and namespace controllers as admin, or every controller as itself. */
async function controllerManagerArgs(
  access: ApiServerAccess,
  mode: true | 'gc' | 'all',
  controllerManagerToken: string,
): Promise<string[]> {
  const { dir, kubeconfigPath } = access;
  let controllerArgs = ['--controllers=garbagecollector,namespace'];
  let identity = kubeconfigPath;
  if (mode === 'all') {
    identity = join(dir, 'kube-controller-manager.kubeconfig');
    writeFileSync(identity, tokenKubeconfig(access.server, access.caPem, CONTROLLER_MANAGER_USER, controllerManagerToken));
    controllerArgs = [
      '--controllers=*',
      '--use-service-account-credentials=true',
      `--root-ca-file=${join(dir, 'certs', 'apiserver.crt')}`,
      `--service-account-private-key-file=${join(dir, 'sa.key')}`,
    ];
  }
  return [
    `--kubeconfig=${identity}`,
    `--authentication-kubeconfig=${kubeconfigPath}`,
    `--authorization-kubeconfig=${kubeconfigPath}`,
    ...controllerArgs,
    '--bind-address=127.0.0.1',
    `--secure-port=${await freePort()}`,
    `--cert-dir=${join(dir, 'kcm-certs')}`,
    '--leader-elect=false',
    '--concurrent-gc-syncs=5',
    '--v=0',
  ];
}

/** {@link Envtest.serviceAccountKubeconfig}: creates the ServiceAccount (or keeps it) and a kubeconfig of a token for it. */
function serviceAccountKubeconfigs(access: ApiServerAccess): Envtest['serviceAccountKubeconfig'] {
  const { request } = access;
  return async (namespace, name, expirationSeconds = 86_400) => {
    const created = await request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace },
    });
    if (created.status !== 201 && created.status !== 409)
      throw new Error(`creating ServiceAccount ${namespace}/${name}: ${created.status} ${JSON.stringify(created.body)}`);
    const token = await request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds },
    });
    if (token.status !== 201) throw new Error(`TokenRequest for ${namespace}/${name}: ${token.status} ${JSON.stringify(token.body)}`);
    const yaml = tokenKubeconfig(
      access.server,
      access.caPem,
      `system:serviceaccount:${namespace}:${name}`,
      token.body.status.token as string,
    );
    const path = join(access.dir, `sa-${namespace}-${name}.kubeconfig`);
    writeFileSync(path, yaml);
    return { kubeconfig: yaml, path };
  };
}

/** Starts etcd and kube-apiserver and waits for /readyz; answers how to reach the server as admin. */
async function startApiServer(
  processes: ProcessGroup,
  dir: string,
  tokens: HarnessTokens,
  options: EnvtestOptions,
  timeoutMs: number,
): Promise<ApiServerAccess> {
  const [etcdClient, etcdPeer, securePort] = [await freePort(), await freePort(), await freePort()];
  processes.launch('etcd', etcdArgs(dir, etcdClient, etcdPeer, options));
  processes.launch('kube-apiserver', apiserverArgs(dir, etcdClient, securePort, options));

  const server = `https://${options.bindAddress ?? '127.0.0.1'}:${securePort}`;
  const adminToken = tokens.admin;
  let caPem = '';
  await pollReady(
    'kube-apiserver',
    timeoutMs,
    async () => {
      caPem = readFileSync(join(dir, 'certs', 'apiserver.crt'), 'utf8');
      const answer = await httpsJson(server, 'GET', '/readyz', undefined, { ca: caPem, token: adminToken, timeoutMs: 30_000 });
      return answer.status === 200;
    },
    processes.failure,
    POLL,
  );
  const kubeconfig = tokenKubeconfig(server, caPem, 'admin', adminToken);
  const kubeconfigPath = join(dir, 'admin.kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfig);
  const request = (method: string, path: string, body?: unknown, contentType?: string): Promise<HttpAnswer> =>
    httpsJson(server, method, path, body, { ca: caPem, token: adminToken, contentType, timeoutMs: 30_000 });
  return { server, caPem, adminToken, kubeconfigPath, kubeconfig, dir, request };
}

async function startEnvtestOnce(options: EnvtestOptions): Promise<Envtest> {
  const started = Date.now();
  const assets = await envtestAssets();
  const dir = mkdtempSync(join(options.tmpDir ?? tmpdir(), 'customapp-envtest-'));
  const processes = processGroup(assets, dir, options.logDir ?? dir);
  const timeoutMs = options.startTimeoutMs ?? 60_000;

  try {
    const tokens = writeCredentials(dir, options);
    const access = await startApiServer(processes, dir, tokens, options, timeoutMs);
    const { server, caPem, request } = access;

    // The bootstrap controller creates the default namespace shortly after /readyz.
    const defaultNamespace = async (): Promise<boolean> => (await request('GET', '/api/v1/namespaces/default')).status === 200;
    await pollReady('default namespace', timeoutMs, defaultNamespace, processes.failure, POLL);

    const controllerManager = options.controllerManager ?? false;
    if (controllerManager)
      processes.launch('kube-controller-manager', await controllerManagerArgs(access, controllerManager, tokens.controllerManager));

    const version = (await request('GET', '/version')).body.gitVersion as string;
    const ready = async (): Promise<boolean> => (await request('GET', '/readyz')).status === 200;
    return {
      server,
      adminToken: access.adminToken,
      caPem,
      kubeconfigPath: access.kubeconfigPath,
      kubeconfig: access.kubeconfig,
      version,
      dir,
      stopComponent: (name) => processes.stopExpected(processes.component(name).child),
      async startComponent(name) {
        const { child, args } = processes.component(name);
        if (child.exitCode === null && child.signalCode === null) throw new Error(`${name} is running: stop it first`);
        processes.launch(name, args);
        await pollReady(`${name} started again`, timeoutMs, ready, processes.failure, POLL);
      },
      tokenKubeconfig: (user, token) => tokenKubeconfig(server, caPem, user, token),
      controllerManager: Boolean(controllerManager),
      startMs: Date.now() - started,
      serviceAccountKubeconfig: serviceAccountKubeconfigs(access),
      request,
      stop: processes.stop,
    };
  } catch (error) {
    await processes.stop();
    throw error;
  }
}
