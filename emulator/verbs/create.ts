// CREATE (POST, a PUT or an apply that creates): name generation, defaults, managedFields, uid and creationTimestamp.
import { randomUUID } from 'node:crypto';
import { alreadyExists, badRequest } from '../errors.js';
import { encodeManagedFields, type ManagerSet, updateManagedFields } from '../managedfields.js';
import { generatedNameSuffix } from '../names.js';
import { type KubeObject, objectKey, timestamp } from '../object.js';
import { zeroValue } from '../openapi/builtin.js';
import { groupVersion, type ResourceType } from '../resources.js';
import { admitOwnerReferences, namespaceCheck, validate } from './admission.js';
import type { ApiBase } from './base.js';
import { decode, defaulted } from './decode.js';
import { ignoredFields, manager } from './field-managers.js';
import type { WriteContext, WriteResult } from './types.js';

export function create(
  api: ApiBase,
  rt: ResourceType,
  namespace: string,
  body: unknown,
  ctx: WriteContext,
  managedOverride?: Map<string, ManagerSet>,
): WriteResult {
  const decoded = decode(rt, body, ctx);
  return createDecoded(api, rt, namespace, decoded, ctx, managedOverride);
}

export function createDecoded(
  api: ApiBase,
  rt: ResourceType,
  namespace: string,
  decoded: KubeObject,
  ctx: WriteContext,
  managedOverride?: Map<string, ManagerSet>,
): WriteResult {
  const meta = decoded.metadata;
  if (rt.namespaced) {
    if (meta.namespace && meta.namespace !== namespace)
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    meta.namespace = namespace;
  } else if (meta.namespace) {
    delete meta.namespace;
  }
  if (meta.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
  if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${generatedNameSuffix(api.options.random)}`;
  namespaceCheck(api, rt, namespace, meta.name ?? '');
  for (const field of [
    'uid',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'generation',
    'selfLink',
    'managedFields',
  ])
    delete meta[field];
  const { storageRt, obj } = defaulted(api, rt, decoded);
  const now = api.now();
  const zero = storageRt.openapiName !== undefined ? (zeroValue(storageRt.openapiName) as KubeObject) : undefined;
  const managed =
    managedOverride ??
    updateManagedFields(new Map(), {
      before: rt.toStorage !== undefined ? undefined : zero,
      after: rt.toStorage !== undefined ? decoded : obj,
      node: rt.schema(),
      manager: manager(ctx),
      subresource: '',
      apiVersion: groupVersion(rt),
      now,
      ignored: ignoredFields(storageRt, ''),
    });
  if (storageRt.statusPolicy === 'subresource') delete obj.status;
  storageRt.prepareForCreate?.(obj, api.strategyContext());
  if (storageRt.generation !== 'none') obj.metadata.generation = 1;
  validate(api, rt, rt.toStorage ? decoded : obj, undefined);
  admitOwnerReferences(api, rt, obj, undefined, '', ctx);
  obj.metadata.uid = randomUUID();
  obj.metadata.creationTimestamp = timestamp(now);
  const managedFields = encodeManagedFields(managed);
  if (managedFields !== undefined) obj.metadata.managedFields = managedFields;
  const final = api.canonical(rt, obj);
  const collection = api.collectionOf(rt);
  const key = objectKey(rt.namespaced ? namespace : undefined, final.metadata.name!);
  if (collection.objects.has(key)) throw alreadyExists(rt, final.metadata.name!);
  if (ctx.dryRun) {
    delete final.metadata.resourceVersion;
    return { object: api.present(rt, final), created: true };
  }
  api.store.add(collection, key, final);
  return { object: api.present(rt, final), created: true };
}
