// DELETE and DELETECOLLECTION: preconditions, propagation finalizers, graceful deletion, and finalizer removal.
import { ApiError, forbidden, invalid, notFound } from '../errors.js';
import { isTerminating } from '../metadata.js';
import { deepCopy, deepEqual, isObject, type KubeObject, objectKey, timestamp } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { ApiBase } from './base.js';
import { list } from './list.js';
import type { DeleteOptions, DeleteResult, ListOptions } from './types.js';

/** The namespaces the NamespaceLifecycle admission plugin refuses to delete. */
const immortalNamespaces = ['default', 'kube-system', 'kube-public'];

/** DELETE: preconditions, propagation finalizers, graceful deletion with finalizers, or removal. */
export function deleteObject(api: ApiBase, rt: ResourceType, namespace: string, name: string, options: DeleteOptions): DeleteResult {
  const stored = api.getStored(rt, namespace, name);
  if (stored === undefined) throw notFound(rt, name);
  if (rt.group === '' && rt.resource === 'namespaces' && immortalNamespaces.includes(name))
    throw forbidden(rt, name, 'this namespace may not be deleted');
  const old = stored.object;
  checkPreconditions(rt, name, stored.rv, old, options.preconditions ?? {});
  const finalizers = propagationFinalizers(old, options);
  let prepared: KubeObject | undefined;
  if (!isTerminating(old) && rt.prepareForDeletion !== undefined) {
    prepared = deepCopy(old);
    prepared.metadata.finalizers = finalizers;
    rt.prepareForDeletion(prepared, api.now());
    finalizers.splice(0, finalizers.length, ...(prepared.metadata.finalizers ?? []));
  }
  const namespaceLike = rt.resource === 'namespaces' && rt.group === '';
  const collection = api.collectionOf(rt);
  const key = objectKey(rt.namespaced ? namespace : undefined, name);
  if (finalizers.length > 0 || namespaceLike) {
    if (isTerminating(old) && deepEqual(finalizers, old.metadata.finalizers ?? [])) {
      return { kind: 'object', object: api.present(rt, old) };
    }
    const next: KubeObject = prepared ?? deepCopy(old);
    next.metadata.finalizers = finalizers.length > 0 ? finalizers : undefined;
    if (!isTerminating(old)) {
      next.metadata.deletionTimestamp = timestamp(api.now());
      if (!namespaceLike) next.metadata.deletionGracePeriodSeconds = 0;
      if ((old.metadata.generation ?? 0) > 0) next.metadata.generation = (old.metadata.generation ?? 0) + 1;
    }
    if (namespaceLike) (next as Record<string, any>).status = { ...(isObject(next.status) ? next.status : {}), phase: 'Terminating' };
    const final = api.canonical(rt, next);
    if (options.dryRun) return { kind: 'object', object: api.present(rt, final) };
    const written = api.store.replace(collection, key, final);
    return { kind: 'object', object: api.present(rt, written.object) };
  }
  if (options.dryRun) return { kind: 'status', object: successStatus(rt, name, old.metadata.uid) };
  api.store.remove(collection, key);
  return { kind: 'status', object: successStatus(rt, name, old.metadata.uid) };
}

/** Refuses the deletion (409) when a precondition names another uid or resourceVersion than the stored object's. */
function checkPreconditions(
  rt: ResourceType,
  name: string,
  rv: number,
  old: KubeObject,
  pre: NonNullable<DeleteOptions['preconditions']>,
): void {
  const preconditionFailed = (message: string) =>
    new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${rt.kind} "${name}": ${message}`, {
      name,
      group: rt.group,
      kind: rt.kind,
    });
  if (pre.uid && pre.uid !== old.metadata.uid) {
    throw preconditionFailed(
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${old.metadata.uid}). The object might have been deleted and then recreated`,
    );
  }
  if (pre.resourceVersion && pre.resourceVersion !== String(rv)) {
    throw preconditionFailed(
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${rv}). The object might have been modified`,
    );
  }
}

/** The object's finalizers once the propagation policy asked for (or implied by orphanDependents) is applied. */
function propagationFinalizers(old: KubeObject, options: DeleteOptions): string[] {
  const policy =
    options.propagationPolicy ??
    (options.orphanDependents === true ? 'Orphan' : options.orphanDependents === false ? 'Background' : undefined);
  if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
    throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
      {
        type: 'FieldValueNotSupported',
        field: 'propagationPolicy',
        detail: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`,
      },
    ]);
  }
  const finalizers = [...(old.metadata.finalizers ?? [])];
  const withFinalizer = (f: string) => {
    if (!finalizers.includes(f)) finalizers.push(f);
  };
  const without = (f: string) => {
    const i = finalizers.indexOf(f);
    if (i >= 0) finalizers.splice(i, 1);
  };
  if (policy === 'Orphan') {
    withFinalizer('orphan');
    without('foregroundDeletion');
  } else if (policy === 'Foreground') {
    withFinalizer('foregroundDeletion');
    without('orphan');
  } else if (policy === 'Background') {
    without('orphan');
    without('foregroundDeletion');
  }
  return finalizers;
}

export function deleteCollection(
  api: ApiBase,
  rt: ResourceType,
  namespace: string,
  listOptions: ListOptions,
  options: DeleteOptions,
): KubeObject[] {
  const { items } = list(api, rt, namespace, { labelSelector: listOptions.labelSelector, fieldSelector: listOptions.fieldSelector });
  const deleted: KubeObject[] = [];
  for (const item of items) {
    try {
      const result = deleteObject(api, rt, item.metadata.namespace ?? '', item.metadata.name!, { ...options, preconditions: undefined });
      deleted.push(result.kind === 'object' ? result.object : item);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
  }
  return deleted;
}

/** Removes a finalizer on behalf of a controller (GC, namespace or CRD cleanup), completing deletion when it was the last. */
export function removeFinalizer(api: ApiBase, rt: ResourceType, obj: KubeObject, finalizer: string): void {
  const stored = api.getStored(rt, obj.metadata.namespace ?? '', obj.metadata.name!);
  if (stored === undefined || !(stored.object.metadata.finalizers ?? []).includes(finalizer)) return;
  const next = deepCopy(stored.object);
  next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  if (next.metadata.finalizers.length === 0) delete next.metadata.finalizers;
  const collection = api.collectionOf(rt);
  const key = objectKey(rt.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name!);
  if (next.metadata.deletionTimestamp !== undefined && next.metadata.finalizers === undefined) api.store.remove(collection, key);
  else api.store.replace(collection, key, api.canonical(rt, next));
}

export function successStatus(rt: ResourceType, name: string, uid: string | undefined): KubeObject {
  const details: Record<string, string> = { name };
  if (rt.group !== '') details.group = rt.group;
  details.kind = rt.resource;
  if (uid) details.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details } as unknown as KubeObject;
}
