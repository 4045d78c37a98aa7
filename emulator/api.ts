// The API verbs over the store (get, list, create, update, patch, delete, deletecollection): the apiserver's generic
// registry with decoding, defaulting, admission, validation, preconditions, finalizers and managedFields (in verbs/).
import { decodeManagedFields, encodeManagedFields, updateManagedFields } from './managedfields.js';
import { sameContent } from './metadata.js';
import { type KubeObject, objectKey } from './object.js';
import { groupVersion, type ResourceType } from './resources.js';
import { ApiBase } from './verbs/base.js';
import { create } from './verbs/create.js';
import { deleteCollection, deleteObject, removeFinalizer } from './verbs/delete.js';
import { ignoredFields } from './verbs/field-managers.js';
import { list, parseSelection, selects } from './verbs/list.js';
import { patch } from './verbs/patch.js';
import type { DeleteResult, ListResult, Selection, WriteResult } from './verbs/types.js';
import { update } from './verbs/update.js';

/** The verbs' option and result types, for the handlers and the embedders. */
export type * from './verbs/types.js';

/**
 * A verb's parameters after the API it runs on: each method below hands its arguments to the verb's function, so
 * the parameters are declared once, in the verb's file, with their names.
 */
type VerbArguments<F> = F extends (api: ApiBase, ...rest: infer P) => unknown ? P : never;

/** Every verb of the API server on one object; each verb's logic lives in its own file under verbs/. */
export class Api extends ApiBase {
  parseSelection(rt: ResourceType, namespace: string, labelSelector = '', fieldSelector = ''): Selection {
    return parseSelection(rt, namespace, labelSelector, fieldSelector);
  }

  /** Whether a (storage-form) object is selected; field selectors see the resource's own shape. */
  selects(rt: ResourceType, selection: Selection, obj: KubeObject): boolean {
    return selects(rt, selection, obj);
  }

  list(...args: VerbArguments<typeof list>): ListResult {
    return list(this, ...args);
  }

  create(...args: VerbArguments<typeof create>): WriteResult {
    return create(this, ...args);
  }

  update(...args: VerbArguments<typeof update>): WriteResult {
    return update(this, ...args);
  }

  patch(...args: VerbArguments<typeof patch>): WriteResult {
    return patch(this, ...args);
  }

  /** DELETE: preconditions, propagation finalizers, graceful deletion with finalizers, or removal. */
  delete(...args: VerbArguments<typeof deleteObject>): DeleteResult {
    return deleteObject(this, ...args);
  }

  deleteCollection(...args: VerbArguments<typeof deleteCollection>): KubeObject[] {
    return deleteCollection(this, ...args);
  }

  /** Removes a finalizer on behalf of a controller (GC, namespace or CRD cleanup), completing deletion when it was the last. */
  removeFinalizer(...args: VerbArguments<typeof removeFinalizer>): void {
    removeFinalizer(this, ...args);
  }

  /**
   * Writes an object as a controller would (no admission), unless it is unchanged; with `as`, the write is recorded
   * in managedFields as that manager's Update (e.g. kube-apiserver on a CRD's status).
   */
  writeAsController(rt: ResourceType, next: KubeObject, as?: { manager: string; subresource?: string }): void {
    const collection = this.collectionOf(rt);
    const key = objectKey(rt.namespaced ? next.metadata.namespace : undefined, next.metadata.name!);
    const stored = collection.objects.get(key);
    if (stored === undefined) {
      this.store.add(collection, key, this.canonical(rt, next));
      return;
    }
    if (as !== undefined) {
      const subresource = as.subresource ?? '';
      const managed = updateManagedFields(decodeManagedFields(stored.object.metadata.managedFields), {
        before: stored.object,
        after: next,
        node: rt.schema(),
        manager: as.manager,
        subresource,
        apiVersion: groupVersion(rt),
        now: this.now(),
        ignored: ignoredFields(rt, subresource),
      });
      next = { ...next, metadata: { ...next.metadata, managedFields: encodeManagedFields(managed) } };
    }
    const final = this.canonical(rt, { ...next, metadata: { ...next.metadata, resourceVersion: stored.object.metadata.resourceVersion } });
    if (!sameContent(final, stored.object)) this.store.replace(collection, key, final);
  }
}
