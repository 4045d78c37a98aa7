// ObjectMeta rules: validation on create and update (names, labels, annotations, finalizers, ownerReferences) and canonical field order.
import { type FieldError, forbiddenField, invalidValue, requiredValue } from './errors.js';
import { nameErrors, qualifiedNameErrors, labelValueErrors } from './names.js';
import type { NameRule } from './names.js';
import { deepEqual, isObject, type KubeObject, type ObjectMeta } from './object.js';

const totalAnnotationSizeLimit = 256 * 1024;

export function validateObjectMeta(meta: ObjectMeta, namespaced: boolean, rule: NameRule): FieldError[] {
  const errors: FieldError[] = [];
  if (!meta.name && !meta.generateName) {
    errors.push(requiredValue('metadata.name', 'name or generateName is required'));
  } else if (meta.name) {
    for (const e of nameErrors(rule, meta.name)) errors.push(invalidValue('metadata.name', meta.name, e));
  }
  if (namespaced && !meta.namespace) errors.push(requiredValue('metadata.namespace'));
  if (!namespaced && meta.namespace) errors.push(forbiddenField('metadata.namespace', 'not allowed on this type'));
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    for (const e of qualifiedNameErrors(key)) errors.push(invalidValue('metadata.labels', key, e));
    for (const e of labelValueErrors(String(value))) errors.push(invalidValue('metadata.labels', value, e));
  }
  let annotationSize = 0;
  for (const [key, value] of Object.entries(meta.annotations ?? {})) {
    for (const e of qualifiedNameErrors(key.toLowerCase())) errors.push(invalidValue('metadata.annotations', key, e));
    annotationSize += key.length + String(value).length;
  }
  if (annotationSize > totalAnnotationSizeLimit) {
    errors.push({
      type: 'FieldValueTooLong',
      field: 'metadata.annotations',
      detail: `Too long: may not be more than ${totalAnnotationSizeLimit} bytes`,
    });
  }
  const finalizers = meta.finalizers ?? [];
  finalizers.forEach((f, i) => {
    for (const e of qualifiedNameErrors(f)) errors.push(invalidValue(`metadata.finalizers[${i}]`, f, e));
  });
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errors.push(invalidValue('metadata.finalizers', finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  let controllers = 0;
  for (const ref of meta.ownerReferences ?? []) {
    if (!ref.apiVersion)
      errors.push(invalidValue('metadata.ownerReferences.apiVersion', ref.apiVersion ?? '', 'version must not be empty'));
    if (!ref.kind) errors.push(invalidValue('metadata.ownerReferences.kind', ref.kind ?? '', 'kind must not be empty'));
    if (!ref.name) errors.push(invalidValue('metadata.ownerReferences.name', ref.name ?? '', 'name must not be empty'));
    if (!ref.uid) errors.push(invalidValue('metadata.ownerReferences.uid', ref.uid ?? '', 'uid must not be empty'));
    if (ref.controller === true) controllers++;
  }
  if (controllers > 1) {
    errors.push(invalidValue('metadata.ownerReferences', meta.ownerReferences, 'Only one reference can have Controller set to true.'));
  }
  return errors;
}

/** The update rules: no new finalizer once deletion started (a cause listed twice, as the apiserver validates twice). */
export function validateObjectMetaUpdate(meta: ObjectMeta, old: ObjectMeta): FieldError[] {
  const errors: FieldError[] = [];
  if (old.deletionTimestamp !== undefined) {
    const added = (meta.finalizers ?? []).filter((f) => !(old.finalizers ?? []).includes(f));
    if (added.length > 0) {
      const rendered = `[]string{${added.map((f) => JSON.stringify(f)).join(', ')}}`;
      const error = forbiddenField(
        'metadata.finalizers',
        `no new finalizers can be added if the object is being deleted, found new finalizers ${rendered}`,
      );
      errors.push(error, error);
    }
  }
  return errors;
}

/** The fields of ObjectMeta, in the order Go writes them. */
export const objectMetaFields: readonly string[] = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

/** The object with kind, apiVersion and metadata first and metadata fields in ObjectMeta order (as Go writes them). */
export function canonicalObject(obj: KubeObject): KubeObject {
  const meta: Record<string, unknown> = {};
  for (const key of objectMetaFields) if (obj.metadata[key] !== undefined) meta[key] = obj.metadata[key];
  for (const key of Object.keys(obj.metadata)) if (!(key in meta) && obj.metadata[key] !== undefined) meta[key] = obj.metadata[key];
  const out: Record<string, unknown> = { kind: obj.kind, apiVersion: obj.apiVersion, metadata: meta };
  for (const key of Object.keys(obj)) if (!(key in out) && obj[key] !== undefined) out[key] = obj[key];
  return out as KubeObject;
}

/** Whether two objects differ only in metadata.resourceVersion (a no-op write, which the apiserver skips). */
export function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return deepEqual(strip(a), strip(b));
}

export function isTerminating(obj: KubeObject | undefined): boolean {
  return obj !== undefined && isObject(obj.metadata) && obj.metadata.deletionTimestamp !== undefined;
}
