// The options of a write (dryRun, fieldManager, fieldValidation, force) and of a delete, read from the request.
import type { IncomingMessage } from 'node:http';
import type { DeleteOptions, WriteContext } from '../api.js';
import type { UserInfo } from '../authz.js';
import { badRequest } from '../errors.js';
import { parseFieldValidation } from '../fieldvalidation.js';
import { isObject } from '../object.js';
import type { ServerDeps } from './deps.js';

/** Go's %v of a DeleteOptions field given as a query parameter. */
export function deleteOptionsFrom(query: URLSearchParams, body: unknown): DeleteOptions {
  const fromBody = isObject(body) ? body : {};
  const preconditions = isObject(fromBody.preconditions) ? fromBody.preconditions : {};
  const grace = query.get('gracePeriodSeconds') ?? fromBody.gracePeriodSeconds;
  return {
    propagationPolicy: query.get('propagationPolicy') ?? (fromBody.propagationPolicy as string | undefined),
    orphanDependents: query.has('orphanDependents')
      ? query.get('orphanDependents') === 'true'
      : (fromBody.orphanDependents as boolean | undefined),
    gracePeriodSeconds: grace === undefined || grace === null ? undefined : Number(grace),
    dryRun: query.getAll('dryRun').includes('All') || (Array.isArray(fromBody.dryRun) && fromBody.dryRun.includes('All')),
    preconditions: { uid: preconditions.uid as string | undefined, resourceVersion: preconditions.resourceVersion as string | undefined },
  };
}

export function writeContext(
  deps: ServerDeps,
  req: IncomingMessage,
  query: URLSearchParams,
  user: UserInfo,
): WriteContext & { force: boolean } {
  const dryRun = query.getAll('dryRun');
  for (const d of dryRun) if (d !== 'All') throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(d)}: supported values: "All"`);
  const fieldManager = query.get('fieldManager') ?? undefined;
  if (fieldManager !== undefined && fieldManager.length > 128) throw badRequest('fieldManager: Too long: may not be more than 128 bytes');
  return {
    user,
    userAgent: req.headers['user-agent'],
    fieldManager,
    dryRun: dryRun.includes('All'),
    fieldValidation: parseFieldValidation(query.get('fieldValidation')),
    warnings: [],
    authorize: (a) => deps.rbac.authorize(a),
    force: query.get('force') === 'true',
  };
}
