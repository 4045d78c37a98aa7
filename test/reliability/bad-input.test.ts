// Bad input, table-driven: each case ends in a 422, a condition with a reason, an Event or a metered error; never a crash or a hot loop.
import test, { type ExecutionContext } from 'ava';
import { CONFIG_HASH_ANNOTATION, SECRET_HASH_ANNOTATION } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { contentHash, type HashableContent } from '../../operator/dependencies/content-hash.js';
import type { KubeClient } from '../../operator/kube/client.js';
import type { KubeObject } from '../../operator/kube/objects.js';
import { ApiError } from '../../operator/kube/errors.js';
import { CONFIGMAPS, DEPLOYMENTS, SECRETS, SERVICES } from '../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { Deployment, Service } from '../../operator/kube/objects.js';
import { secretHashIn } from '../support/secret-hash.js';
import { selectedTargets, type Target, type TestCluster } from '../support/targets.js';
import { assertInvariants } from '../support/invariants.js';
import { clusterScenario, createAll, eventually, objects, startTestOperator, type TestOperator } from '../support/operator-harness.js';
import { distOperatorRules, OPERATOR_USER, rulesWithout, setOperatorRules, type Grant } from './support/cluster-role.js';
import { conditionOf, conditionReached, type NamespaceReads, podAnnotation } from '../support/cluster-reads.js';
import { startFaultProxy, type FaultAnswer, type FaultProxy, type ProxiedRequest } from './support/fault-proxy.js';

/** The quiet window in which a settled case must not reconcile again (no polling, no hot loop). */
const QUIET_MS = 600;
/** The emulator's BOOKMARK period here, so that healthy watches are never idle while a hung one is. */
const BOOKMARK_MS = 300;
/** The dependency watches' idle timeout on the emulator target (the hanging-watch case). */
const IDLE_TIMEOUT_MS = 1500;
const IMAGE = 'example/app:1';

/** What every case gets. */
interface CaseContext {
  readonly target: Target;
  readonly cluster: TestCluster;
  readonly admin: KubeClient;
  readonly operator: TestOperator;
  /** In front of the emulator: the operator's connection goes through it. */
  readonly proxy?: FaultProxy;
  /** A fresh namespace for this case. */
  readonly ns: string;
  readonly reads: NamespaceReads;
}

// ─── helpers ────────────────────────────────────────────────────────────────────────────────────────────────────

const reconcileCount = (context: CaseContext, name: string): number =>
  context.operator.logs.find('reconcile.start', { key: `${context.ns}/${name}` }).length;

/** Asserts that `name` is not reconciled again within the quiet window (a held or refused CustomApp is not polled). */
async function assertQuiet(t: ExecutionContext, context: CaseContext, name: string, allowed = 0): Promise<void> {
  const before = reconcileCount(context, name);
  await new Promise((done) => setTimeout(done, QUIET_MS));
  const extra = reconcileCount(context, name) - before;
  t.true(extra <= allowed, `${extra} reconciles of ${context.ns}/${name} in ${QUIET_MS} ms with nothing changing (at most ${allowed})`);
}

function waitForCondition(context: CaseContext, name: string, type: string, reason: string, timeoutMs = 20_000): Promise<CustomApp> {
  return conditionReached(context.reads, name, type, reason, timeoutMs);
}

async function waitForHash(context: CaseContext, name: string, annotation: string, hash: string, timeoutMs = 20_000): Promise<Deployment> {
  return eventually(
    `${context.ns}/${name}: ${annotation}=${hash.slice(0, 12)}`,
    async () => {
      const deployment = await context.reads.deployment(name);
      return podAnnotation(deployment, annotation) === hash ? deployment : undefined;
    },
    timeoutMs,
  );
}

async function waitForEvent(context: CaseContext, name: string, reason: string, type: 'Normal' | 'Warning'): Promise<string> {
  const event = await eventually(`${context.ns}/${name}: a ${type} Event ${reason}`, async () =>
    (await context.reads.events(name)).find((each) => each.reason === reason && each.type === type),
  );
  return event.message ?? '';
}

const app = (context: CaseContext, name: string, spec: Partial<CustomApp['spec']>): CustomApp =>
  objects.customApp(context.ns, name, { image: IMAGE, ...spec });
/** Checks that `live` is still `created` as it was made: the operator never wrote it (its resourceVersion is unchanged). */
function untouched(t: ExecutionContext, live: KubeObject | undefined, created: KubeObject, what: string): void {
  t.is(live?.metadata.resourceVersion, created.metadata.resourceVersion, what);
}
/** Creates ConfigMap `config` (V=1) and CustomApp `web` reading it: the start of most cases. */
const createWebOnConfig = (context: CaseContext): Promise<void> =>
  createAll(context.admin, objects.configMap(context.ns, 'config', { V: '1' }), app(context, 'web', { configMapName: 'config' }));
const hashOf = (content: HashableContent): string => contentHash(content);
/** The keyed hash the operator writes for the Secret `name` of the case's namespace, as it is now. */
const secretHashOf = (context: CaseContext, name: string): Promise<string> => secretHashIn(context.admin, context.ns, name);

// ─── 1. the CRD schema ──────────────────────────────────────────────────────────────────────────────────────────

interface SchemaCase {
  readonly name: string;
  /** The CustomApp's name. @default 'bad' */
  readonly appName?: string;
  /** The spec sent (`undefined` sends none). */
  readonly spec: Record<string, unknown> | undefined;
  /** The field the 422 must name. */
  readonly field: string;
}

const NAME_253 = `${'a'.repeat(249)}.app`;
const SCHEMA_CASES: readonly SchemaCase[] = [
  { name: 'a CustomApp without spec.image', spec: { replicas: 1 }, field: 'spec.image' },
  { name: 'an empty spec.image', spec: { image: '' }, field: 'spec.image' },
  { name: 'a spec.image longer than 4096 characters', spec: { image: `example/${'x'.repeat(4096)}` }, field: 'spec.image' },
  { name: 'a CustomApp without a spec', spec: undefined, field: 'spec' },
  { name: 'an upper-case CustomApp name', appName: 'MyApp', spec: { image: IMAGE }, field: 'metadata.name' },
  { name: 'a CustomApp name of 254 characters', appName: `a${NAME_253}`, spec: { image: IMAGE }, field: 'metadata.name' },
  { name: 'an upper-case configMapName', spec: { image: IMAGE, configMapName: 'App-Config' }, field: 'spec.configMapName' },
  {
    name: 'a configMapName with a slash, meant to reach another namespace',
    spec: { image: IMAGE, configMapName: 'kube-system/cluster-config' },
    field: 'spec.configMapName',
  },
  { name: 'a configMapName of 254 characters', spec: { image: IMAGE, configMapName: `a${NAME_253}` }, field: 'spec.configMapName' },
  { name: 'an empty configMapName', spec: { image: IMAGE, configMapName: '' }, field: 'spec.configMapName' },
  { name: 'a configMapName ending in a dash', spec: { image: IMAGE, configMapName: 'config-' }, field: 'spec.configMapName' },
  { name: 'an upper-case secretName', spec: { image: IMAGE, secretName: 'Credentials' }, field: 'spec.secretName' },
  {
    name: 'a secretName with a slash, meant to reach another namespace',
    spec: { image: IMAGE, secretName: 'kube-system/admin-token' },
    field: 'spec.secretName',
  },
  { name: 'a secretName of 254 characters', spec: { image: IMAGE, secretName: `a${NAME_253}` }, field: 'spec.secretName' },
  { name: 'negative replicas', spec: { image: IMAGE, replicas: -1 }, field: 'spec.replicas' },
  { name: 'a fractional replica count', spec: { image: IMAGE, replicas: 1.5 }, field: 'spec.replicas' },
  { name: 'replicas given as a string', spec: { image: IMAGE, replicas: 'three' }, field: 'spec.replicas' },
  { name: 'port 0', spec: { image: IMAGE, port: 0 }, field: 'spec.port' },
  { name: 'port 70000', spec: { image: IMAGE, port: 70000 }, field: 'spec.port' },
  { name: 'a negative port', spec: { image: IMAGE, port: -80 }, field: 'spec.port' },
  { name: 'a port given as a name', spec: { image: IMAGE, port: 'http' }, field: 'spec.port' },
];

async function createRejected(
  admin: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown> | undefined,
): Promise<unknown> {
  const body = {
    apiVersion: 'app.example.com/v1',
    kind: 'CustomApp',
    metadata: { name, namespace },
    ...(spec === undefined ? {} : { spec }),
  } as KubeObject;
  return admin.create(CUSTOM_APPS, namespace, body).then(
    () => undefined,
    (error: unknown) => error,
  );
}

// ─── 2. references and ownership (an operator running) ──────────────────────────────────────────────────────────

interface OutcomeCase {
  readonly name: string;
  /** @default both targets */
  readonly targets?: readonly Target[];
  readonly run: (t: ExecutionContext, context: CaseContext) => Promise<void>;
}

/**
 * A case: CustomApp `held` names a `kind` that does not exist, so its rollout is held: `<kind>NotFound`, Ready False
 * RolloutHeld, a RolloutHeld Event naming the missing object, no Deployment, and no reconcile after.
 */
function heldOnMissing(kind: 'ConfigMap' | 'Secret', name: string): OutcomeCase {
  const missing = kind === 'ConfigMap' ? 'missing-config' : 'missing-secret';
  return {
    name,
    run: async (t, context) => {
      await createAll(context.admin, app(context, 'held', kind === 'ConfigMap' ? { configMapName: missing } : { secretName: missing }));
      const held = await waitForCondition(context, 'held', `${kind}Available`, `${kind}NotFound`);
      t.like(conditionOf(held, 'Ready'), { status: 'False', reason: 'RolloutHeld' });
      t.regex(await waitForEvent(context, 'held', 'RolloutHeld', 'Warning'), new RegExp(`"${missing}" not found`));
      t.is(await context.reads.deployment('held'), undefined, 'no Deployment while held');
      await assertQuiet(t, context, 'held');
    },
  };
}

/** The API server's limit on a ConfigMap's values, in bytes (keys are not counted). */
const MAX_CONFIGMAP_BYTES = 1_048_576;
/** Exactly the limit, in two-byte characters: the watch delivers it in chunks that split some of them. */
const ONE_MIB_OF_UTF8 = { big: 'é'.repeat(MAX_CONFIGMAP_BYTES / 2) };

const REFERENCE_CASES: readonly OutcomeCase[] = [
  heldOnMissing(
    'ConfigMap',
    'a ConfigMap that does not exist holds the rollout with ConfigMapNotFound and a RolloutHeld Event, and is not polled',
  ),
  heldOnMissing('Secret', 'a Secret that does not exist holds the rollout with SecretNotFound'),
  {
    name: 'a ConfigMap deleted after the rollout holds further rollouts and leaves the running Deployment alone',
    run: async (t, context) => {
      await createWebOnConfig(context);
      const before = await waitForHash(context, 'web', CONFIG_HASH_ANNOTATION, hashOf({ data: { V: '1' } }));
      await context.admin.delete(CONFIGMAPS, context.ns, 'config');
      const held = await waitForCondition(context, 'web', 'ConfigMapAvailable', 'ConfigMapNotFound');
      t.like(conditionOf(held, 'Ready'), { status: 'False', reason: 'RolloutHeld' });
      t.is(held.status?.configHash, hashOf({ data: { V: '1' } }), 'the status still names what the Deployment runs with');
      await waitForEvent(context, 'web', 'RolloutHeld', 'Warning');
      untouched(t, await context.reads.deployment('web'), before, 'the Deployment is not written');
      await assertQuiet(t, context, 'web');
    },
  },
  {
    name: 'a ConfigMap recreated after a deletion rolls the Deployment with the new content, with no polling in between',
    run: async (t, context) => {
      await createWebOnConfig(context);
      await waitForHash(context, 'web', CONFIG_HASH_ANNOTATION, hashOf({ data: { V: '1' } }));
      await context.admin.delete(CONFIGMAPS, context.ns, 'config');
      await waitForCondition(context, 'web', 'ConfigMapAvailable', 'ConfigMapNotFound');
      await assertQuiet(t, context, 'web');
      await createAll(context.admin, objects.configMap(context.ns, 'config', { V: '2' }));
      await waitForHash(context, 'web', CONFIG_HASH_ANNOTATION, hashOf({ data: { V: '2' } }));
      const found = await waitForCondition(context, 'web', 'ConfigMapAvailable', 'ConfigMapFound');
      t.is(found.status?.configHash, hashOf({ data: { V: '2' } }));
    },
  },
  {
    name: 'a Secret deleted after the rollout holds with SecretNotFound and leaves the Deployment alone',
    run: async (t, context) => {
      await createAll(context.admin, objects.secret(context.ns, 'creds', { TOKEN: 'one' }), app(context, 'web', { secretName: 'creds' }));
      const before = await waitForHash(context, 'web', SECRET_HASH_ANNOTATION, await secretHashOf(context, 'creds'));
      await context.admin.delete(SECRETS, context.ns, 'creds');
      await waitForCondition(context, 'web', 'SecretAvailable', 'SecretNotFound');
      t.is((await context.reads.deployment('web'))?.metadata.resourceVersion, before.metadata.resourceVersion);
      await assertQuiet(t, context, 'web');
    },
  },
  {
    name: 'a Secret recreated after a deletion rolls the Deployment with the new content',
    run: async (t, context) => {
      await createAll(context.admin, objects.secret(context.ns, 'creds', { TOKEN: 'one' }), app(context, 'web', { secretName: 'creds' }));
      const first = await secretHashOf(context, 'creds');
      await waitForHash(context, 'web', SECRET_HASH_ANNOTATION, first);
      await context.admin.delete(SECRETS, context.ns, 'creds');
      await waitForCondition(context, 'web', 'SecretAvailable', 'SecretNotFound');
      await createAll(context.admin, objects.secret(context.ns, 'creds', { TOKEN: 'two' }));
      const second = await secretHashOf(context, 'creds');
      t.not(second, first);
      await waitForHash(context, 'web', SECRET_HASH_ANNOTATION, second);
      t.like(await waitForCondition(context, 'web', 'SecretAvailable', 'SecretFound'), { status: { secretHash: second } });
    },
  },
  {
    name: 'a ConfigMap of exactly 1 MiB of two-byte characters, arriving through the watch, rolls with the exact content hash',
    run: async (t, context) => {
      await createAll(context.admin, app(context, 'big', { configMapName: 'big-config' }));
      await waitForCondition(context, 'big', 'ConfigMapAvailable', 'ConfigMapNotFound');
      await createAll(context.admin, objects.configMap(context.ns, 'big-config', ONE_MIB_OF_UTF8));
      const expected = hashOf({ data: ONE_MIB_OF_UTF8 });
      await waitForHash(context, 'big', CONFIG_HASH_ANNOTATION, expected);
      t.is((await waitForCondition(context, 'big', 'ConfigMapAvailable', 'ConfigMapFound')).status?.configHash, expected);
      await context.admin.patch(CONFIGMAPS, context.ns, 'big-config', 'merge', { data: { big: 'ü'.repeat(MAX_CONFIGMAP_BYTES / 2) } });
      await waitForHash(context, 'big', CONFIG_HASH_ANNOTATION, hashOf({ data: { big: 'ü'.repeat(MAX_CONFIGMAP_BYTES / 2) } }));
    },
  },
  {
    name: 'a ConfigMap over 1 MiB is refused by the API server with 422, and its CustomApp stays held',
    run: async (t, context) => {
      await createAll(context.admin, app(context, 'huge', { configMapName: 'huge-config' }));
      await waitForCondition(context, 'huge', 'ConfigMapAvailable', 'ConfigMapNotFound');
      const refused = await context.admin
        .create(CONFIGMAPS, context.ns, objects.configMap(context.ns, 'huge-config', { big: 'x'.repeat(MAX_CONFIGMAP_BYTES + 1) }))
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      t.true(refused instanceof ApiError && refused.statusCode === 422, String(refused));
      await assertQuiet(t, context, 'huge');
      t.is((await context.reads.condition('huge', 'ConfigMapAvailable'))?.reason, 'ConfigMapNotFound');
    },
  },
  {
    name: 'a ConfigMap with binaryData only rolls with the hash of its binaryData, and a binaryData edit rolls again',
    run: async (t, context) => {
      const binaryData = { 'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]).toString('base64') };
      await createAll(
        context.admin,
        { ...objects.configMap(context.ns, 'binary', {}), data: undefined, binaryData } as KubeObject,
        app(context, 'bin', { configMapName: 'binary' }),
      );
      await waitForHash(context, 'bin', CONFIG_HASH_ANNOTATION, hashOf({ binaryData }));
      const edited = { 'logo.png': Buffer.from([0x00, 0x01]).toString('base64') };
      await context.admin.patch(CONFIGMAPS, context.ns, 'binary', 'merge', { binaryData: edited });
      await waitForHash(context, 'bin', CONFIG_HASH_ANNOTATION, hashOf({ binaryData: edited }));
      await eventually(
        'status.configHash follows',
        async () => (await context.reads.app('bin'))?.status?.configHash === hashOf({ binaryData: edited }),
      );
      t.is((await context.reads.condition('bin', 'ConfigMapAvailable'))?.reason, 'ConfigMapFound');
    },
  },
  {
    name: 'an empty ConfigMap counts as present and rolls with the hash of no content',
    run: async (t, context) => {
      await createAll(
        context.admin,
        { ...objects.configMap(context.ns, 'empty', {}), data: undefined } as KubeObject,
        app(context, 'hollow', { configMapName: 'empty' }),
      );
      await waitForHash(context, 'hollow', CONFIG_HASH_ANNOTATION, hashOf({}));
      // No pods run on the API targets: the rollout of the creation stays in progress.
      t.is((await waitForCondition(context, 'hollow', 'Ready', 'RolloutInProgress')).status?.configHash, hashOf({}));
    },
  },
  {
    name: 'an existing Deployment of the same name that the CustomApp does not own gives DeploymentNotOwned and is never touched',
    run: async (t, context) => {
      const foreign = await context.admin.create<Deployment>(DEPLOYMENTS, context.ns, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'taken', namespace: context.ns },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'theirs' } },
          template: { metadata: { labels: { app: 'theirs' } }, spec: { containers: [{ name: 'theirs', image: 'example/theirs:1' }] } },
        },
      });
      await createAll(context.admin, app(context, 'taken', {}));
      const refused = await waitForCondition(context, 'taken', 'DeploymentAvailable', 'DeploymentNotOwned');
      t.like(conditionOf(refused, 'Ready'), { status: 'False', reason: 'DeploymentNotOwned' });
      t.regex(await waitForEvent(context, 'taken', 'DeploymentNotOwned', 'Warning'), /not controlled by this CustomApp/);
      await assertQuiet(t, context, 'taken');
      untouched(t, await context.reads.deployment('taken'), foreign, 'the foreign Deployment is untouched');
    },
  },
  {
    name: 'an existing Service of the same name that the CustomApp does not own gives a ServiceNotOwned Event and is never touched',
    run: async (t, context) => {
      const foreign = await context.admin.create<Service>(SERVICES, context.ns, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'shared', namespace: context.ns },
        spec: { ports: [{ port: 80 }], selector: { app: 'theirs' } },
      });
      await createAll(context.admin, app(context, 'shared', { port: 8080 }));
      t.regex(await waitForEvent(context, 'shared', 'ServiceNotOwned', 'Warning'), /not controlled by this CustomApp/);
      t.truthy(await eventually('the Deployment is still created', () => context.reads.deployment('shared')));
      untouched(t, await context.reads.service('shared'), foreign, 'the foreign Service is untouched');
    },
  },
  {
    name: 'a CustomApp whose name cannot name a Service gets ServiceNameInvalid, and its Deployment still rolls out',
    run: async (t, context) => {
      await createAll(context.admin, app(context, 'web.v2', { port: 8080 }));
      const invalid = await waitForCondition(context, 'web.v2', 'Ready', 'ServiceNameInvalid');
      t.regex(conditionOf(invalid, 'Ready')!.message, /not a DNS-1035 label/);
      await waitForEvent(context, 'web.v2', 'ServiceNameInvalid', 'Warning');
      t.truthy(await context.reads.deployment('web.v2'));
      t.is(await context.reads.service('web.v2'), undefined);
      await assertQuiet(t, context, 'web.v2');
    },
  },
  {
    name: 'switching configMapName to a missing ConfigMap holds the handoff: the Deployment keeps the old one until the new one exists',
    run: async (t, context) => {
      await createAll(context.admin, objects.configMap(context.ns, 'old', { V: 'old' }), app(context, 'moving', { configMapName: 'old' }));
      await waitForHash(context, 'moving', CONFIG_HASH_ANNOTATION, hashOf({ data: { V: 'old' } }));
      await context.admin.patch(CUSTOM_APPS, context.ns, 'moving', 'merge', { spec: { configMapName: 'new' } });
      const held = await waitForCondition(context, 'moving', 'ConfigMapAvailable', 'ConfigMapNotFound');
      t.is(held.status?.observedConfigMapName, 'old');
      t.deepEqual((await context.reads.deployment('moving'))!.spec.template.spec.containers[0]!.envFrom, [
        { configMapRef: { name: 'old' } },
      ]);
      await assertQuiet(t, context, 'moving');
      await createAll(context.admin, objects.configMap(context.ns, 'new', { V: 'new' }));
      const rolled = await waitForHash(context, 'moving', CONFIG_HASH_ANNOTATION, hashOf({ data: { V: 'new' } }));
      t.deepEqual(rolled.spec.template.spec.containers[0]!.envFrom, [{ configMapRef: { name: 'new' } }]);
      await eventually(
        'status names the new ConfigMap',
        async () => (await context.reads.app('moving'))?.status?.observedConfigMapName === 'new',
      );
    },
  },
  {
    name: 'a CustomApp deleted while its rollout is held is finalized and its watch released',
    run: async (t, context) => {
      await createAll(context.admin, app(context, 'doomed', { configMapName: 'never', secretName: 'nope' }));
      await waitForCondition(context, 'doomed', 'ConfigMapAvailable', 'ConfigMapNotFound');
      await context.admin.delete(CUSTOM_APPS, context.ns, 'doomed');
      await eventually('the CustomApp is gone', async () => (await context.reads.app('doomed')) === undefined);
      await eventually('its watches are released', () =>
        context.operator.operator.dependencies.watched().every((ref) => ref.namespace !== context.ns),
      );
      t.pass();
    },
  },
];

// ─── 3. the API answering badly ─────────────────────────────────────────────────────────────────────────────────

/** Requests for ConfigMaps in one namespace (a list or, with `watch`, a watch). */
const configMapsIn =
  (namespace: string, watch: boolean) =>
  (request: ProxiedRequest): boolean =>
    request.method === 'GET' && request.path === `/api/v1/namespaces/${namespace}/configmaps` && request.watch === watch;

/** The dependency-watch log lines of one stream (per-object stream names end with `namespace/name`). */
const streamLines = (context: CaseContext, msg: string, object: string): Record<string, unknown>[] =>
  context.operator.logs.find(msg).filter((line) => String(line.stream ?? '').endsWith(`${context.ns}/${object}`));

/** Waits for the rollout of `web` with ConfigMap `config` (V=1), then checks that an edit of it still rolls. */
async function convergesAndFollowsEdits(t: ExecutionContext, context: CaseContext, timeoutMs = 20_000): Promise<void> {
  await waitForHash(context, 'web', CONFIG_HASH_ANNOTATION, hashOf({ data: { V: '1' } }), timeoutMs);
  await context.admin.patch(CONFIGMAPS, context.ns, 'config', 'merge', { data: { V: '2' } });
  await waitForHash(context, 'web', CONFIG_HASH_ANNOTATION, hashOf({ data: { V: '2' } }), timeoutMs);
  t.true(context.operator.operator.reconciling, 'the operator still runs');
}

/** A fault of the API: the operator's ConfigMap lists in the case's namespace (its watches with `watch`) answered with `answer`, `times` times. */
interface ConfigMapFault {
  readonly watch: boolean;
  readonly answer: FaultAnswer;
  readonly times: number;
}
/** The operator's ConfigMap lists answered with `answer`, `times` times. */
const onList = (answer: FaultAnswer, times = 1): ConfigMapFault => ({ watch: false, answer, times });
/** The operator's ConfigMap watches answered with `answer`, `times` times. */
const onWatch = (answer: FaultAnswer, times = 1): ConfigMapFault => ({ watch: true, answer, times });

/**
 * Sets `fault` on the proxy; then creates `web` on `config`, checks that it converges and follows an edit, and that
 * the fault's answer was given every time.
 */
async function convergesThrough(t: ExecutionContext, context: CaseContext, fault: ConfigMapFault): Promise<void> {
  const rule = context.proxy!.add({ match: configMapsIn(context.ns, fault.watch), answer: fault.answer, times: fault.times });
  await createWebOnConfig(context);
  await convergesAndFollowsEdits(t, context);
  t.is(context.proxy!.hits(rule), fault.times);
}

/**
 * A case of the API answering badly, on the emulator (its fault proxy answers for the server): `web` converges through
 * `fault` ({@link convergesThrough}), then `check` reads how the operator coped (its retries, its relists).
 */
const faultCase = (
  name: string,
  fault: ConfigMapFault,
  check: (t: ExecutionContext, context: CaseContext) => void | Promise<void>,
): OutcomeCase => ({
  name,
  targets: ['emulator'],
  run: async (t, context) => {
    await convergesThrough(t, context, fault);
    await check(t, context);
  },
});

/** Runs a case with one grant missing from the operator's ClusterRole, restoring it afterwards. */
async function withoutGrant(context: CaseContext, grant: Grant, body: () => Promise<void>): Promise<void> {
  const rules = distOperatorRules();
  await setOperatorRules(context.admin, rulesWithout(rules, grant), grant);
  try {
    await body();
  } finally {
    await setOperatorRules(context.admin, rules, grant);
  }
}

/** The operator's own count of answers with `code` to `verb resource` (rest_client_requests_total). */
const answered = (context: CaseContext, verb: string, resource: string, code: number): Promise<number> =>
  context.operator.operator.metrics.total('rest_client_requests_total', { verb, resource, code: String(code) });

const API_CASES: readonly OutcomeCase[] = [
  faultCase(
    'malformed JSON in a list answer is logged without its payload and retried, and the CustomApp converges',
    onList({ kind: 'malformed-body' }),
    (t, context) => {
      const retries = streamLines(context, 'retry', 'config');
      t.true(
        retries.some((line) => /malformed JSON in a 200 answer \(…\)/.test(String(line.message))),
        JSON.stringify(retries),
      );
    },
  ),
  faultCase(
    'a malformed line in a watch stream is retried from the last resourceVersion, and no edit is lost',
    onWatch({ kind: 'malformed-watch-line' }),
    (t, context) => {
      t.true(streamLines(context, 'retry', 'config').some((line) => /malformed event/.test(String(line.message))));
      t.is(streamLines(context, 'listed', 'config').length, 1, 'resumed from the resourceVersion: no relist');
    },
  ),
  {
    name: 'a watch that hangs without sending anything is abandoned after the idle timeout, and the edit made meanwhile arrives',
    targets: ['emulator'],
    run: async (t, context) => {
      const rule = context.proxy!.add({ match: configMapsIn(context.ns, true), answer: { kind: 'hang' }, times: 1 });
      await createWebOnConfig(context);
      await waitForHash(context, 'web', CONFIG_HASH_ANNOTATION, hashOf({ data: { V: '1' } }));
      await eventually('the watch request hangs', () => context.proxy!.hits(rule) === 1);
      const edited = performance.now();
      await context.admin.patch(CONFIGMAPS, context.ns, 'config', 'merge', { data: { V: '2' } });
      await waitForHash(context, 'web', CONFIG_HASH_ANNOTATION, hashOf({ data: { V: '2' } }));
      const delayMs = performance.now() - edited;
      t.is(streamLines(context, 'idle', 'config').length, 1, 'the idle timeout fired once');
      t.true(delayMs < IDLE_TIMEOUT_MS + 5_000, `the edit arrived ${delayMs.toFixed(0)} ms later`);
    },
  },
  faultCase(
    'a Status error object (500 InternalError) answering a list is retried with backoff, and the CustomApp converges',
    onList({ kind: 'status', code: 500, reason: 'InternalError', message: 'etcdserver: request timed out' }, 2),
    (t, context) => {
      const retries = streamLines(context, 'retry', 'config');
      t.deepEqual(
        retries.map((line) => [line.code, line.reason, line.attempt]),
        [
          [500, 'InternalError', 1],
          [500, 'InternalError', 2],
        ],
      );
      t.true(Number(retries[1]!.delayMs) > Number(retries[0]!.delayMs) / 2, 'the backoff does not shrink');
    },
  ),
  faultCase(
    'an ERROR Status event inside a watch stream is retried, and no edit is lost',
    onWatch({ kind: 'watch-error', code: 500, reason: 'InternalError', message: 'watch chan error' }),
    (t, context) => {
      t.true(streamLines(context, 'retry', 'config').some((line) => line.code === 500 && /watch chan error/.test(String(line.message))));
    },
  ),
  faultCase(
    'a 429 with Retry-After answering a list is retried no sooner than the server asked',
    onList({ kind: 'status', code: 429, reason: 'TooManyRequests', message: 'slow down', retryAfterSeconds: 2 }),
    (t, context) => {
      const [retry] = streamLines(context, 'retry', 'config');
      t.like(retry, { code: 429, reason: 'TooManyRequests' });
      t.true(Number(retry!.delayMs) >= 2000, `retried after ${String(retry!.delayMs)} ms`);
    },
  ),
  {
    name: "500s answering the operator's Deployment creates are retried with backoff until one succeeds",
    targets: ['emulator'],
    run: async (t, context) => {
      const fault = context.cluster.emulator!.faults.failRequests({
        match: { verb: 'create', group: 'apps', resource: 'deployments', namespace: context.ns, user: OPERATOR_USER },
        code: 500,
        times: 3,
      });
      t.teardown(() => context.cluster.emulator!.faults.remove(fault));
      await createWebOnConfig(context);
      await convergesAndFollowsEdits(t, context);
      const failed = context.operator.logs.find('reconcile.end', { key: `${context.ns}/web`, result: 'error' });
      t.is(failed.length, 3, 'three errors, each retried');
      t.is(await answered(context, 'create', 'deployments.apps', 500), 3, 'rest_client_requests_total counts the three 500s');
    },
  },
  {
    name: 'a 403 from RBAC on a write is an error in the log and in rest_client_requests_total, retried with a growing backoff, never a hot loop',
    run: async (t, context) => {
      await withoutGrant(context, { apiGroup: 'apps', resource: 'deployments', verb: 'create' }, async () => {
        await createAll(context.admin, app(context, 'denied', {}));
        await eventually('a denied create', async () => (await answered(context, 'create', 'deployments.apps', 403)) > 0);
        const started = reconcileCount(context, 'denied');
        await new Promise((done) => setTimeout(done, 2_500));
        const attempts = context.operator.logs.find('reconcile.end', { key: `${context.ns}/denied`, result: 'error' });
        t.true(reconcileCount(context, 'denied') - started <= 10, `${reconcileCount(context, 'denied') - started} reconciles in 2.5 s`);
        t.true(attempts.length >= 2, 'it keeps retrying');
        t.regex(JSON.stringify(attempts.at(-1)!.err), /403/);
        const starts = context.operator.logs.find('reconcile.start', { key: `${context.ns}/denied` }).map((line) => Number(line.time));
        const gaps = starts.slice(1).map((time, index) => time - starts[index]!);
        t.true(gaps.at(-1)! >= 200, `the retry gaps grow (5 ms × 2ⁿ): ${gaps.join(', ')} ms`);
      });
      await eventually('the Deployment is created once the grant is back', () => context.reads.deployment('denied'), 30_000);
    },
  },
  {
    name: 'a 403 from RBAC on a dependency list is retried with the watch backoff, and the CustomApp converges when the grant returns',
    run: async (t, context) => {
      await createAll(context.admin, objects.secret(context.ns, 'creds', { TOKEN: 'x' }));
      await withoutGrant(context, { apiGroup: '', resource: 'secrets', verb: 'list' }, async () => {
        await createAll(context.admin, app(context, 'denied', { secretName: 'creds' }));
        await eventually('a denied list', async () => (await answered(context, 'list', 'secrets', 403)) > 0);
        await new Promise((done) => setTimeout(done, 2_500));
        t.true(
          (await answered(context, 'list', 'secrets', 403)) <= 4,
          `${await answered(context, 'list', 'secrets', 403)} denied lists in 2.5 s`,
        );
        t.true(streamLines(context, 'retry', 'creds').some((line) => line.code === 403));
        t.is(await context.reads.deployment('denied'), undefined, 'nothing rolls out on unknown content');
      });
      await waitForHash(context, 'denied', SECRET_HASH_ANNOTATION, await secretHashOf(context, 'creds'), 40_000);
    },
  },
];

// ─── the suite ──────────────────────────────────────────────────────────────────────────────────────────────────

for (const target of selectedTargets()) {
  const shared = {} as Omit<CaseContext, 'ns' | 'reads'>;
  let caseNumber = 0;

  const scenario = clusterScenario(
    test,
    target,
    { emulator: { bookmarkIntervalMs: BOOKMARK_MS }, envtest: { controllerManager: true } },
    async (started) => {
      const { cluster } = started;
      const proxy = target === 'emulator' ? await startFaultProxy(cluster.emulator!.url) : undefined;
      const operator = await startTestOperator(
        cluster,
        target === 'emulator' ? { registry: { watch: { idleTimeoutMs: IDLE_TIMEOUT_MS } } } : {},
        { server: proxy?.url },
      ).catch(async (error: unknown) => {
        await proxy?.close();
        throw error;
      });
      Object.assign(shared, { target, ...started, operator, proxy });
      return async () => {
        await operator.operator.stop();
        await proxy?.close();
      };
    },
  );

  const contextFor = async (): Promise<CaseContext> => {
    caseNumber += 1;
    const ns = `bad-${caseNumber}`;
    return { ...shared, ns, reads: await scenario.createNamespace(ns) };
  };

  for (const schemaCase of SCHEMA_CASES) {
    test(`[${target}] the CRD schema refuses ${schemaCase.name} with 422 naming ${schemaCase.field}`, async (t) => {
      const namespace = 'schema';
      await scenario.createNamespace(namespace);
      const error = await createRejected(
        shared.admin,
        namespace,
        schemaCase.appName ?? `bad-${SCHEMA_CASES.indexOf(schemaCase)}`,
        schemaCase.spec,
      );
      t.true(error instanceof ApiError, `created, or failed otherwise: ${String(error)}`);
      t.is((error as ApiError).statusCode, 422, (error as Error).message);
      t.is((error as ApiError).reason, 'Invalid');
      t.true((error as Error).message.includes(schemaCase.field), (error as Error).message);
    });
  }

  test(`[${target}] the CRD schema refuses an update to negative replicas with 422, and the stored CustomApp is unchanged`, async (t) => {
    const context = await contextFor();
    await createAll(context.admin, app(context, 'valid', { replicas: 2 }));
    const error = await context.admin.patch(CUSTOM_APPS, context.ns, 'valid', 'merge', { spec: { replicas: -3 } }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    t.is((error as ApiError).statusCode, 422);
    t.is((await context.reads.app('valid'))?.spec.replicas, 2);
  });

  for (const outcome of [...REFERENCE_CASES, ...API_CASES]) {
    if (outcome.targets && !outcome.targets.includes(target)) continue;
    test.serial(`[${target}] ${outcome.name}`, async (t) => {
      const context = await contextFor();
      await outcome.run(t, context);
      t.true(context.operator.operator.reconciling, 'the operator is still running');
      await assertInvariants(t, context.cluster, context.operator.operator, context.admin);
    });
  }
}
