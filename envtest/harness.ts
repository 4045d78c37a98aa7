// Starts a real etcd and kube-apiserver (and optionally kube-controller-manager) on loopback for tests.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, createWriteStream, type WriteStream } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const BUILD_SCRIPT = resolve(import.meta.dirname, 'build.sh');

/** Options of {@link startEnvtest}. */
export interface EnvtestOptions {
  /**
   * Also run kube-controller-manager with the garbage-collector and namespace controllers, so that ownerReference
   * garbage collection and namespace deletion happen as in a real cluster (a bare kube-apiserver does neither).
   * @default false
   */
  readonly controllerManager?: boolean;
  /**
   * Extra kube-apiserver flags, for example `--min-request-timeout=30` to make watches end sooner.
   * @default []
   */
  readonly apiserverArgs?: readonly string[];
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
  /** The API server URL, `https://127.0.0.1:<port>`. */
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
  /**
   * A kubeconfig for a ServiceAccount, with a token from the TokenRequest API (the ServiceAccount is created when
   * missing). Returns the YAML and the path of a file holding it.
   */
  serviceAccountKubeconfig(namespace: string, name: string, expirationSeconds?: number): Promise<{ kubeconfig: string; path: string }>;
  /** Sends one request as admin and returns the status and parsed body (tests, setup). */
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; body: any }>;
  /** Kills every process and removes the temporary directory. Safe to call twice. */
  stop(): Promise<void>;
}

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

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
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
  const child = spawn('bash', ['-c', script, 'watchdog', binary, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  return child;
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

function adminKubeconfig(server: string, caPem: string, user: string, token: string): string {
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

interface HttpAnswer {
  status: number;
  body: any;
}

function httpsJson(
  server: string,
  caPem: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<HttpAnswer> {
  const url = new URL(path, server);
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolveAnswer, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        ca: caPem,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }),
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
          resolveAnswer({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.end(payload);
  });
}

async function waitFor(what: string, timeoutMs: number, probe: () => Promise<boolean>, failed: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failure = failed();
    if (failure) throw new Error(`${what}: ${failure}`);
    try {
      if (await probe()) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 100));
  }
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
  const started = Date.now();
  const assets = await envtestAssets();
  const dir = mkdtempSync(join(tmpdir(), 'customapp-envtest-'));
  const logDir = options.logDir ?? dir;
  const children: ChildProcess[] = [];
  const logs: WriteStream[] = [];
  const exits = new Map<string, string>();
  let stopped = false;

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const child of [...children].reverse()) await stopProcess(child);
    for (const log of logs) log.end();
    rmSync(dir, { recursive: true, force: true });
  };
  const launch = (name: string, args: readonly string[]): ChildProcess => {
    const logPath = join(logDir, `${name}.log`);
    const log = createWriteStream(logPath);
    logs.push(log);
    const child = spawnWatched(join(assets, name), args, log);
    child.once('exit', (code, signal) => {
      if (!stopped) exits.set(name, `${name} exited (code ${code}, signal ${signal}); last log lines:\n${tail(logPath)}`);
    });
    children.push(child);
    return child;
  };
  const failure = (): string | undefined => [...exits.values()][0];

  try {
    const [etcdClient, etcdPeer, securePort] = [await freePort(), await freePort(), await freePort()];
    const adminToken = randomBytes(24).toString('hex');
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(join(dir, 'tokens.csv'), `${adminToken},admin,admin-uid,"system:masters"\n`);

    launch('etcd', [
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ]);

    launch('kube-apiserver', [
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      `--cert-dir=${join(dir, 'certs')}`,
      `--secure-port=${securePort}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      '--service-cluster-ip-range=10.0.0.0/16', // room for the 10k-CustomApp runs' Services (the emulator serves the same range)
      '--allow-privileged=true',
      '--authorization-mode=RBAC',
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--enable-admission-plugins=OwnerReferencesPermissionEnforcement',
      '--disable-admission-plugins=ServiceAccount',
      '--enable-priority-and-fairness=false',
      '--profiling=false',
      '--v=0',
      ...(options.apiserverArgs ?? []),
    ]);

    const server = `https://127.0.0.1:${securePort}`;
    const timeoutMs = options.startTimeoutMs ?? 60_000;
    let caPem = '';
    await waitFor(
      'kube-apiserver',
      timeoutMs,
      async () => {
        caPem = readFileSync(join(dir, 'certs', 'apiserver.crt'), 'utf8');
        const answer = await httpsJson(server, caPem, adminToken, 'GET', '/readyz');
        return answer.status === 200;
      },
      failure,
    );

    const kubeconfig = adminKubeconfig(server, caPem, 'admin', adminToken);
    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfig);
    const request = (method: string, path: string, body?: unknown, contentType?: string): Promise<HttpAnswer> =>
      httpsJson(server, caPem, adminToken, method, path, body, contentType);

    // The bootstrap controller creates the default namespace shortly after /readyz.
    await waitFor('default namespace', timeoutMs, async () => (await request('GET', '/api/v1/namespaces/default')).status === 200, failure);

    const controllerManager = options.controllerManager ?? false;
    if (controllerManager) {
      launch('kube-controller-manager', [
        `--kubeconfig=${kubeconfigPath}`,
        `--authentication-kubeconfig=${kubeconfigPath}`,
        `--authorization-kubeconfig=${kubeconfigPath}`,
        '--controllers=garbagecollector,namespace',
        '--bind-address=127.0.0.1',
        `--secure-port=${await freePort()}`,
        `--cert-dir=${join(dir, 'kcm-certs')}`,
        '--leader-elect=false',
        '--concurrent-gc-syncs=5',
        '--v=0',
      ]);
    }

    const version = (await request('GET', '/version')).body.gitVersion as string;
    const serviceAccountKubeconfig = async (
      namespace: string,
      name: string,
      expirationSeconds = 86_400,
    ): Promise<{ kubeconfig: string; path: string }> => {
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
      const yaml = adminKubeconfig(server, caPem, `system:serviceaccount:${namespace}:${name}`, token.body.status.token as string);
      const path = join(dir, `sa-${namespace}-${name}.kubeconfig`);
      writeFileSync(path, yaml);
      return { kubeconfig: yaml, path };
    };

    return {
      server,
      adminToken,
      caPem,
      kubeconfigPath,
      kubeconfig,
      version,
      dir,
      controllerManager,
      startMs: Date.now() - started,
      serviceAccountKubeconfig,
      request,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
