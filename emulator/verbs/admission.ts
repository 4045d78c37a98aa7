// Admission and validation of a write: NamespaceLifecycle, ObjectMeta and kind validation, OwnerReferencesPermissionEnforcement.
import type { Attributes } from '../authz.js';
import { type FieldError, forbidden, invalid, notFound } from '../errors.js';
import { isTerminating, validateObjectMeta, validateObjectMetaUpdate } from '../metadata.js';
import { deepEqual, type KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { ApiBase } from './base.js';
import type { WriteContext } from './types.js';

export function namespaceCheck(api: ApiBase, rt: ResourceType, namespace: string, name: string): void {
  if (!rt.namespaced) return;
  const ns = api.store.collection('/namespaces').objects.get(namespace);
  if (ns === undefined) throw notFound({ group: '', resource: 'namespaces' }, namespace);
  if (isTerminating(ns.object)) {
    throw forbidden(rt, name, `unable to create new content in namespace ${namespace} because it is being terminated`);
  }
}

export function validate(api: ApiBase, rt: ResourceType, obj: KubeObject, old: KubeObject | undefined): void {
  const errors: FieldError[] = [...validateObjectMeta(obj.metadata, rt.namespaced, rt.nameRule)];
  if (old !== undefined) errors.push(...validateObjectMetaUpdate(obj.metadata, old.metadata));
  errors.push(...(rt.validate?.(obj, old) ?? []));
  // Validation runs on the internal (storage) type, so a view's errors name the storage kind (Event, not Event.events.k8s.io).
  const named = rt.toStorage !== undefined ? (api.registry.byStorage(rt.storage) ?? rt) : rt;
  if (errors.length > 0) throw invalid(named, obj.metadata.name ?? obj.metadata.generateName ?? '', errors);
}

/** OwnerReferencesPermissionEnforcement: changing ownerReferences needs delete on the object, blocking ones need owner/finalizers update. */
export function admitOwnerReferences(
  api: ApiBase,
  rt: ResourceType,
  obj: KubeObject,
  old: KubeObject | undefined,
  subresource: string,
  ctx: WriteContext,
): void {
  if (deepEqual(obj.metadata.ownerReferences ?? [], old?.metadata.ownerReferences ?? [])) return;
  const name = obj.metadata.name ?? '';
  const base: Omit<Attributes, 'verb' | 'resource' | 'subresource' | 'name' | 'apiGroup' | 'apiVersion'> = {
    user: ctx.user,
    resourceRequest: true,
    namespace: obj.metadata.namespace ?? '',
    path: '',
  };
  if (old !== undefined) {
    const decision = ctx.authorize({
      ...base,
      verb: 'delete',
      apiGroup: rt.group,
      apiVersion: rt.version,
      resource: rt.resource,
      subresource,
      name,
    });
    if (!decision.allowed) throw forbidden(rt, name, `cannot set an ownerRef on a resource you can't delete: ${decision.reason}, <nil>`);
  }
  const oldRefs = old?.metadata.ownerReferences ?? [];
  const blocking = (obj.metadata.ownerReferences ?? []).filter((ref) => {
    if (ref.blockOwnerDeletion !== true) return false;
    const previous = oldRefs.find((o) => o.uid === ref.uid);
    return previous === undefined || previous.blockOwnerDeletion !== true;
  });
  if (blocking.length === 0) return;
  const anything = ctx.authorize({
    ...base,
    verb: 'update',
    apiGroup: '*',
    apiVersion: '*',
    resource: '*',
    subresource: 'finalizers',
    name: '',
    namespace: '',
  });
  if (anything.allowed) return;
  for (const ref of blocking) {
    const ownerType = api.registry.byKind(ref.apiVersion, ref.kind);
    if (ownerType === undefined) {
      throw forbidden(
        rt,
        name,
        `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion} Kind ${ref.kind}: no matches for kind "${ref.kind}" in version "${ref.apiVersion}"`,
      );
    }
    const decision = ctx.authorize({
      ...base,
      verb: 'update',
      apiGroup: ownerType.group,
      apiVersion: ownerType.version,
      resource: ownerType.resource,
      subresource: 'finalizers',
      name: ref.name,
    });
    if (!decision.allowed) {
      throw forbidden(
        rt,
        name,
        `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${decision.reason}, <nil>`,
      );
    }
  }
}
