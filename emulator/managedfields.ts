// metadata.managedFields bookkeeping for Update operations (create, update, patch) and the shared manager-set helpers of apply.
import { compareObjects, FieldSet } from './fieldset.js';
import { isObject, type KubeObject, type ManagedFieldsEntry, timestamp } from './object.js';
import type { TypeNode } from './typeschema.js';

/** The fields the field manager never tracks (stripMetaManager). */
const strippedMetadata = [
  'name',
  'namespace',
  'creationTimestamp',
  'selfLink',
  'uid',
  'clusterName',
  'generation',
  'managedFields',
  'resourceVersion',
];

/** A copy of an object without the fields no manager owns (apiVersion, kind, system metadata). */
export function trackedView(obj: KubeObject | undefined): Record<string, unknown> {
  if (obj === undefined) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'apiVersion' || key === 'kind') continue;
    if (key === 'metadata' && isObject(value)) {
      const meta: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) if (!strippedMetadata.includes(k) && v !== undefined) meta[k] = v;
      if (Object.keys(meta).length > 0) out.metadata = meta;
      continue;
    }
    out[key] = value;
  }
  return out;
}

/** Clears the `metadata` member itself (stripMetaManager strips the path; its tracked children stay). */
export function stripMetadataMember(set: FieldSet): FieldSet {
  const meta = set.children.get('f:metadata');
  if (meta === undefined || !meta.member) return set;
  const out = set.copy();
  out.children.get('f:metadata')!.member = false;
  if (out.children.get('f:metadata')!.empty) out.children.delete('f:metadata');
  return out;
}

export interface ManagerSet {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly subresource: string;
  apiVersion: string;
  time: string | undefined;
  set: FieldSet;
}

export function managerId(m: { manager: string; operation: string; subresource: string }): string {
  return JSON.stringify([m.manager, m.operation, m.subresource]);
}

export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | undefined): Map<string, ManagerSet> {
  const out = new Map<string, ManagerSet>();
  for (const e of entries ?? []) {
    const m: ManagerSet = {
      manager: e.manager ?? '',
      operation: e.operation ?? 'Update',
      subresource: e.subresource ?? '',
      apiVersion: e.apiVersion ?? '',
      time: e.time,
      set: FieldSet.fromFieldsV1(e.fieldsV1),
    };
    out.set(managerId(m), m);
  }
  return out;
}

/** The managedFields list, sorted as the apiserver sorts it (operation, time, manager, apiVersion, subresource). */
export function encodeManagedFields(managers: Map<string, ManagerSet>): ManagedFieldsEntry[] | undefined {
  const entries: ManagedFieldsEntry[] = [];
  for (const m of managers.values()) {
    if (m.set.empty) continue;
    const e: ManagedFieldsEntry = { manager: m.manager, operation: m.operation, apiVersion: m.apiVersion };
    if (m.time !== undefined) e.time = m.time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = m.set.toFieldsV1();
    if (m.subresource !== '') e.subresource = m.subresource;
    entries.push(e);
  }
  entries.sort((p, q) => {
    if (p.operation !== q.operation) return p.operation! < q.operation! ? -1 : 1;
    const pt = p.time ? Date.parse(p.time) : 0;
    const qt = q.time ? Date.parse(q.time) : 0;
    if (pt !== qt) return pt - qt;
    if (p.manager !== q.manager) return p.manager! < q.manager! ? -1 : 1;
    if (p.apiVersion !== q.apiVersion) return p.apiVersion! < q.apiVersion! ? -1 : 1;
    return (p.subresource ?? '') < (q.subresource ?? '') ? -1 : (p.subresource ?? '') > (q.subresource ?? '') ? 1 : 0;
  });
  return entries.length > 0 ? entries : undefined;
}

/** The default field manager of a request: the user agent up to its first "/" (as the apiserver derives it). */
export function defaultManager(userAgent: string | undefined): string {
  const agent = userAgent ?? '';
  const slash = agent.indexOf('/');
  const prefix = (slash >= 0 ? agent.slice(0, slash) : agent).slice(0, 128);
  return prefix === '' ? 'unknown' : prefix;
}

export interface UpdateOperation {
  /** The object before the write: the live object, or the kind's zero value on create. */
  readonly before: KubeObject | undefined;
  readonly after: KubeObject;
  readonly node: TypeNode;
  readonly manager: string;
  readonly subresource: string;
  readonly apiVersion: string;
  readonly now: Date;
  /** Reset fields (status for the main resource, spec for /status): never owned through this endpoint. */
  readonly ignored: FieldSet;
}

/** Records an Update operation (Updater.Update): the writer takes what changed, others lose it. */
export function updateManagedFields(managed: Map<string, ManagerSet>, op: UpdateOperation): Map<string, ManagerSet> {
  const raw = compareObjects(trackedView(op.before), trackedView(op.after), op.node);
  const compare = {
    added: stripMetadataMember(raw.added),
    modified: stripMetadataMember(raw.modified),
    removed: stripMetadataMember(raw.removed),
  };
  const changed = compare.modified.union(compare.added).recursiveDifference(op.ignored);
  const removed = compare.removed.recursiveDifference(op.ignored);
  const id = managerId({ manager: op.manager, operation: 'Update', subresource: op.subresource });
  const out = new Map<string, ManagerSet>();
  for (const [key, m] of managed) {
    if (key === id) continue;
    const set = m.set.difference(changed).difference(removed);
    if (!set.empty) out.set(key, { ...m, set });
  }
  const previous = managed.get(id);
  const set = (previous?.set ?? new FieldSet())
    .union(compare.modified)
    .union(compare.added)
    .difference(compare.removed)
    .recursiveDifference(op.ignored);
  if (!set.empty) {
    const touched = !changed.empty || !removed.empty;
    out.set(id, {
      manager: op.manager,
      operation: 'Update',
      subresource: op.subresource,
      apiVersion: op.apiVersion,
      time: touched || previous === undefined ? timestamp(op.now) : previous.time,
      set,
    });
  }
  return out;
}
