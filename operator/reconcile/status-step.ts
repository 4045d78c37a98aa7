// The status step: write the status when it changed (guarded by resourceVersion), and say why a reconcile keeps failing.
import { FIELD_MANAGER } from '../../api/customapp.js';
import { CUSTOM_APPS, type CustomApp } from '../customapp/custom-app.js';
import { type CustomAppStatus, STATUS_FIELDS } from '../../api/customapp-status.js';
import { ApiError, isNotFound } from '../kube/errors.js';
import { findCondition } from './conditions.js';
import { isPlainObject } from './drift.js';
import { REASONS } from './reasons.js';
import type { ReconcileScope } from './scope.js';
import { failedStatus, sameStatus } from './status.js';

/**
 * Writes `next` when it says something the CustomApp's status does not. A merge patch of the whole status: absent
 * fields (at any depth) are sent as null so that they are removed. It carries the resourceVersion the status was computed from, so
 * a writer that read a stale CustomApp (an old leader's last reconcile, a lagging cache) gets a 409 instead of
 * overwriting a newer status. A CustomApp deleted meanwhile is fine: its finalizer run follows from the watch.
 */
export async function writeStatus(scope: ReconcileScope, next: CustomAppStatus): Promise<void> {
  const { app, world } = scope;
  if (sameStatus(app.status, next)) return;
  const previous = (app.status ?? {}) as Record<string, unknown>;
  const patch = Object.fromEntries(STATUS_FIELDS.map((field) => [field, mergeValue(previous[field], next[field])]));
  try {
    const updated = await scope.write(
      'patch',
      CUSTOM_APPS,
      () =>
        world.client.patch<CustomApp>(
          CUSTOM_APPS,
          scope.namespace,
          scope.name,
          'merge',
          { metadata: { resourceVersion: app.metadata.resourceVersion }, status: patch },
          { subresource: 'status', fieldManager: FIELD_MANAGER },
        ),
      { subresource: 'status' },
    );
    world.apps.wrote(updated);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/**
 * `next` as a JSON merge patch over `previous` (RFC 7386): absent means null (removed), and within an object (such as
 * `lastRollout`) a key `previous` had and `next` lacks is sent as null too, or the merge would keep it (a new rollout
 * would inherit the last one's completionTime). Arrays and scalars replace.
 */
function mergeValue(previous: unknown, next: unknown): unknown {
  if (next === undefined) return null;
  if (!isPlainObject(next) || !isPlainObject(previous)) return next;
  const merged: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(previous), ...Object.keys(next)])) merged[key] = mergeValue(previous[key], next[key]);
  return merged;
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
