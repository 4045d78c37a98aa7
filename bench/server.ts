// The API server of one benchmark session: a fresh envtest (or emulator) with the CRD, and an identity for the operator.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parse, stringify } from 'yaml';
import { startEnvtest } from '../envtest/harness.js';
import { CRD_NAME } from '../api/customapp.js';
import { auditFlags } from '../envtest/audit.js';
import { type CpuProfileRecorder, kubeApiserverCpuProfile } from './apiserver-profile.js';
import { AuditLog, auditPolicy } from './audit.js';
import { findServerProcesses } from './cpu.js';
import type { BenchTarget } from './options.js';
import { countRequest, type RequestCounts } from './stats.js';

const CRD_FILE = resolve(import.meta.dirname, '../dist/customapp-crd.k8s.yaml');
const EMULATOR_MAIN = resolve(import.meta.dirname, '../emulator/main.ts');
/** The operator's namespace and ServiceAccount: its requests are told apart from the harness's by this identity. */
export const OPERATOR_NAMESPACE = 'bench-system';
export const OPERATOR_ACCOUNT = 'operator';
export const OPERATOR_USERNAME = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_ACCOUNT}`;

/** A running API server, ready for the load. */
export interface BenchServer {
  readonly target: BenchTarget;
  /** `v1.34.4` (envtest) or the emulator's version. */
  readonly version: string;
  /** The admin kubeconfig (the harness). */
  readonly adminKubeconfigPath: string;
  /** The operator's kubeconfig: a ServiceAccount bound to cluster-admin, so that its requests can be attributed. */
  readonly operatorKubeconfigPath: string;
  /** The audit log of the operator's identity (envtest), the server-side count of its requests. */
  readonly audit?: AuditLog;
  /** Where that audit log is written (removed by {@link stop}). */
  readonly auditLogPath?: string;
  /** Records kube-apiserver's CPU profile over a window (envtest started with {@link BenchServerOptions.profiling}). */
  readonly cpuProfile?: CpuProfileRecorder;
  /** The emulator's counters of the operator's identity: its requests so far and its open watches. */
  readonly counters?: () => Promise<{ readonly requests: RequestCounts; readonly openWatches: number }>;
  /** The flags kube-apiserver runs with beyond envtest's defaults, for the report. */
  readonly serverFlags: readonly string[];
  /** The server's own processes, for their CPU time (envtest: kube-apiserver and etcd; the emulator: its process as `apiserver`). */
  readonly pids: { readonly apiserver?: number; readonly etcd?: number };
  stop(): Promise<void>;
}

export interface BenchServerOptions {
  /** kube-apiserver `--min-request-timeout`. */
  readonly watchTimeoutSeconds: number;
  /**
   * Serve kube-apiserver's `/debug/pprof/` (`--profiling=true`; envtest runs without it), for
   * {@link BenchServer.cpuProfile}. Ignored by the emulator.
   * @default false
   */
  readonly profiling?: boolean;
}

type Request = (method: string, path: string, body?: unknown, contentType?: string) => Promise<{ status: number; body: any }>;

async function expectStatus(what: string, answer: Promise<{ status: number; body: any }>, ok: readonly number[]): Promise<any> {
  const { status, body } = await answer;
  if (!ok.includes(status)) throw new Error(`${what}: ${status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/** Creates the CRD from dist/ and waits until it is Established and CustomApps can be listed. */
export async function installCrd(request: Request, timeoutMs = 30_000): Promise<void> {
  const crd = parse(readFileSync(CRD_FILE, 'utf8'));
  await expectStatus('creating the CRD', request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd), [201, 409]);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`);
    const established = current.body?.status?.conditions?.some(
      (condition: { type: string; status: string }) => condition.type === 'Established' && condition.status === 'True',
    );
    if (established && (await request('GET', '/apis/app.example.com/v1/customapps?limit=1')).status === 200) return;
    if (Date.now() > deadline) throw new Error(`the CRD ${CRD_NAME} was not established within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** Gives the operator its own ServiceAccount with cluster-admin rights (every strategy gets the same). */
async function operatorIdentity(request: Request): Promise<void> {
  await expectStatus(
    'creating the operator namespace',
    request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OPERATOR_NAMESPACE } }),
    [201, 409],
  );
  await expectStatus(
    'binding the operator to cluster-admin',
    request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'bench-operator' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: OPERATOR_ACCOUNT, namespace: OPERATOR_NAMESPACE }],
    }),
    [201, 409],
  );
}

/** Starts a fresh envtest with the audit log of the operator's identity and a shortened watch timeout. */
async function startEnvtestServer(options: BenchServerOptions): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'customapp-bench-'));
  const policyPath = join(dir, 'audit-policy.yaml');
  const logPath = join(dir, 'audit.log');
  writeFileSync(policyPath, auditPolicy(OPERATOR_USERNAME));
  const serverFlags = [`--min-request-timeout=${options.watchTimeoutSeconds}`];
  const env = await startEnvtest({
    apiserverArgs: [...serverFlags, ...auditFlags(policyPath, logPath)],
    apiserverFlags: options.profiling ? { profiling: 'true' } : {},
  }).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  const audit = new AuditLog(logPath);
  try {
    await operatorIdentity(env.request);
    const { path: operatorKubeconfigPath } = await env.serviceAccountKubeconfig(OPERATOR_NAMESPACE, OPERATOR_ACCOUNT);
    await installCrd(env.request);
    return {
      target: 'envtest',
      version: env.version,
      adminKubeconfigPath: env.kubeconfigPath,
      operatorKubeconfigPath,
      audit,
      auditLogPath: logPath,
      ...(options.profiling
        ? { cpuProfile: kubeApiserverCpuProfile({ server: env.server, caPem: env.caPem, token: env.adminToken }) }
        : {}),
      serverFlags: [...serverFlags, '--audit-log-path=… (the operator identity only)', ...(options.profiling ? ['--profiling=true'] : [])],
      pids: findServerProcesses(env.dir),
      stop: async () => {
        await audit.close();
        await env.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await audit.close();
    await env.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** One JSON request over plain http with a bearer token. */
async function httpJson(
  server: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: any }> {
  const response = await fetch(new URL(path, server), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': contentType }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  return { status: response.status, body: parsed };
}

/** The emulator's resource key (`customapps/status.app.example.com`) in the benchmark's spelling (`customapps.app.example.com/status`). */
export function benchResourceName(group: string, resource: string): string {
  const [plural, subresource] = resource.split('/');
  return `${plural}${group ? `.${group}` : ''}${subresource ? `/${subresource}` : ''}`;
}

/**
 * Creates the operator's ServiceAccount on the emulator (or keeps it), asks a day's token for it and writes its
 * kubeconfig, for `server` (the port's https side), into `dir`; answers the kubeconfig's path.
 */
async function writeOperatorKubeconfig(request: Request, server: string, dir: string): Promise<string> {
  await expectStatus(
    'creating the operator ServiceAccount',
    request('POST', `/api/v1/namespaces/${OPERATOR_NAMESPACE}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: OPERATOR_ACCOUNT },
    }),
    [201, 409],
  );
  const token = await expectStatus(
    'requesting the operator token',
    request('POST', `/api/v1/namespaces/${OPERATOR_NAMESPACE}/serviceaccounts/${OPERATOR_ACCOUNT}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 86_400 },
    }),
    [200, 201],
  );
  const operatorKubeconfigPath = join(dir, 'operator.kubeconfig');
  writeFileSync(
    operatorKubeconfigPath,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'emulator', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'operator', user: { token: token.status.token } }],
      contexts: [{ name: 'emulator', context: { cluster: 'emulator', user: 'operator' } }],
      'current-context': 'emulator',
    }),
  );
  return operatorKubeconfigPath;
}

/**
 * Starts the emulator in its own process (`emulator/main.ts` under tsx), so that it does not share the harness's
 * event loop, with the same operator identity as on envtest (over the https side of its port, where clients send
 * their token). The emulator has no server-side watch timeout: watches end only when the client's `timeoutSeconds`
 * says so.
 */
async function startEmulatorServer(): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'customapp-bench-emulator-'));
  const adminKubeconfigPath = join(dir, 'admin.kubeconfig');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', EMULATOR_MAIN, '--port', '0', '--kubeconfig-out', adminKubeconfigPath, '--log-level', 'warn'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      const lines = createInterface(child.stdout!);
      lines.once('line', (line) => resolveUrl(line.trim()));
      child.once('exit', (code) => reject(new Error(`the emulator exited (code ${code}) before listening`)));
    });
    const admin = parse(readFileSync(adminKubeconfigPath, 'utf8')) as {
      clusters: { cluster: { server: string } }[];
      users: { user: { token: string } }[];
    };
    const adminToken = admin.users[0]!.user.token;
    // The kubeconfigs point at the port's https side: kubectl and client-go send no credentials over plain http.
    const server = admin.clusters[0]!.cluster.server;
    const request: Request = (method, path, body, contentType) => httpJson(url, adminToken, method, path, body, contentType);
    await operatorIdentity(request);
    const operatorKubeconfigPath = await writeOperatorKubeconfig(request, server, dir);
    await installCrd(request);
    const version = (await request('GET', '/version')).body.gitVersion as string;
    return {
      target: 'emulator',
      version,
      adminKubeconfigPath,
      operatorKubeconfigPath,
      counters: async () => {
        const snapshot = await expectStatus('reading the emulator counters', request('GET', '/emulator/counters'), [200]);
        const requests: RequestCounts = {};
        for (const record of snapshot.requests as { verb: string; group: string; resource: string; user: string; count: number }[]) {
          if (record.user === OPERATOR_USERNAME)
            countRequest(requests, record.verb, benchResourceName(record.group, record.resource), record.count);
        }
        return { requests, openWatches: snapshot.watches.byUser[OPERATOR_USERNAME] ?? 0 };
      },
      serverFlags: [],
      pids: { apiserver: child.pid },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Starts the API server of one session. */
export async function startBenchServer(target: BenchTarget, options: BenchServerOptions): Promise<BenchServer> {
  return target === 'envtest' ? startEnvtestServer(options) : startEmulatorServer();
}
