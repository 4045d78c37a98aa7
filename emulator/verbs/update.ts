// UPDATE (PUT, and the last step of every patch): preconditions, subresources (status, finalize), generation, managedFields.
import { badRequest, conflict, invalid, invalidValue, notFound, staleObject } from '../errors.js';
import { decodeManagedFields, encodeManagedFields, type ManagerSet, updateManagedFields } from '../managedfields.js';
import { sameContent } from '../metadata.js';
import { deepCopy, deepEqual, isObject, type KubeObject, objectKey } from '../object.js';
import { groupVersion, type ResourceType } from '../resources.js';
import type { StoredObject } from '../store.js';
import { admitOwnerReferences, validate } from './admission.js';
import type { ApiBase } from './base.js';
import { createDecoded } from './create.js';
import { decode, defaulted } from './decode.js';
import { ignoredFields, manager } from './field-managers.js';
import type { WriteContext, WriteResult } from './types.js';

export function update(
  api: ApiBase,
  rt: ResourceType,
  namespace: string,
  name: string,
  body: unknown,
  subresource: string,
  ctx: WriteContext,
): WriteResult {
  const decoded = decode(rt, body, ctx);
  if (decoded.metadata.name !== undefined && decoded.metadata.name !== name) {
    throw badRequest(`the name of the object (${decoded.metadata.name}) does not match the name on the URL (${name})`);
  }
  decoded.metadata.name = name;
  if (rt.namespaced && decoded.metadata.namespace && decoded.metadata.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const stored = api.getStored(rt, namespace, name);
  if (stored === undefined) {
    if (rt.createOnUpdate && subresource === '') {
      delete decoded.metadata.resourceVersion;
      return createDecoded(api, rt, namespace, decoded, ctx);
    }
    throw notFound(rt, name);
  }
  const rv = decoded.metadata.resourceVersion;
  if (rv === undefined || rv === '') {
    if (!rt.unconditionalUpdate)
      throw invalid({ group: rt.group, kind: rt.resource }, name, [
        invalidValue('metadata.resourceVersion', 0, 'must be specified for an update'),
      ]);
  } else if (rv !== String(stored.rv)) {
    throw conflict(rt, name, staleObject);
  }
  return updateDecoded(api, rt, namespace, name, decoded, stored, subresource, ctx, undefined);
}

/** The metadata an update cannot change: kept from the stored object (managedFields are recomputed). */
function keepServerMetadata(meta: KubeObject['metadata'], old: KubeObject['metadata']): void {
  meta.namespace = old.namespace;
  meta.uid = old.uid;
  meta.creationTimestamp = old.creationTimestamp;
  if (old.deletionTimestamp !== undefined) meta.deletionTimestamp = old.deletionTimestamp;
  else delete meta.deletionTimestamp;
  if (old.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
  else delete meta.deletionGracePeriodSeconds;
  delete meta.managedFields;
  meta.resourceVersion = old.resourceVersion;
}

/**
 * What a write through `subresource` may change: `finalize` only spec.finalizers, `status` only the status (or what the
 * resource's strategy allows), the main resource all but a status kept in its own subresource; bumps the generation.
 */
function applySubresourceRules(api: ApiBase, storageRt: ResourceType, obj: KubeObject, old: KubeObject, subresource: string): void {
  if (subresource === 'finalize') {
    const finalizers = (obj.spec as { finalizers?: string[] } | undefined)?.finalizers;
    const next: KubeObject = deepCopy(old);
    next.spec = { ...(isObject(old.spec) ? old.spec : {}), finalizers };
    if (finalizers === undefined) delete (next.spec as Record<string, unknown>).finalizers;
    for (const key of Object.keys(obj)) delete obj[key];
    Object.assign(obj, next);
  } else if (subresource === 'status') {
    storageRt.prepareForStatusUpdate?.(obj, old);
    if (storageRt.prepareForStatusUpdate === undefined) {
      for (const key of Object.keys(obj)) if (key !== 'status' && key !== 'metadata') delete obj[key];
      for (const key of Object.keys(old)) if (key !== 'status' && key !== 'metadata') obj[key] = old[key];
      obj.metadata = { ...old.metadata };
    }
    obj.metadata.generation = old.metadata.generation;
    if (obj.metadata.generation === undefined) delete obj.metadata.generation;
  } else {
    if (storageRt.statusPolicy === 'subresource') {
      if (old.status === undefined) delete obj.status;
      else obj.status = old.status;
    }
    storageRt.prepareForUpdate?.(obj, old, api.strategyContext());
    bumpGeneration(storageRt, obj, old);
  }
}

export function updateDecoded(
  api: ApiBase,
  rt: ResourceType,
  namespace: string,
  name: string,
  decoded: KubeObject,
  stored: StoredObject,
  subresource: string,
  ctx: WriteContext,
  managedOverride: Map<string, ManagerSet> | undefined,
): WriteResult {
  const old = stored.object;
  if (decoded.metadata.uid && decoded.metadata.uid !== old.metadata.uid) {
    throw conflict(rt, name, `Precondition failed: UID in precondition: ${decoded.metadata.uid}, UID in object meta: ${old.metadata.uid}`);
  }
  const { storageRt, obj } = defaulted(api, rt, decoded);
  keepServerMetadata(obj.metadata, old.metadata);
  applySubresourceRules(api, storageRt, obj, old, subresource);
  const view = rt.toStorage !== undefined;
  const managed =
    managedOverride ??
    updateManagedFields(decodeManagedFields(old.metadata.managedFields), {
      before: view ? api.present(rt, old) : old,
      after: view ? api.present(rt, obj) : obj,
      node: rt.schema(),
      manager: manager(ctx),
      subresource,
      apiVersion: groupVersion(rt),
      now: api.now(),
      ignored: ignoredFields(storageRt, subresource),
    });
  delete obj.metadata.managedFields;
  const managedFields = encodeManagedFields(managed);
  if (managedFields !== undefined) obj.metadata.managedFields = managedFields;
  validate(api, rt, rt.toStorage ? api.present(rt, obj) : obj, rt.toStorage ? api.present(rt, old) : old);
  admitOwnerReferences(api, rt, obj, old, subresource, ctx);
  const final = api.canonical(rt, obj);
  if (sameContent(final, old)) return { object: api.present(rt, old), created: false };
  const collection = api.collectionOf(rt);
  const key = objectKey(rt.namespaced ? namespace : undefined, name);
  const specFinalizers =
    storageRt.resource === 'namespaces' && storageRt.group === ''
      ? ((final.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [])
      : [];
  const finishesDeletion =
    final.metadata.deletionTimestamp !== undefined && (final.metadata.finalizers ?? []).length === 0 && specFinalizers.length === 0;
  if (ctx.dryRun) return { object: api.present(rt, final), created: false };
  if (finishesDeletion) {
    api.store.remove(collection, key);
    return { object: api.present(rt, final), created: false };
  }
  const written = api.store.replace(collection, key, final);
  return { object: api.present(rt, written.object), created: false };
}

function bumpGeneration(rt: ResourceType, obj: KubeObject, old: KubeObject): void {
  const previous = old.metadata.generation ?? 0;
  obj.metadata.generation = previous;
  let changed = false;
  switch (rt.generation) {
    case 'none':
      if (previous === 0) delete obj.metadata.generation;
      return;
    case 'spec':
      changed = !deepEqual(obj.spec, old.spec);
      break;
    case 'spec-and-annotations':
      changed = !deepEqual(obj.spec, old.spec) || !deepEqual(obj.metadata.annotations, old.metadata.annotations);
      break;
    case 'non-metadata': {
      const strip = (o: KubeObject) => {
        const { metadata: _m, status: _s, ...rest } = o;
        return rt.statusPolicy === 'subresource' ? rest : { ...rest, status: _s };
      };
      changed = !deepEqual(strip(obj), strip(old));
      break;
    }
  }
  if (changed) obj.metadata.generation = previous + 1;
}
