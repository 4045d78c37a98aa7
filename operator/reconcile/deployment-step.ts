// The Deployment step: create it, or update what the operator owns in it when that differs; never touch one not ours.
import { FIELD_MANAGER, KEY_DIGESTS_ANNOTATION, ROLLOUT_ANNOTATION } from '../../api/customapp.js';
import { TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import { decodeHashes } from '../podtemplate/hash-annotation.js';
import { isControlledBy } from '../customapp/labels.js';
import { ApiError, isAlreadyExists } from '../kube/errors.js';
import type { Deployment } from '../kube/objects.js';
import { DEPLOYMENTS } from '../kube/resources.js';
import { findCondition } from './conditions.js';
import { type ContentChange, encodeRolloutCause, type RolloutCause } from '../governance/rollout-cause.js';
import {
  DEPLOYMENT_OPTIONAL_KEYS,
  desiredDeployment,
  type ProjectedDependency,
  type RolloutDependency,
  type RunningWith,
  runningWith,
} from './desired-deployment.js';
import { driftPaths, withDesired } from './drift.js';
import { notControlledMessage, REASONS, shortHash } from './reasons.js';
import { ownedFields, type ReconcileScope } from './scope.js';
import { gateRollout } from './rollout-step.js';
import { annotationForEvent, secretHashAnnotation } from './secret-hash-migration.js';
import { isUnkeyedHash } from '../dependencies/keyed-hash.js';
import type { WaitingRollout } from './rollout-status.js';
import type { DependencyView, DeploymentView } from './status.js';
import { changedKeys, decodeKeyDigests, type ProjectedView, projectionKey } from './projections.js';

/** What the Deployment step saw and did. */
export interface DeploymentOutcome {
  readonly view: DeploymentView;
  /** The ConfigMap and Secret the Deployment now runs with; undefined when nothing was rolled out (waiting for a reference or for the governance, not ours, invalid). */
  readonly rolledOut?: {
    readonly configMap?: RolloutDependency;
    readonly secret?: RolloutDependency;
    readonly projected: readonly ProjectedDependency[];
  };
  /** A rollout caused by ConfigMap or Secret content that the governance keeps waiting, and why. */
  readonly waiting?: WaitingRollout;
  /** True when this step updated an existing Deployment. */
  readonly updated?: boolean;
}

/** True for 422 Invalid: the object was refused as it is. */
function isInvalid(error: unknown): boolean {
  return error instanceof ApiError && error.statusCode === 422;
}

/** What the step will write: the desired Deployment, and the rollout it starts (if its pod template changes). */
interface Plan {
  readonly desired: Deployment;
  /** `desired`'s drift from the live Deployment, when planning computed it already. */
  readonly drift?: readonly string[];
  readonly rolledOut?: DeploymentOutcome['rolledOut'];
  readonly waiting?: WaitingRollout;
}

/**
 * Creates the Deployment, or updates it when a field the operator sets differs (no write otherwise, so a restart or
 * a metadata-only edit rolls nothing). While the rollout `waitsForRefs` (a missing ConfigMap or Secret) nothing is
 * written. A Deployment of that name not controlled by this CustomApp is never touched; one of ours that the cache
 * does not see (its labels were edited) is found by a GET after the AlreadyExists and relabelled by the update.
 *
 * A pod-template change is a rollout, recorded with its cause in the Deployment's `app.example.com/rollout`
 * annotation in the same write. A change of the spec (or of a field of ours edited on the Deployment) rolls at once,
 * with the latest content. New ConfigMap or Secret content alone asks the governance first (`rollout-step.ts`); while
 * it waits the Deployment keeps the content it runs with, and only the spec's other fields (replicas) are written.
 */
export async function reconcileDeployment(
  scope: ReconcileScope,
  waitsForRefs: boolean,
  configMap: DependencyView,
  secret: DependencyView,
  projected: readonly ProjectedView[] = [],
): Promise<DeploymentOutcome> {
  const { world, app } = scope;
  let live = world.deployments.get(scope.request.key);
  if (live && !isControlledBy(live, app)) return notOwned(scope);
  if (waitsForRefs) return { view: live ? { phase: 'owned', deployment: live } : { phase: 'absent' } };
  const latest = {
    configMap: configMap.phase === 'present' ? { name: configMap.name, hash: configMap.hash } : undefined,
    secret: secret.phase === 'present' ? { name: secret.name, hash: secret.hash } : undefined,
    projected: projected.map(projectedDependency),
  };
  if (!live) {
    // The API server gives a new object generation 1.
    const desired = desiredDeployment({ app, ...latest, rolloutCause: encodeRolloutCause(specCause(scope, [], 1)) });
    try {
      const created = await scope.write('create', DEPLOYMENTS, () =>
        world.client.create<Deployment>(DEPLOYMENTS, scope.namespace, desired, { fieldManager: FIELD_MANAGER }),
      );
      world.deployments.wrote(created, true);
      if (scope.hadStatus) {
        scope.event(
          'Normal',
          REASONS.created,
          `Created Deployment "${scope.name}" (config ${shortHash(latest.configMap?.hash)}, secret ${shortHash(latest.secret?.hash)})`,
        );
      }
      return { view: { phase: 'owned', deployment: created }, rolledOut: latest };
    } catch (error) {
      if (isInvalid(error)) return rejected(scope, error);
      if (!isAlreadyExists(error)) throw error;
      live = await scope.uncached<Deployment>(DEPLOYMENTS, error);
      if (!isControlledBy(live, app)) return notOwned(scope);
      // Ours, but out of the informer's sight (its labels were edited): the update below restores them.
      world.deployments.learned(live, true);
    }
  }
  const plan = planUpdate(scope, live, latest, secret.phase === 'present' ? secret : undefined);
  const drift = plan.drift ?? driftPaths(live, ownedFields(plan.desired), DEPLOYMENT_OPTIONAL_KEYS);
  if (drift.length === 0) return { view: { phase: 'owned', deployment: live }, rolledOut: plan.rolledOut, waiting: plan.waiting };
  const current = live;
  let updated: Deployment;
  try {
    updated = await scope.write(
      'update',
      DEPLOYMENTS,
      () =>
        world.client.replace<Deployment>(
          DEPLOYMENTS,
          scope.namespace,
          scope.name,
          withDesired(current, plan.desired, DEPLOYMENT_OPTIONAL_KEYS),
          {
            fieldManager: FIELD_MANAGER,
          },
        ),
      { drift },
    );
  } catch (error) {
    if (isInvalid(error)) return rejected(scope, error);
    throw error;
  }
  world.deployments.wrote(updated);
  scope.event(...updateEvent(scope.name, current, plan.desired, drift));
  return { view: { phase: 'owned', deployment: updated }, rolledOut: plan.rolledOut, waiting: plan.waiting, updated: true };
}

/** A listed object as the pods get it: its hash, or null for an optional one that is missing (they start without it). */
function projectedDependency(view: ProjectedView): ProjectedDependency {
  const { kind, name, mountPath, keys, optional } = view;
  return {
    kind,
    name,
    ...(mountPath ? { mountPath } : {}),
    ...(keys ? { keys } : {}),
    optional,
    hash: view.phase === 'present' ? view.hash : null,
    ...(view.phase === 'present' && view.keyDigests ? { keyDigests: view.keyDigests } : {}),
  };
}

/** A rollout caused by the spec (or the creation), with the content changes it carries along. */
function specCause(scope: ReconcileScope, changes: readonly ContentChange[], templateGeneration: number | undefined): RolloutCause {
  return {
    trigger: 'Spec',
    changes,
    generation: scope.app.metadata.generation,
    templateGeneration,
    start: scope.world.now().toISOString(),
  };
}

/**
 * The generation the update of `live` will make: one more than `live`'s. The update carries `live`'s resourceVersion
 * (`withDesired` keeps it), so the API server applies it to exactly that object or refuses it (409).
 */
function nextGeneration(live: Deployment): number | undefined {
  return live.metadata.generation === undefined ? undefined : live.metadata.generation + 1;
}

/**
 * What to write over `live`: the spec with the content the pods run with decides whether the spec changed the pod
 * template (a spec rollout, with the latest content too); if it did not and only content is new, the governance
 * decides between rolling that content now and keeping the running content.
 *
 * The upgrade from unkeyed Secret hashes (`secret-hash-migration.ts`) is no content change: a live annotation that an
 * older operator wrote and that still describes the Secret counts as the Secret's hash, so it stays until the pod
 * template changes for another reason, which then writes the keyed one.
 */
function planUpdate(
  scope: ReconcileScope,
  live: Deployment,
  latest: NonNullable<DeploymentOutcome['rolledOut']>,
  secret: { readonly hash: string; readonly unkeyedHash?: string } | undefined,
): Plan {
  const { app } = scope;
  const running = runningWith(live);
  const current = {
    configMap: latest.configMap,
    secret: latest.secret && secret ? { ...latest.secret, hash: secretHashAnnotation(secret, live) } : latest.secret,
    projected: latest.projected,
  };
  const changes = contentChanges(running, current);
  const kept = {
    configMap: current.configMap && running.configMap?.name === current.configMap.name ? running.configMap : current.configMap,
    secret: current.secret && running.secret?.name === current.secret.name ? running.secret : current.secret,
    projected: current.projected.map((each) => {
      const key = projectionKey(each);
      const before = running.projected.get(key);
      if (before === undefined) return each;
      const { keyDigests: _latest, ...kept } = each;
      const digests = running.keyDigests.get(key);
      return { ...kept, hash: before, ...(digests ? { keyDigests: digests } : {}) };
    }),
  };
  const specOnly = desiredDeployment({ app, ...kept });
  const specDrift = driftPaths(live, ownedFields(specOnly), DEPLOYMENT_OPTIONAL_KEYS);
  const specRollout = specDrift.some((path) => path.startsWith('spec.template.'));
  if (specRollout) {
    return {
      desired: desiredDeployment({ app, ...latest, rolloutCause: encodeRolloutCause(specCause(scope, changes, nextGeneration(live))) }),
      rolledOut: latest,
    };
  }
  if (changes.length === 0) return { desired: specOnly, drift: specDrift, rolledOut: latest };
  const gate = gateRollout(scope, live, changes);
  if (gate.verdict === 'wait') return { desired: specOnly, drift: specDrift, waiting: { gate, changes } };
  const cause: RolloutCause = {
    trigger: changes[0]!.kind,
    changes,
    generation: app.metadata.generation,
    templateGeneration: nextGeneration(live),
    start: scope.world.now().toISOString(),
  };
  return { desired: desiredDeployment({ app, ...latest, rolloutCause: encodeRolloutCause(cause) }), rolledOut: latest };
}

/**
 * The referenced objects whose content differs from what the pods run with (same name: a new name is a spec change).
 * An unkeyed Secret hash the pods ran with (an older operator's plain SHA-256) is left out of the change: the status,
 * the Events and the cause annotation never carry a plain hash.
 */
function contentChanges(running: RunningWith, latest: NonNullable<DeploymentOutcome['rolledOut']>): ContentChange[] {
  const changes: ContentChange[] = [];
  for (const [kind, now, before] of [
    ['ConfigMap', latest.configMap, running.configMap],
    ['Secret', latest.secret, running.secret],
  ] as const) {
    if (now && before && now.name === before.name && now.hash !== before.hash) {
      changes.push({
        kind,
        name: now.name,
        ...(kind === 'Secret' && isUnkeyedHash(before.hash) ? {} : { from: before.hash }),
        to: now.hash,
      });
    }
  }
  // A listed object: new content of what the pods run with. An optional object gone rolls nothing (the pods run on
  // without it); its return, or any later content, does.
  for (const now of latest.projected) {
    const key = projectionKey(now);
    const before = running.projected.get(key);
    if (before === undefined || now.hash === null || now.hash === before) continue;
    const keys = changedKeys(now.keys, running.keyDigests.get(key), now.keyDigests);
    changes.push({ kind: now.kind, name: now.name, ...(before === null ? {} : { from: before }), to: now.hash, ...(keys ? { keys } : {}) });
  }
  return changes;
}

/** A `RolloutTriggered` Event naming the hashes and fields that moved when the pod template changed, else `Updated`. */
function updateEvent(name: string, live: Deployment, desired: Deployment, drift: readonly string[]): ['Normal', string, string] {
  if (!drift.some((path) => path.startsWith('spec.template.'))) {
    return ['Normal', REASONS.updated, `Updated Deployment "${name}": ${drift.join(', ')}`];
  }
  const before = live.spec.template.metadata?.annotations ?? {};
  const after = desired.spec.template.metadata?.annotations ?? {};
  const changes = Object.keys({ ...before, ...after })
    .filter((key) => before[key] !== after[key] && key !== KEY_DIGESTS_ANNOTATION)
    .flatMap((key) =>
      key === TEMPLATE_HASHES_ANNOTATION
        ? listedChanges(before, after)
        : [`${key.split('/')[1]} ${annotationForEvent(key, before[key])}→${annotationForEvent(key, after[key])}`],
    );
  const fields = drift
    .filter((path) => !path.startsWith('spec.template.metadata.annotations') && path !== `metadata.annotations.${ROLLOUT_ANNOTATION}`)
    .map((path) => path.replace(/^spec\.template\.spec\./, ''));
  return ['Normal', REASONS.rolloutTriggered, `Rolling out Deployment "${name}": ${[...changes, ...fields].join(', ')}`];
}

/**
 * Each listed object whose hash moved between two pod templates' annotations, with the keys that changed when it is
 * read by keys: `ConfigMap/files (key app.yaml) 1a2b…→3c4d…`.
 */
function listedChanges(before: Record<string, string>, after: Record<string, string>): string[] {
  const was = decodeHashes(before[TEMPLATE_HASHES_ANNOTATION]) ?? new Map<string, string | null>();
  const is = decodeHashes(after[TEMPLATE_HASHES_ANNOTATION]) ?? new Map<string, string | null>();
  const digestsWere = decodeKeyDigests(before[KEY_DIGESTS_ANNOTATION]);
  const digestsAre = decodeKeyDigests(after[KEY_DIGESTS_ANNOTATION]);
  return [...new Set([...was.keys(), ...is.keys()])]
    .filter((object) => was.get(object) !== is.get(object))
    .map((object) => {
      const listed = [...new Set([...(digestsWere.get(object)?.keys() ?? []), ...(digestsAre.get(object)?.keys() ?? [])])];
      const keys = changedKeys(listed, digestsWere.get(object), digestsAre.get(object));
      const named = keys ? ` (key${keys.length > 1 ? 's' : ''} ${keys.join(', ')})` : '';
      return `${object}${named} ${shortHash(was.get(object) ?? undefined)}→${shortHash(is.get(object) ?? undefined)}`;
    });
}

/** A 422 Invalid: retrying cannot help until the spec changes (which queues the key again). One Event per message. */
async function rejected(scope: ReconcileScope, error: unknown): Promise<DeploymentOutcome> {
  const message = `the API server rejected Deployment "${scope.name}": ${(error as ApiError).status?.message ?? (error as Error).message}`;
  const previous = findCondition(scope.app.status?.conditions, 'DeploymentAvailable');
  if (previous?.reason !== REASONS.deploymentInvalid || previous.message !== message) {
    scope.event('Warning', REASONS.deploymentInvalid, message);
  }
  return { view: { phase: 'invalid', message } };
}

/** A foreign Deployment of that name: left alone, reported by one Event when it begins (the condition remembers it). */
async function notOwned(scope: ReconcileScope): Promise<DeploymentOutcome> {
  const previous = findCondition(scope.app.status?.conditions, 'DeploymentAvailable');
  if (previous?.reason !== REASONS.deploymentNotOwned) {
    scope.event('Warning', REASONS.deploymentNotOwned, notControlledMessage('Deployment', scope.name));
  }
  return { view: { phase: 'notOwned' } };
}
