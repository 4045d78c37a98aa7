// The finalizer step: added before anything is acquired, removed after the dependencies are released.
import { FIELD_MANAGER, FINALIZER } from '../../api/customapp.js';
import { CUSTOM_APPS, type CustomApp, updateBody } from '../customapp/custom-app.js';
import { isNotFound } from '../kube/errors.js';
import type { ReconcileScope } from './scope.js';

/** An update of `metadata.finalizers` (see {@link updateBody}), guarded by the resourceVersion the reconcile read (a 409 when stale). */
async function writeFinalizers(scope: ReconcileScope, finalizers: readonly string[], step: 'add' | 'remove'): Promise<CustomApp> {
  const { app } = scope;
  const updated = await scope.write(
    'update',
    CUSTOM_APPS,
    () =>
      scope.world.client.replace<CustomApp>(CUSTOM_APPS, scope.namespace, scope.name, updateBody(app, { ...app.metadata, finalizers }), {
        fieldManager: FIELD_MANAGER,
      }),
    { finalizer: step },
  );
  scope.world.apps.wrote(updated);
  return updated;
}

/** Adds the finalizer when it is missing; the scope's CustomApp is then the patched one. */
export async function ensureFinalizer(scope: ReconcileScope): Promise<void> {
  if (scope.app.metadata.finalizers?.includes(FINALIZER)) return;
  scope.app = await writeFinalizers(scope, [...(scope.app.metadata.finalizers ?? []), FINALIZER], 'add');
}

/**
 * The deletion: release the dependencies first, then remove the finalizer (a CustomApp already gone is fine). The
 * Deployment and Service go by garbage collection, through their controller ownerReference.
 */
export async function finalize(scope: ReconcileScope): Promise<void> {
  const { app, world } = scope;
  world.dependencies.release(scope.request.key);
  if (!app.metadata.finalizers?.includes(FINALIZER)) return;
  try {
    await writeFinalizers(
      scope,
      app.metadata.finalizers.filter((finalizer) => finalizer !== FINALIZER),
      'remove',
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  if (app.metadata.uid) world.recorder.forget(app.metadata.uid);
  scope.request.log.info('finalized: dependencies released, finalizer removed');
}
