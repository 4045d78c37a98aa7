// Operator processes with --sharding on one API server: each object is written by one shard at a time, the shares add up,
// and a shard killed, joining or leaving during a fan-out loses no update and rolls no app twice.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { CONFIG_HASH_ANNOTATION, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { RELOAD_ANNOTATION, RUNNING_HASHES_ANNOTATION, TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import { contentHash, type HashableContent } from '../../operator/dependencies/content-hash.js';
import type { KubeClient } from '../../operator/kube/client.js';
import type { Deployment, KubeObject } from '../../operator/kube/objects.js';
import { isNotFound } from '../../operator/kube/errors.js';
import { CONFIGMAPS, DEPLOYMENTS, LEASES } from '../../operator/kube/resources.js';
import { RING_SELECTOR } from '../../operator/manager/sharding.js';
import { decodeHashes } from '../../operator/podtemplate/hash-annotation.js';
import { selectedTargets } from '../support/targets.js';
import {
  adminClient,
  createAll,
  createNamespace,
  eventually,
  grantShardingPermissions,
  grantWorkloadPermissions,
  installOperatorResources,
  objects,
} from '../support/operator-harness.js';
import { UNGOVERNED_FLAGS } from '../support/operator-process.js';
import { type RecordingCluster, startRecordingCluster } from '../support/write-record.js';
import { sumOf } from './support/prometheus.js';
import { FAST_LEASE_DURATION_MS, FAST_LEASE_FLAGS, SHARD_GROUP, ShardFleet } from './support/shard-fleet.js';
import { overlappingWrites, writersOf, writesByObject } from './support/shard-writes.js';

const APPS = 60;
const WORKLOADS = 30;
const SHARED = 'shared';
/**
 * How long after a shard is killed its objects may take to converge: its Lease must lapse (the Lease duration), then the
 * survivors take the objects over and roll them. The margin covers the fan-out itself on a loaded two-core machine.
 */
const FAILOVER_BOUND_MS = FAST_LEASE_DURATION_MS + 7_000;

const isWorkload = (name: string): boolean => name.startsWith('web-');
const appName = (index: number): string => `app-${index}`;
const workloadName = (index: number): string => `web-${index}`;

/** An annotated Deployment (a workload opted in by `app.example.com/reload`) whose pods read the shared ConfigMap. */
function workload(namespace: string, name: string): Deployment {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, annotations: { [RELOAD_ANNOTATION]: 'true' } },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'app', image: 'example/web:1', envFrom: [{ configMapRef: { name: SHARED } }] }] },
      },
    },
  } as Deployment;
}

/**
 * The content hash of the shared ConfigMap that a Deployment's pods run with: a CustomApp's config-hash, a workload's
 * rollout hashes (or, before its first rollout, the baseline it recorded when it opted in).
 */
function runningHash(deployment: Deployment): string | undefined {
  if (!isWorkload(deployment.metadata.name!)) return deployment.spec.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION];
  const key = `ConfigMap/${SHARED}`;
  const rolled = decodeHashes(deployment.spec.template.metadata?.annotations?.[TEMPLATE_HASHES_ANNOTATION]);
  if (rolled) return rolled.get(key) ?? undefined;
  return decodeHashes(deployment.metadata.annotations?.[RUNNING_HASHES_ANNOTATION])?.get(key) ?? undefined;
}

/** What the namespace's Deployments run: each one's generation (one per pod-template change) and hash of the shared ConfigMap. */
async function deploymentsIn(admin: KubeClient, namespace: string): Promise<Map<string, { generation: number; hash?: string }>> {
  const { items } = await admin.list<Deployment>(DEPLOYMENTS, { namespace });
  return new Map(items.map((item) => [item.metadata.name!, { generation: item.metadata.generation ?? 0, hash: runningHash(item) }]));
}

/** The Deployments (of the 60 apps and 30 workloads) that do not run the shared ConfigMap's current content yet. */
async function unconverged(admin: KubeClient, namespace: string): Promise<string[]> {
  const [configMap, deployments] = await Promise.all([
    admin.get<KubeObject & HashableContent>(CONFIGMAPS, namespace, SHARED),
    deploymentsIn(admin, namespace),
  ]);
  const wanted = contentHash(configMap);
  const names = [...Array.from({ length: APPS }, (_, i) => appName(i)), ...Array.from({ length: WORKLOADS }, (_, i) => workloadName(i))];
  return names.filter((name) => deployments.get(name)?.hash !== wanted);
}

/** Waits until all 90 Deployments run the shared ConfigMap's content; answers how long it took. */
async function converged(admin: KubeClient, namespace: string, timeoutMs: number): Promise<number> {
  const start = performance.now();
  let left: string[] = [];
  await eventually(
    'every app and workload runs the latest content',
    async () => {
      left = await unconverged(admin, namespace);
      return left.length === 0;
    },
    timeoutMs,
    250,
  ).catch((error: Error) => {
    throw new Error(`${error.message}: ${left.length} left (${left.slice(0, 10).join(', ')})`, { cause: error });
  });
  return performance.now() - start;
}

async function editShared(admin: KubeClient, namespace: string, value: string): Promise<void> {
  await admin.patch(CONFIGMAPS, namespace, SHARED, 'merge', { data: { V: value } });
}

/** For each Deployment, how many pod-template changes it went through since `before`. */
function rollsSince(
  before: ReadonlyMap<string, { generation: number }>,
  after: ReadonlyMap<string, { generation: number }>,
): Map<string, number> {
  return new Map([...after].map(([name, { generation }]) => [name, generation - (before.get(name)?.generation ?? 0)]));
}

/** The Deployments that did not go through exactly `expected` pod-template changes, as `name: n`. */
function rolledOtherThan(rolls: ReadonlyMap<string, number>, expected: number): string[] {
  return [...rolls].filter(([, count]) => count !== expected).map(([name, count]) => `${name}: ${count}`);
}

for (const target of selectedTargets()) {
  let recording: RecordingCluster;
  let admin: KubeClient;

  test.before(async () => {
    recording = await startRecordingCluster(target, [SHARD_GROUP], { envtest: { controllerManager: true } });
    await installOperatorResources(recording.cluster);
    admin = await adminClient(recording.cluster);
    // What a chart with the `sharding` and `workloads: ['deployments']` props grants.
    await grantShardingPermissions(admin);
    await grantWorkloadPermissions(admin, ['deployments']);
  });
  test.after.always(async () => {
    admin?.close();
    await recording?.stop();
  });

  /** Creates the shared ConfigMap, the 60 CustomApps and the 30 workloads in `namespace`. */
  const populate = async (namespace: string): Promise<void> => {
    await createNamespace(admin, namespace);
    await createAll(admin, objects.configMap(namespace, SHARED, { V: '1' }));
    await createAll(
      admin,
      ...Array.from({ length: APPS }, (_, i) =>
        objects.customApp(namespace, appName(i), { image: 'example/app:1', configMapName: SHARED }),
      ),
    );
    for (let i = 0; i < WORKLOADS; i++) await admin.create(DEPLOYMENTS, namespace, workload(namespace, workloadName(i)));
  };

  /**
   * A fleet of shards `names` serving `namespace` (stopped, and its Leases gone, when the test ends), agreed on their
   * view, over the load of {@link populate} converged.
   */
  const convergedFleet = async (
    t: ExecutionContext,
    namespace: string,
    names: readonly string[],
    flags: readonly string[] = [],
  ): Promise<ShardFleet> => {
    const fleet = new ShardFleet(recording.cluster, admin, [
      `--namespace=${namespace}`,
      '--workloads=deployments',
      `--leader-election-namespace=${OPERATOR_NAMESPACE}`,
      ...FAST_LEASE_FLAGS,
      ...UNGOVERNED_FLAGS,
      ...flags,
    ]);
    t.teardown(async () => {
      await fleet.dispose();
      // Kept for reading a failed run (the processes are gone by the time its report is read).
      const dir = await fleet.writeLogs(await mkdtemp(join(tmpdir(), `${namespace}-`)));
      t.log(`the shards' logs: ${dir}`);
      // A killed shard's Lease outlives it; the next test's fleet must not count it as a member while it lapses.
      for (const lease of (await admin.list(LEASES, { namespace: OPERATOR_NAMESPACE, labelSelector: RING_SELECTOR })).items) {
        await admin.delete(LEASES, OPERATOR_NAMESPACE, lease.metadata.name!).catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
      }
    });
    for (const name of names) await fleet.start(name);
    await fleet.settled();
    await populate(namespace);
    await converged(admin, namespace, 60_000);
    return fleet;
  };

  /** The write record of `namespace`'s objects, by object, and what it says about overlaps and writers. */
  const recordOf = async (namespace: string) => {
    const writes = (await recording.writes()).filter((write) => write.namespace === namespace);
    const byObject = writesByObject(writes, isWorkload);
    return { byObject, overlaps: overlappingWrites(byObject), writers: writersOf(byObject) };
  };

  test.serial(
    `[${target}] 3 shards split 60 CustomApps and 30 workloads: each object is written by exactly one shard, every shard owns some, and their customapp_shard_objects add up to 90`,
    async (t) => {
      const ns = 'shard-split';
      const fleet = await convergedFleet(t, ns, ['a', 'b', 'c']);
      // One rollout of everything, so that each object's owner writes for it once more.
      await editShared(admin, ns, '2');
      await converged(admin, ns, 60_000);

      const { byObject, overlaps, writers } = await recordOf(ns);
      t.is(byObject.size, APPS + WORKLOADS, 'every CustomApp and workload was written for');
      const shared = [...writers].filter(([, users]) => users.size !== 1).map(([object, users]) => `${object}: ${[...users].join(', ')}`);
      t.deepEqual(shared, [], 'each object was written by exactly one shard');
      t.deepEqual(overlaps, []);

      const owned = new Map<string, number>();
      for (const users of writers.values()) for (const user of users) owned.set(user, (owned.get(user) ?? 0) + 1);
      let total = 0;
      for (const shard of fleet.running()) {
        const samples = await fleet.metrics(shard.name);
        const objects = sumOf(samples, 'customapp_shard_objects');
        t.log(`${shard.name}: customapp_shard_objects ${objects}, wrote for ${owned.get(shard.user) ?? 0} objects`);
        t.true(objects > 0, `${shard.name} owns some objects`);
        t.is(objects, owned.get(shard.user) ?? 0, `${shard.name}'s customapp_shard_objects counts the objects it wrote for`);
        t.is(sumOf(samples, 'customapp_shard_members'), 3);
        total += objects;
      }
      t.is(total, APPS + WORKLOADS, 'the shards own every object once between them');
    },
  );

  test.serial(
    `[${target}] a shard killed (SIGKILL) during a fan-out of the shared ConfigMap: every app and workload rolls exactly once to the latest content within the Lease duration and a margin, and no two shards write for one object at once`,
    async (t) => {
      const ns = 'shard-kill';
      // Two workers per shard: the fan-out of its 30 objects lasts long enough for the kill to land in it.
      const fleet = await convergedFleet(t, ns, ['d', 'e', 'f'], ['--max-concurrent-reconciles=2']);
      const before = await deploymentsIn(admin, ns);
      const victim = fleet.shards.get('e')!;
      const victimObjects = [...(await recordOf(ns)).writers].filter(([, users]) => users.has(victim.user)).map(([object]) => object);
      t.true(victimObjects.length > 0, 'the shard to be killed owns objects');

      await editShared(admin, ns, '2');
      await eventually('the fan-out has begun', async () => (await unconverged(admin, ns)).length < APPS + WORKLOADS, 10_000, 5);
      await fleet.stop(victim.name, 'SIGKILL');
      const killedAt = performance.now();
      const elapsed = await converged(admin, ns, FAILOVER_BOUND_MS + 20_000);
      t.log(`converged ${Math.round(performance.now() - killedAt)} ms after the kill (bound ${FAILOVER_BOUND_MS} ms)`);
      t.true(elapsed <= FAILOVER_BOUND_MS, `converged ${Math.round(elapsed)} ms after the kill, within ${FAILOVER_BOUND_MS} ms`);

      const rolls = rollsSince(before, await deploymentsIn(admin, ns));
      t.deepEqual(rolledOtherThan(rolls, 1), [], 'every Deployment rolled exactly once for the one content change');
      const { byObject, overlaps } = await recordOf(ns);
      t.deepEqual(overlaps, [], 'no two shards wrote for one object at once');
      const takenOver = victimObjects.filter((object) =>
        (byObject.get(object) ?? []).some((write) => write.user !== victim.user && write.receivedMs >= victim.stoppedMs!),
      );
      t.log(`${victimObjects.length} objects of the killed shard, ${takenOver.length} written for by a survivor after the kill`);
      t.true(takenOver.length > 0, "the kill landed during the fan-out: survivors rolled some of the killed shard's objects");
    },
  );

  test.serial(
    `[${target}] scale 3 → 5 → 2 during edits of the shared ConfigMap: each change rolls every app and workload exactly once, nothing is lost, and no two shards write for one object at once`,
    async (t) => {
      const ns = 'shard-scale';
      const fleet = await convergedFleet(t, ns, ['g', 'h', 'i']);
      const before = await deploymentsIn(admin, ns);

      // Edits one after another for as long as the fleet changes: each waits until everything runs it (so that each
      // change is one rollout of every app, never coalesced with the next), while shards join and leave meanwhile.
      let edits = 0;
      let scaling = true;
      const editing = (async () => {
        while (scaling || edits < 3) {
          edits += 1;
          await editShared(admin, ns, String(edits + 1));
          await converged(admin, ns, 60_000);
        }
      })();
      // Its failure is reported where it is awaited, below.
      editing.catch(() => undefined);
      try {
        // Two shards join (3 → 5).
        for (const name of ['j', 'k']) await fleet.start(name);
        await fleet.settled();
        // Three leave with SIGTERM, each handing its objects over at once (5 → 2).
        const exits = await Promise.all(['g', 'h', 'j'].map((name) => fleet.stop(name, 'SIGTERM')));
        t.deepEqual(
          exits.map((exit) => exit.code),
          [0, 0, 0],
          'each stopped shard exits 0',
        );
        await fleet.settled();
      } finally {
        scaling = false;
      }
      await editing;
      t.log(`${edits} edits while the fleet went 3 → 5 → 2`);

      const rolls = rollsSince(before, await deploymentsIn(admin, ns));
      t.deepEqual(rolledOtherThan(rolls, edits), [], `every Deployment rolled exactly once per content change (${edits})`);
      const { overlaps, writers } = await recordOf(ns);
      t.deepEqual(overlaps, [], 'no two shards wrote for one object at once');
      const handedOver = [...writers.values()].filter((users) => users.size > 1).length;
      t.log(`${handedOver} of ${writers.size} objects were written for by more than one shard, one after the other`);
      t.true(handedOver > 0, 'objects changed hands while the fleet changed');
      let total = 0;
      for (const shard of fleet.running()) total += sumOf(await fleet.metrics(shard.name), 'customapp_shard_objects');
      t.is(total, APPS + WORKLOADS, 'the two shards left own every object once between them');
      // Every object reads the shared ConfigMap alone: a shard's subscriptions are one per object it owns, none for an
      // object it gave up on the way (the shards that stayed gave objects to those that joined).
      for (const shard of fleet.running()) {
        let counts = { owned: 0, subscribed: 0 };
        const holds = async (): Promise<boolean> => {
          const samples = await fleet.metrics(shard.name);
          counts = {
            owned: sumOf(samples, 'customapp_shard_objects'),
            subscribed: sumOf(samples, 'customapp_dependency_subscribers', { kind: 'ConfigMap' }),
          };
          return counts.owned === counts.subscribed;
        };
        await eventually(`${shard.name} holds the refs of the objects it owns, no more`, holds, 10_000, 250).catch(() => undefined);
        t.deepEqual(
          counts,
          { owned: counts.owned, subscribed: counts.owned },
          `${shard.name}: one ConfigMap subscription per object it owns`,
        );
      }
      const apps = await admin.list(CUSTOM_APPS, { namespace: ns });
      t.is(apps.items.length, APPS);
    },
  );
}
