// The emulator's library API: startEmulator() wires the store, the API verbs, controllers, auth and the HTTP server.
import { writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { adminHandler } from './admin.js';
import { Api, type WriteContext } from './api.js';
import { adminUser, Authenticator } from './auth.js';
import type { UserInfo } from './authz.js';
import { builtinResources } from './builtin/kinds.js';
import { ControllerQueue, type Logger, silentLogger } from './controllers/queue.js';
import { Counters } from './counters.js';
import { WriteLog } from './write-log.js';
import { CrdController } from './crd/controller.js';
import { type DeploymentStatusOptions, DeploymentStatusSimulator } from './controllers/deployment-status.js';
import { servedSchemas } from './crd/definition.js';
import { Faults } from './faults.js';
import { GarbageCollector } from './controllers/gc.js';
import { kubeconfigYaml } from './kubeconfig.js';
import { NamespaceController } from './controllers/namespace.js';
import type { KubeObject } from './object.js';
import { customResourceSchema, OpenApiDocuments } from './openapi.js';
import { bootstrapPolicy, RbacAuthorizer } from './rbac.js';
import { ResourceRegistry, type ResourceType } from './resources.js';
import { reviewResources } from './reviews.js';
import { RequestHandler } from './server.js';
import { Store } from './store.js';
import { emulatorCertificate } from './tls.js';
import { WatchHub } from './watch.js';

export type { Counters, CountersSnapshot, CountFilter } from './counters.js';
export type { WriteLog, WriteRecord } from './write-log.js';
export type { Faults, FailureFault, LatencyFault, RequestMatch, WatchMatch } from './faults.js';
export type { Logger } from './controllers/queue.js';
export type { DeploymentStatusOptions } from './controllers/deployment-status.js';
export type { UserInfo } from './authz.js';

export interface EmulatorOptions {
  /** TCP port; 0 (default) picks a free one. */
  readonly port?: number;
  /** Interface to listen on. @default "127.0.0.1" */
  readonly host?: string;
  /** Events retained per resource for watch resumption; older resourceVersions get 410. @default 10000 */
  readonly historyWindow?: number;
  /** Period of BOOKMARK events on watches that ask for them. @default 60000 (the apiserver's minute) */
  readonly bookmarkIntervalMs?: number;
  /** Structured logger (pino-compatible: debug/info/warn/error with an object first). @default silent */
  readonly logger?: Logger;
  /** Clock for timestamps. @default () => new Date() */
  readonly clock?: () => Date;
  /** Randomness for generated names, fault rates and node ports. @default Math.random */
  readonly random?: () => number;
  /**
   * Requests without credentials act as system:anonymous (group system:unauthenticated), as the apiserver's default
   * --anonymous-auth=true does (RBAC then answers 403, except /version and the health endpoints); when false they get
   * 401. Invalid credentials always get 401. @default true
   */
  readonly anonymousAuth?: boolean;
  /**
   * Simulate Deployment status (kwok-like, see deployment-status.ts): replicas count as ready `readyAfterMs` after
   * each spec change, so READY columns and `kubectl rollout status` behave as on a cluster where pods start. No pod
   * runs. Off by default, like envtest (Deployment status stays `{}`); `npm start`'s embedded default turns it on.
   * @default false
   */
  readonly simulateDeploymentStatus?: boolean | DeploymentStatusOptions;
  /**
   * Record every write (user, user agent, object, received and completed times, code) in {@link Emulator.writes}, as
   * kube-apiserver's audit log at the Metadata level would: to attribute each write to the process that sent it.
   * @default false
   */
  readonly recordWrites?: boolean;
}

export interface KubeconfigScheme {
  /** @default "https" */
  readonly scheme?: 'https' | 'http';
}

export interface Emulator {
  /** Base URL over plain http, e.g. http://127.0.0.1:43121 (the same port also speaks https). */
  readonly url: string;
  /** The same port over https (self-signed; kubectl sends credentials only over TLS), e.g. https://127.0.0.1:43121 */
  readonly httpsUrl: string;
  /** Bearer token of the admin user ("admin", group system:masters). */
  readonly adminToken: string;
  /**
   * An admin kubeconfig (YAML): token auth, insecure-skip-tls-verify, for kubectl and client-node. It points at the
   * https side by default because kubectl never sends credentials over plain http; `{ scheme: 'http' }` gives a plain
   * http one (client-node sends tokens over http; kubectl then gets 401).
   */
  adminKubeconfig(options?: KubeconfigScheme): string;
  writeAdminKubeconfig(path: string, options?: KubeconfigScheme): Promise<void>;
  /**
   * A token of system:serviceaccount:<namespace>:<name>, valid whenever that ServiceAccount exists; the ServiceAccount
   * is created when missing and its namespace exists (as the envtest harness does).
   */
  serviceAccountToken(namespace: string, name: string): string;
  serviceAccountKubeconfig(namespace: string, name: string, options?: KubeconfigScheme): string;
  /** A token of an arbitrary user (RBAC tests of users and groups). */
  userToken(user: UserInfo): string;
  readonly counters: Counters;
  /** Every write since the start (empty unless started with `recordWrites`). */
  readonly writes: WriteLog;
  readonly faults: Faults;
  /** The current global resourceVersion. */
  readonly resourceVersion: number;
  /** Closes every watch, connection and timer. */
  close(): Promise<void>;
}

/** The /version the emulator reports: 1.33, so the kubectl dispatcher picks kubectl 1.33. */
export const emulatorVersion = {
  major: '1',
  minor: '33',
  emulationMajor: '1',
  emulationMinor: '33',
  minCompatibilityMajor: '1',
  minCompatibilityMinor: '32',
  gitVersion: 'v1.33.0-emulator',
  gitCommit: 'emulator',
  gitTreeState: 'clean',
  buildDate: '1970-01-01T00:00:00Z',
  goVersion: 'go1.24',
  compiler: 'gc',
  platform: 'linux/amd64',
};

/** The write context of the emulator's own writes (bootstrap objects, ServiceAccounts for tokens). */
function adminContext(fieldManager: string): WriteContext {
  return {
    user: adminUser,
    fieldManager,
    dryRun: false,
    fieldValidation: 'Ignore',
    warnings: [],
    authorize: () => ({ allowed: true, reason: '' }),
  };
}

function bootstrap(api: Api, registry: ResourceRegistry): void {
  const ctx = adminContext('kube-apiserver');
  const create = (group: string, resource: string, namespace: string, obj: KubeObject) =>
    api.create(registry.get(group, 'v1', resource)!, namespace, obj, ctx);
  for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) create('', 'namespaces', '', { metadata: { name } });
  for (const obj of bootstrapPolicy())
    create('rbac.authorization.k8s.io', obj.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings', '', obj);
  create('', 'services', 'default', {
    metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { clusterIP: '10.0.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }], type: 'ClusterIP' },
  } as KubeObject);
}

/** The schema of a custom resource's served version, from its CRD in the store (undefined when it has none). */
function customResourceSchemaOf(api: Api, crdType: ResourceType, rt: ResourceType): ReturnType<typeof customResourceSchema> | undefined {
  for (const stored of api.collectionOf(crdType).objects.values()) {
    const spec = stored.object.spec as { group?: string; names?: { plural?: string } };
    if (spec.group === rt.group && spec.names?.plural === rt.resource) {
      const schema = servedSchemas(stored.object).get(rt.version);
      return schema === undefined ? undefined : customResourceSchema(rt, schema);
    }
  }
  return undefined;
}

/**
 * Starts the controllers a bare API server runs (CRDs, garbage collection, namespaces), and the Deployment status
 * simulation when asked; answers the simulator, which close() stops.
 */
function startControllers(
  api: Api,
  registry: ResourceRegistry,
  queue: ControllerQueue,
  hub: WatchHub,
  clock: () => Date,
  simulation: EmulatorOptions['simulateDeploymentStatus'],
): DeploymentStatusSimulator | undefined {
  const crdType = registry.get('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
  const endWatches = (group: string, resource: string): void => {
    hub.drop((watch) => watch.group === group && watch.resource === resource, 'end');
  };
  new CrdController(api, registry, queue, crdType, endWatches).start();
  new GarbageCollector(api, registry, queue).start();
  new NamespaceController(api, registry, queue, registry.get('', 'v1', 'namespaces')!).start();
  const deploymentStatus = simulation
    ? new DeploymentStatusSimulator(api, registry.get('apps', 'v1', 'deployments')!, queue, clock, simulation === true ? {} : simulation)
    : undefined;
  deploymentStatus?.start();
  return deploymentStatus;
}

/** The emulator's one port, listening; close() ends every connection. */
interface BothSchemesListener {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Listens on one port for both http and https, as kube-apiserver's clients may use either: the first byte of a
 * connection says which (0x16 opens a TLS handshake).
 */
async function listenBothSchemes(
  handle: RequestListener,
  { cert, key }: { cert: string; key: string },
  options: Pick<EmulatorOptions, 'port' | 'host'>,
): Promise<BothSchemesListener> {
  const serverOptions = { requestTimeout: 0, keepAliveTimeout: 30_000 };
  const httpServer = createHttpServer(serverOptions, handle);
  const httpsServer = createHttpsServer({ ...serverOptions, cert, key }, handle);
  for (const s of [httpServer, httpsServer]) s.timeout = 0;
  const sockets = new Set<Socket>();
  const listener = createNetServer({ noDelay: true }, (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      (first[0] === 0x16 ? httpsServer : httpServer).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      listener.off('error', reject);
      resolve();
    });
  });
  const { address: host, port } = listener.address() as AddressInfo;
  return {
    host,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        listener.close(() => resolve());
        for (const s of [httpServer, httpsServer]) s.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** The Authenticator, and {@link Emulator.serviceAccountToken} over it. */
function authentication(
  api: Api,
  registry: ResourceRegistry,
  anonymousAuth: boolean,
): { authn: Authenticator; serviceAccountToken: (namespace: string, name: string) => string } {
  const saType = registry.get('', 'v1', 'serviceaccounts')!;
  const authn = new Authenticator((namespace, name) => api.getStored(saType, namespace, name)?.object.metadata.uid, anonymousAuth);
  /** Like the envtest harness: the ServiceAccount is created when missing (if its namespace exists). */
  const serviceAccountToken = (namespace: string, name: string) => {
    if (api.getStored(saType, namespace, name) === undefined && api.store.collection('/namespaces').objects.has(namespace)) {
      api.create(saType, namespace, { metadata: { name } }, adminContext('emulator'));
    }
    return authn.serviceAccountToken({ namespace, name });
  };
  return { authn, serviceAccountToken };
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? (() => new Date());
  const random = options.random ?? Math.random;
  const historyWindow = options.historyWindow ?? 10000;
  const registry = new ResourceRegistry([...builtinResources(), ...reviewResources()]);
  const store = new Store(historyWindow);
  const api = new Api(store, registry, { clock, random });
  const queue = new ControllerQueue(logger);
  const hub = new WatchHub(api, options.bookmarkIntervalMs ?? 60_000, () => clock().getTime());
  const { authn, serviceAccountToken } = authentication(api, registry, options.anonymousAuth ?? true);
  const rbac = new RbacAuthorizer(store);
  const counters = new Counters(() => hub.watches());
  const writes = new WriteLog(options.recordWrites ?? false);
  const faults = new Faults(store, hub, random, historyWindow);
  const crdType = registry.get('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
  const openapi = new OpenApiDocuments(registry, (rt) => customResourceSchemaOf(api, crdType, rt));
  const deploymentStatus = startControllers(api, registry, queue, hub, clock, options.simulateDeploymentStatus);
  bootstrap(api, registry);

  let address = '';
  const handler = new RequestHandler({
    api,
    registry,
    hub,
    authn,
    rbac,
    counters,
    writes,
    faults,
    openapi,
    logger,
    queue,
    version: emulatorVersion,
    serverAddress: () => address,
    admin: adminHandler({ counters, faults, hub, store }),
  });
  const listener = await listenBothSchemes(handler.handle, emulatorCertificate(clock()), options);
  hub.start();
  const { host, port } = listener;
  address = `${host}:${port}`;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const url = `http://${hostPart}:${port}`;
  const httpsUrl = `https://${hostPart}:${port}`;
  const server = (scheme: KubeconfigScheme | undefined) => (scheme?.scheme === 'http' ? url : httpsUrl);
  logger.info({ url }, 'emulator listening');

  let closed: Promise<void> | undefined;
  return {
    url,
    httpsUrl,
    adminToken: authn.adminToken,
    adminKubeconfig: (scheme) => kubeconfigYaml({ server: server(scheme), token: authn.adminToken }),
    writeAdminKubeconfig: (path, scheme) =>
      writeFile(path, kubeconfigYaml({ server: server(scheme), token: authn.adminToken }), { mode: 0o600 }),
    serviceAccountToken,
    serviceAccountKubeconfig: (namespace, name, scheme) =>
      kubeconfigYaml({ server: server(scheme), token: serviceAccountToken(namespace, name), name: `${namespace}-${name}`, namespace }),
    userToken: (user) => authn.userToken(user),
    counters,
    writes,
    faults,
    get resourceVersion() {
      return store.currentRv;
    },
    close() {
      closed ??= (() => {
        hub.close();
        deploymentStatus?.stop();
        queue.close();
        return listener.close();
      })();
      return closed;
    },
  };
}
