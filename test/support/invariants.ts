// The invariants every operator scenario ends with: watches equal references, no leak, no stuck finalizer.
import type { ExecutionContext } from 'ava';
import { FINALIZER, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { refKey } from '../../operator/dependencies/source.js';
import type { KubeClient } from '../../operator/kube/client.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { Operator } from '../../operator/operator.js';
import type { TestCluster } from './targets.js';
import { eventually } from './operator-harness.js';
import { reloadSpec } from '../../operator/workload/reload-annotations.js';
import { WORKLOAD_RESOURCES, type Workload, type WorkloadKind, workloadKey } from '../../operator/workload/workload.js';

/**
 * The refs the CustomApps in the cluster reference (spec only: after convergence no handoff is pending), and those
 * the workloads of the kinds the operator serves select by annotation, with their owners.
 */
async function referencedRefs(admin: KubeClient, operator: Operator): Promise<Map<string, Set<string>>> {
  const apps = await admin.list<CustomApp>(CUSTOM_APPS);
  const refs = new Map<string, Set<string>>();
  for (const kind of Object.keys(operator.workloads?.informers ?? {}) as WorkloadKind[]) {
    for (const workload of (await admin.list<Workload>(WORKLOAD_RESOURCES[kind])).items) {
      const { namespace, name } = workload.metadata;
      for (const ref of reloadSpec(workload.metadata.annotations, workload.spec.template).refs) {
        const key = refKey({ kind: ref.kind, namespace: namespace!, name: ref.name });
        refs.set(key, (refs.get(key) ?? new Set()).add(workloadKey(kind, namespace!, name!)));
      }
    }
  }
  for (const app of apps.items) {
    if (app.metadata.deletionTimestamp) continue;
    const { namespace, name } = app.metadata;
    const owner = `${namespace}/${name}`;
    for (const [kind, refName] of [
      ['ConfigMap', app.spec.configMapName],
      ['Secret', app.spec.secretName],
    ] as const) {
      if (!refName) continue;
      const key = refKey({ kind, namespace: namespace!, name: refName });
      refs.set(key, (refs.get(key) ?? new Set()).add(owner));
    }
  }
  return refs;
}

function describeSets(a: Iterable<string>, b: Iterable<string>): string {
  return `[${[...a].sort().join(', ')}] vs [${[...b].sort().join(', ')}]`;
}

/**
 * Checks, waiting up to `timeoutMs` for convergence:
 * - no CustomApp is stuck with a deletionTimestamp (its finalizer ran);
 * - the dependency source watches exactly the refs that CustomApps reference (and the served workloads select), and
 *   each ref is acquired by exactly the CustomApps (and workloads) that reference it;
 * - with the default registry: every watched ref is served by a physical stream (per object, or its namespace's),
 *   no stream serves nothing, and, on the emulator, the server's open ConfigMap and Secret watches of the
 *   operator's ServiceAccount equal the registry's streams.
 */
export async function assertInvariants(
  t: ExecutionContext,
  cluster: TestCluster,
  operator: Operator,
  admin: KubeClient,
  options: { timeoutMs?: number } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const stuck = await eventually(
    'no CustomApp stuck with a finalizer',
    async () => {
      const apps = await admin.list<CustomApp>(CUSTOM_APPS);
      const deleting = apps.items.filter((app) => app.metadata.deletionTimestamp && app.metadata.finalizers?.includes(FINALIZER));
      return deleting.length === 0 ? [] : false;
    },
    timeoutMs,
  ).catch((error: Error) => error.message);
  t.deepEqual(stuck, [], 'no CustomApp is stuck with the finalizer');

  const mismatch = await eventually(
    'watches equal references',
    async () => {
      const wanted = await referencedRefs(admin, operator);
      const watched = new Set(operator.dependencies.watched().map(refKey));
      const acquired = operator.dependencies.owners();
      const sameRefs = watched.size === wanted.size && [...wanted.keys()].every((key) => watched.has(key));
      const sameOwners =
        sameRefs &&
        [...wanted].every(([key, owners]) => {
          const acquiredBy = acquired.get(key) ?? new Set();
          return acquiredBy.size === owners.size && [...owners].every((owner) => acquiredBy.has(owner));
        });
      return sameRefs && sameOwners ? '' : false;
    },
    timeoutMs,
  ).catch(async () => {
    const wanted = await referencedRefs(admin, operator);
    return `watched vs referenced: ${describeSets(operator.dependencies.watched().map(refKey), wanted.keys())}`;
  });
  t.is(mismatch, '', 'the active watches are exactly the referenced objects, acquired by exactly their CustomApps');

  const registry = operator.registry;
  if (!registry) return;
  const streams = registry.streams();
  const watched = operator.dependencies.watched();
  const uncovered = watched.filter(
    (ref) =>
      !streams.some(
        (stream) =>
          stream.kind === ref.kind && stream.namespace === ref.namespace && (stream.scope === 'namespace' || stream.name === ref.name),
      ),
  );
  t.deepEqual(uncovered.map(refKey), [], 'every watched ref is served by a physical stream');
  const idle = streams.filter(
    (stream) =>
      !watched.some(
        (ref) =>
          ref.kind === stream.kind && ref.namespace === stream.namespace && (stream.scope === 'namespace' || stream.name === ref.name),
      ),
  );
  t.deepEqual(idle, [], 'no physical stream serves nothing');
  const emulator = cluster.emulator;
  if (emulator) {
    const user = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_NAME}`;
    const count = (resource: string): number => emulator.counters.openWatchCount({ resource, user });
    const serverSide = await eventually(
      'open watches agree',
      () => {
        const open = count('configmaps') + count('secrets');
        return open === registry.streams().length ? open : false;
      },
      timeoutMs,
    ).catch(() => count('configmaps') + count('secrets'));
    t.is(serverSide, registry.streams().length, "the emulator's open ConfigMap and Secret watches equal the registry's streams");
  }
}
