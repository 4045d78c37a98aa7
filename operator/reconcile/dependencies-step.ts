// The dependency step: which ConfigMaps and Secrets the CustomApp acquires (its spec's, plus the old ones during a handoff), and what is known of them.
import type { CustomApp } from '../customapp/custom-app.js';
import { isControlledBy } from '../customapp/labels.js';
import type { DependencyKind, DependencyRef } from '../dependencies/source.js';
import type { Deployment } from '../kube/objects.js';
import { hashKey, parseHashKey } from '../podtemplate/hash-annotation.js';
import { runningWith } from './desired-deployment.js';
import { type ProjectedView, projectionRef, projections } from './projections.js';
import type { ReconcileScope } from './scope.js';
import type { DependencyView } from './status.js';

function ref(kind: DependencyKind, namespace: string, name: string): DependencyRef {
  return { kind, namespace, name };
}

/** The refs a CustomApp acquires: its spec's, and the ones `status.observed*` still runs with while a change is handed off. */
export interface AcquiredRefs {
  readonly spec: readonly DependencyRef[];
  /** Non-empty only during a handoff: released once the rollout with the new refs is recorded in status. */
  readonly handoff: readonly DependencyRef[];
}

/**
 * The refs to acquire for `app`: the seed fields' whole objects, and each listed object with its keys. What the pods still
 * run with comes from our Deployment when the cache has it (the truth, see `runningWith`), else from
 * `status.observed*`; a listed object the spec no longer lists stays acquired, whole, until the handoff completes.
 */
export function refsToAcquire(app: CustomApp, deployment: Deployment | undefined): AcquiredRefs {
  const namespace = app.metadata.namespace!;
  const { spec } = app;
  const running = deployment && isControlledBy(deployment, app) ? runningWith(deployment) : undefined;
  const status = running
    ? { observedConfigMapName: running.configMap?.name, observedSecretName: running.secret?.name }
    : (app.status ?? {});
  const listed = projections(app);
  const runningListed = running
    ? [...running.projected.keys()]
    : [
        ...(app.status?.observedConfigMaps ?? []).map(({ name }) => hashKey('ConfigMap', name)),
        ...(app.status?.observedSecrets ?? []).map(({ name }) => hashKey('Secret', name)),
      ];
  const stillListed = new Set(listed.map(({ kind, name }) => hashKey(kind, name)));
  return {
    spec: [
      ...(spec.configMapName ? [ref('ConfigMap', namespace, spec.configMapName)] : []),
      ...(spec.secretName ? [ref('Secret', namespace, spec.secretName)] : []),
      ...listed.map((projection) => projectionRef(namespace, projection)),
    ],
    handoff: [
      ...runningListed.flatMap((key) => {
        const parsed = stillListed.has(key) ? undefined : parseHashKey(key);
        return parsed ? [ref(parsed.kind, namespace, parsed.name)] : [];
      }),
      ...(status.observedConfigMapName && status.observedConfigMapName !== spec.configMapName
        ? [ref('ConfigMap', namespace, status.observedConfigMapName)]
        : []),
      ...(status.observedSecretName && status.observedSecretName !== spec.secretName
        ? [ref('Secret', namespace, status.observedSecretName)]
        : []),
    ],
  };
}

/** What is known of the referenced objects, or `pending` while one of them is not synced yet. */
export type DependencyViews =
  | { readonly configMap: DependencyView; readonly secret: DependencyView; readonly projected: readonly ProjectedView[] }
  | 'pending';

/**
 * Acquires the refs (level-based: exactly these) and reads their states. A ref not synced yet is `pending`: its first
 * `changes` emission queues the key again, so the reconcile ends without guessing.
 */
export async function acquireAndReadDependencies(scope: ReconcileScope, refs: AcquiredRefs): Promise<DependencyViews> {
  const { dependencies } = scope.world;
  dependencies.use(scope.request.key, [...refs.spec, ...refs.handoff]);
  const view = async (kind: DependencyKind, name: string | undefined): Promise<DependencyView | 'pending'> => {
    if (!name) return { phase: 'unreferenced' };
    const state = await dependencies.state(ref(kind, scope.namespace, name));
    if (!state) return 'pending';
    return state.exists ? { phase: 'present', name, hash: state.hash, unkeyedHash: state.unkeyedHash } : { phase: 'missing', name };
  };
  const configMap = await view('ConfigMap', scope.app.spec.configMapName);
  const secret = await view('Secret', scope.app.spec.secretName);
  const projected: ProjectedView[] = [];
  for (const projection of projections(scope.app)) {
    const state = await dependencies.state(projectionRef(scope.namespace, projection));
    if (!state) return 'pending';
    if (!state.exists) {
      projected.push({ ...projection, phase: 'missing' });
      continue;
    }
    const keyDigests = projection.keys && (await listedDigests(scope, projection.kind, projection.name, projection.keys));
    projected.push({
      ...projection,
      phase: 'present',
      hash: state.hash,
      ...(state.missingKeys ? { missingKeys: state.missingKeys } : {}),
      ...(keyDigests ? { keyDigests } : {}),
    });
  }
  return configMap === 'pending' || secret === 'pending' ? 'pending' : { configMap, secret, projected };
}

/**
 * The digests of `keys` from the whole object's state (the registry keeps one digest per key of every object it
 * follows, whichever refs acquired it), to name the keys a change touched; undefined from a source that keeps none.
 */
async function listedDigests(
  scope: ReconcileScope,
  kind: DependencyKind,
  name: string,
  keys: readonly string[],
): Promise<ReadonlyMap<string, string> | undefined> {
  const whole = await scope.world.dependencies.state(ref(kind, scope.namespace, name));
  const digests = whole?.exists ? whole.keyDigests : undefined;
  return digests && new Map(keys.flatMap((key) => (digests.has(key) ? [[key, digests.get(key)!] as const] : [])));
}

/** Ends a handoff: the CustomApp keeps its spec's refs alone, and the old ones are released. */
export function completeHandoff(scope: ReconcileScope, refs: AcquiredRefs): void {
  if (refs.handoff.length === 0) return;
  scope.world.dependencies.use(scope.request.key, refs.spec);
  scope.request.log.info({ released: refs.handoff.map((handed) => `${handed.kind}/${handed.name}`) }, 'handoff complete');
}
