// PATCH: JSON patch, merge patch, strategic merge patch, and server-side apply.
import { badRequest, conflict, invalid, notFound, requiredValue, staleObject, unsupportedMediaType } from '../errors.js';
import { unknownFieldOutcome } from '../fieldvalidation.js';
import { decodeManagedFields } from '../managedfields.js';
import { deepCopy, isObject, type KubeObject } from '../object.js';
import { serverSideApply } from '../patch/apply.js';
import { applyJsonPatch, parseJsonPatch } from '../patch/json-patch.js';
import { applyMergePatch } from '../patch/merge-patch.js';
import { applyStrategicMergePatch } from '../patch/strategic.js';
import { groupVersion, type ResourceType } from '../resources.js';
import type { StoredObject } from '../store.js';
import type { ApiBase } from './base.js';
import { createDecoded } from './create.js';
import { decode } from './decode.js';
import { ignoredFields } from './field-managers.js';
import type { PatchType, WriteContext, WriteResult } from './types.js';
import { updateDecoded } from './update.js';

export function patch(
  api: ApiBase,
  rt: ResourceType,
  namespace: string,
  name: string,
  type: PatchType,
  body: unknown,
  subresource: string,
  ctx: WriteContext & { readonly force?: boolean },
): WriteResult {
  if (type === 'strategic' && !rt.strategicMerge) {
    throw unsupportedMediaType(['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
  }
  const stored = api.getStored(rt, namespace, name);
  if (type === 'apply') return apply(api, rt, namespace, name, body, stored, subresource, ctx);
  if (stored === undefined) throw notFound(rt, name);
  const current = api.present(rt, stored.object);
  let patched: unknown;
  switch (type) {
    case 'json':
      patched = applyJsonPatch(current, parseJsonPatch(body as string));
      break;
    case 'merge':
      patched = applyMergePatch(current, body);
      break;
    case 'strategic':
      patched = applyStrategicMergePatch(current, body, rt.schema());
      break;
  }
  const decoded = decode(rt, patched, ctx);
  if (decoded.metadata.name !== name)
    throw badRequest(`the name of the object (${decoded.metadata.name ?? ''}) does not match the name on the URL (${name})`);
  const rv = decoded.metadata.resourceVersion;
  if (rv !== undefined && rv !== '' && rv !== String(stored.rv)) throw conflict(rt, name, staleObject);
  return updateDecoded(api, rt, namespace, name, decoded, stored, subresource, ctx, undefined);
}

function apply(
  api: ApiBase,
  rt: ResourceType,
  namespace: string,
  name: string,
  body: unknown,
  stored: StoredObject | undefined,
  subresource: string,
  ctx: WriteContext & { readonly force?: boolean },
): WriteResult {
  if (ctx.fieldManager === undefined || ctx.fieldManager === '') {
    throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [requiredValue('fieldManager', 'is required for apply patch')]);
  }
  if (!isObject(body)) throw badRequest('error decoding YAML: the applied configuration must be an object');
  const config = body as KubeObject;
  const gv = groupVersion(rt);
  if (config.apiVersion !== gv || config.kind !== rt.kind) {
    const apiVersion = String(config.apiVersion ?? '');
    throw badRequest(`invalid object type: ${apiVersion.includes('/') ? apiVersion : `/${apiVersion}`}, Kind=${String(config.kind ?? '')}`);
  }
  if (!isObject(config.metadata)) config.metadata = {};
  if (config.metadata.name !== undefined && config.metadata.name !== name) {
    throw badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`);
  }
  if (config.metadata.managedFields !== undefined) throw badRequest('metadata.managedFields must be nil');
  const node = rt.schema();
  const probe = deepCopy(config);
  const unknown = rt.prune(probe);
  ctx.warnings.push(...unknownFieldOutcome(ctx.fieldValidation, rt.kind, rt.version, unknown));
  const storageRt = rt.toStorage !== undefined ? (api.registry.byStorage(rt.storage) ?? rt) : rt;
  const live = stored === undefined ? undefined : api.present(rt, stored.object);
  const result = serverSideApply({
    live,
    config: probe,
    node,
    managed: decodeManagedFields(live?.metadata.managedFields),
    manager: ctx.fieldManager,
    force: ctx.force === true,
    subresource,
    apiVersion: gv,
    now: api.now(),
    ignored: ignoredFields(storageRt, subresource),
  });
  const merged = result.object;
  merged.metadata.name = name;
  if (stored === undefined) {
    if (subresource !== '') throw notFound(rt, name);
    delete merged.metadata.managedFields;
    return createDecoded(api, rt, namespace, decode(rt, merged, { ...ctx, warnings: [] }), ctx, result.managed);
  }
  const rv = config.metadata.resourceVersion;
  if (rv !== undefined && rv !== String(stored.rv)) throw conflict(rt, name, staleObject);
  const decoded = decode(rt, merged, { ...ctx, warnings: [] });
  return updateDecoded(api, rt, namespace, name, decoded, stored, subresource, ctx, result.managed);
}
