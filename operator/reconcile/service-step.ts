// The Service step: create, update or delete the Service that `spec.port` asks for; never touch one not ours.
import { FIELD_MANAGER } from '../../api/customapp.js';
import { isControlledBy } from '../customapp/labels.js';
import { isAlreadyExists, isNotFound } from '../kube/errors.js';
import type { Service } from '../kube/objects.js';
import { SERVICES } from '../kube/resources.js';
import { findCondition } from './conditions.js';
import { desiredService, serviceNameProblem } from './desired-service.js';
import { driftPaths, withDesired } from './drift.js';
import { notControlledMessage, REASONS } from './reasons.js';
import { ownedFields, type ReconcileScope } from './scope.js';
import type { ServiceView } from './status.js';

/**
 * Creates, updates or deletes the Service, and answers what became of it. A name that cannot carry a Service, and a
 * Service of that name that this CustomApp does not control, are each reported by one Event when they begin (the
 * `ServiceAvailable` condition remembers them), not at every reconcile.
 */
export async function reconcileService(scope: ReconcileScope): Promise<ServiceView> {
  const { world, app, name } = scope;
  const previous = findCondition(app.status?.conditions, 'ServiceAvailable');
  const problem = app.spec.port ? serviceNameProblem(name) : undefined;
  if (problem) {
    if (previous?.reason !== REASONS.serviceNameInvalid) scope.event('Warning', REASONS.serviceNameInvalid, problem);
    return { phase: 'invalidName', message: problem };
  }
  const notOwned = async (): Promise<ServiceView> => {
    if (previous?.reason !== REASONS.serviceNotOwned)
      scope.event('Warning', REASONS.serviceNotOwned, notControlledMessage('Service', name));
    return { phase: 'notOwned' };
  };
  const desired = desiredService(app);
  let live = world.services.get(scope.request.key);
  if (live && !isControlledBy(live, app)) return desired ? notOwned() : { phase: 'unrequested' };
  if (!desired) {
    if (live) await deleteService(scope, live);
    return { phase: 'unrequested' };
  }
  if (!live) {
    try {
      const created = await scope.write('create', SERVICES, () =>
        world.client.create<Service>(SERVICES, scope.namespace, desired, { fieldManager: FIELD_MANAGER }),
      );
      world.services.wrote(created, true);
      if (scope.hadStatus) scope.event('Normal', REASONS.created, `Created Service "${name}" (port ${app.spec.port})`);
      return { phase: 'owned' };
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      live = await scope.uncached<Service>(SERVICES, error);
      if (!isControlledBy(live, app)) return notOwned();
      world.services.learned(live, true);
    }
  }
  const drift = driftPaths(live, ownedFields(desired));
  if (drift.length > 0) {
    const current = live;
    const updated = await scope.write(
      'update',
      SERVICES,
      () => world.client.replace<Service>(SERVICES, scope.namespace, name, withDesired(current, desired), { fieldManager: FIELD_MANAGER }),
      { drift },
    );
    world.services.wrote(updated);
    scope.event('Normal', REASONS.updated, `Updated Service "${name}": ${drift.join(', ')}`);
  }
  return { phase: 'owned' };
}

/** Deletes our Service once `spec.port` is unset (by its uid: never a Service of the same name made since). */
async function deleteService(scope: ReconcileScope, live: Service): Promise<void> {
  try {
    await scope.write('delete', SERVICES, () =>
      scope.world.client.delete(SERVICES, scope.namespace, scope.name, { preconditions: { uid: live.metadata.uid } }),
    );
  } catch (error) {
    // Already gone: the cache had not seen the deletion yet.
    if (isNotFound(error)) return;
    throw error;
  }
  scope.world.services.forget(scope.request.key);
  scope.event('Normal', REASONS.deleted, `Deleted Service "${scope.name}": spec.port is no longer set`);
}
