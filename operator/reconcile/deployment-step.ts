// The Deployment step: create it, or update what the operator owns in it when that differs; never touch one not ours.
import { FIELD_MANAGER } from '../../infra/customapp-api.js';
import { isControlledBy } from '../customapp/labels.js';
import { ApiError, isAlreadyExists } from '../kube/errors.js';
import type { Deployment } from '../kube/objects.js';
import { DEPLOYMENTS } from '../kube/resources.js';
import { findCondition } from './conditions.js';
import { DEPLOYMENT_OPTIONAL_KEYS, type RolloutDependency } from './desired-deployment.js';
import { driftPaths, withDesired } from './drift.js';
import { notControlledMessage, REASONS, shortHash } from './reasons.js';
import { ownedFields, type ReconcileScope } from './scope.js';
import { annotationForEvent, desiredDuringMigration } from './secret-hash-migration.js';
import type { DependencyView, DeploymentView } from './status.js';

/** What the Deployment step saw and did. */
export interface DeploymentOutcome {
  readonly view: DeploymentView;
  /** The ConfigMap and Secret the Deployment now runs with; undefined when nothing was rolled out (held, not ours, invalid). */
  readonly rolledOut?: { readonly configMap?: RolloutDependency; readonly secret?: RolloutDependency };
}

/** True for 422 Invalid: the object was refused as it is. */
function isInvalid(error: unknown): boolean {
  return error instanceof ApiError && error.statusCode === 422;
}

/**
 * Creates the Deployment, or updates it when a field the operator sets differs (no write otherwise, so a restart or
 * a metadata-only edit rolls nothing). While the rollout is `held` (a missing ConfigMap or Secret) nothing is
 * written. A Deployment of that name not controlled by this CustomApp is never touched; one of ours that the cache
 * does not see (its labels were edited) is found by a GET after the AlreadyExists and relabelled by the update.
 */
export async function reconcileDeployment(
  scope: ReconcileScope,
  held: boolean,
  configMap: DependencyView,
  secret: DependencyView,
): Promise<DeploymentOutcome> {
  const { world, app } = scope;
  let live = world.deployments.get(scope.request.key);
  if (live && !isControlledBy(live, app)) return notOwned(scope);
  if (held) return { view: live ? { phase: 'owned', deployment: live } : { phase: 'absent' } };
  const rolledOut = {
    configMap: configMap.phase === 'present' ? { name: configMap.name, hash: configMap.hash } : undefined,
    secret: secret.phase === 'present' ? { name: secret.name, hash: secret.hash } : undefined,
  };
  const desired = desiredDuringMigration({ app, ...rolledOut }, secret.phase === 'present' ? secret : undefined, live);
  if (!live) {
    try {
      const created = await scope.write('create', DEPLOYMENTS, () =>
        world.client.create<Deployment>(DEPLOYMENTS, scope.namespace, desired, { fieldManager: FIELD_MANAGER }),
      );
      world.deployments.wrote(created, true);
      await scope.event(
        'Normal',
        REASONS.created,
        `Created Deployment "${scope.name}" (config ${shortHash(rolledOut.configMap?.hash)}, secret ${shortHash(rolledOut.secret?.hash)})`,
      );
      return { view: { phase: 'owned', deployment: created }, rolledOut };
    } catch (error) {
      if (isInvalid(error)) return rejected(scope, error);
      if (!isAlreadyExists(error)) throw error;
      live = await scope.uncached<Deployment>(DEPLOYMENTS, error);
      if (!isControlledBy(live, app)) return notOwned(scope);
      // Ours, but out of the informer's sight (its labels were edited): the update below restores them.
      world.deployments.wrote(live, true);
    }
  }
  const drift = driftPaths(live, ownedFields(desired), DEPLOYMENT_OPTIONAL_KEYS);
  if (drift.length === 0) return { view: { phase: 'owned', deployment: live }, rolledOut };
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
          withDesired(current, desired, DEPLOYMENT_OPTIONAL_KEYS),
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
  await scope.event(...updateEvent(scope.name, current, desired, drift));
  return { view: { phase: 'owned', deployment: updated }, rolledOut };
}

/** A `RolloutTriggered` Event naming the hashes and fields that moved when the pod template changed, else `Updated`. */
function updateEvent(name: string, live: Deployment, desired: Deployment, drift: readonly string[]): ['Normal', string, string] {
  if (!drift.some((path) => path.startsWith('spec.template.'))) {
    return ['Normal', REASONS.updated, `Updated Deployment "${name}": ${drift.join(', ')}`];
  }
  const before = live.spec.template.metadata?.annotations ?? {};
  const after = desired.spec.template.metadata?.annotations ?? {};
  const changes = Object.keys({ ...before, ...after })
    .filter((key) => before[key] !== after[key])
    .map((key) => `${key.split('/')[1]} ${annotationForEvent(key, before[key])}→${annotationForEvent(key, after[key])}`);
  const fields = drift
    .filter((path) => !path.startsWith('spec.template.metadata.annotations'))
    .map((path) => path.replace(/^spec\.template\.spec\./, ''));
  return ['Normal', REASONS.rolloutTriggered, `Rolling out Deployment "${name}": ${[...changes, ...fields].join(', ')}`];
}

/** A 422 Invalid: retrying cannot help until the spec changes (which queues the key again). One Event per message. */
async function rejected(scope: ReconcileScope, error: unknown): Promise<DeploymentOutcome> {
  const message = `the API server rejected Deployment "${scope.name}": ${(error as ApiError).status?.message ?? (error as Error).message}`;
  const previous = findCondition(scope.app.status?.conditions, 'DeploymentAvailable');
  if (previous?.reason !== REASONS.deploymentInvalid || previous.message !== message) {
    await scope.event('Warning', REASONS.deploymentInvalid, message);
  }
  return { view: { phase: 'invalid', message } };
}

/** A foreign Deployment of that name: left alone, reported by one Event when it begins (the condition remembers it). */
async function notOwned(scope: ReconcileScope): Promise<DeploymentOutcome> {
  const previous = findCondition(scope.app.status?.conditions, 'DeploymentAvailable');
  if (previous?.reason !== REASONS.deploymentNotOwned) {
    await scope.event('Warning', REASONS.deploymentNotOwned, notControlledMessage('Deployment', scope.name));
  }
  return { view: { phase: 'notOwned' } };
}
