// The status step: write the status when it changed (guarded by resourceVersion), and say why a reconcile keeps failing.
import { FIELD_MANAGER } from '../../api/customapp.js';
import { CUSTOM_APPS, type CustomApp, updateBody } from '../customapp/custom-app.js';
import type { CustomAppStatus } from '../../api/customapp-status.js';
import { ApiError, isNotFound } from '../kube/errors.js';
import { findCondition } from './conditions.js';
import { REASONS } from './reasons.js';
import type { ReconcileScope } from './scope.js';
import { failedStatus, sameStatus } from './status.js';

/**
 * Writes `next` when it says something the CustomApp's status does not: an update of the status subresource, which
 * replaces the whole status (absent fields are removed). It carries the resourceVersion the status was computed from,
 * so a writer that read a stale CustomApp (an old leader's last reconcile, a lagging cache) gets a 409 instead of
 * overwriting a newer status. A CustomApp deleted meanwhile is fine: its finalizer run follows from the watch.
 */
export async function writeStatus(scope: ReconcileScope, next: CustomAppStatus): Promise<void> {
  const { app, world } = scope;
  if (sameStatus(app.status, next)) return;
  try {
    const updated = await scope.write(
      'update',
      CUSTOM_APPS,
      () =>
        world.client.replace<CustomApp>(CUSTOM_APPS, scope.namespace, scope.name, updateBody(app, app.metadata, next), {
          subresource: 'status',
          fieldManager: FIELD_MANAGER,
        }),
      { subresource: 'status' },
    );
    world.apps.wrote(updated);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/**
 * Says in the status (Ready=False, ReconcileError) and in one Event why a child write keeps failing, so a CustomApp
 * whose Service or Deployment cannot be written is never silent. A 409 is left to the requeue (the next try reads a
 * fresher cache). Best effort: a failure here is logged, and the original error is what the queue retries.
 */
export async function reportFailure(scope: ReconcileScope, error: unknown): Promise<void> {
  if (error instanceof ApiError && error.statusCode === 409) return;
  const { app } = scope;
  const message = `writing the children failed and is retried: ${error instanceof ApiError ? (error.status?.message ?? error.message) : (error as Error).message}`;
  if (findCondition(app.status?.conditions, 'Ready')?.message === message) return;
  try {
    scope.event('Warning', REASONS.reconcileError, message);
    await writeStatus(scope, failedStatus(app, message, scope.timestamp()));
  } catch (reportError) {
    scope.request.log.warn({ failed: (reportError as Error).message }, 'could not report the reconcile error in status');
  }
}
