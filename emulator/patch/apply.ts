// Server-side apply (structured-merge-diff): merge of the applied configuration, pruning of what the applier stopped
// applying, and field ownership with conflicts (409) unless forced.
import { ApiError } from '../errors.js';
import { compareObjects, FieldSet, fieldElement, itemPathElement, removePaths, toFieldSet, withNamedFieldsAsMembers } from '../fieldset.js';
import { type ManagerSet, managerId, stripMetadataMember, trackedView } from '../managedfields.js';
import { deepCopy, deepEqual, isObject, type KubeObject, timestamp } from '../object.js';
import { childNode, type ListNode, type TypeNode } from '../typeschema.js';

function isAtomic(node: TypeNode | undefined): boolean {
  if (node === undefined || node.kind === 'scalar' || node.kind === 'any') return true;
  if (node.kind === 'list') return node.listType === 'atomic';
  return node.mapType === 'atomic';
}

/** live.Merge(config): config wins on leaves; maps and associative lists are merged. */
export function mergeApplied(live: unknown, config: unknown, node: TypeNode | undefined): unknown {
  if (config === undefined) return deepCopy(live);
  if (live === undefined || live === null || config === null) return deepCopy(config);
  if (isAtomic(node)) return deepCopy(config);
  if (Array.isArray(live) && Array.isArray(config) && node!.kind === 'list') return mergeLists(live, config, node as ListNode);
  if (isObject(live) && isObject(config)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(live))
      out[key] = Object.hasOwn(config, key) ? mergeApplied(live[key], config[key], childNode(node, key)) : deepCopy(live[key]);
    for (const key of Object.keys(config)) if (!Object.hasOwn(live, key)) out[key] = deepCopy(config[key]);
    return out;
  }
  return deepCopy(config);
}

/** The list merge of structured-merge-diff: shared items keep the config's relative order, live-only items stay put. */
function mergeLists(lhs: unknown[], rhs: unknown[], list: ListNode): unknown[] {
  const lPE = lhs.map((item, i) => itemPathElement(list, item, i));
  const rPE = rhs.map((item, i) => itemPathElement(list, item, i));
  const lByPE = new Map(lPE.map((pe, i) => [pe, lhs[i]]));
  const rByPE = new Map(rPE.map((pe, i) => [pe, rhs[i]]));
  const shared = rPE.filter((pe) => lByPE.has(pe));
  let nextShared = shared.shift();
  const mergedRHS = new Set<string>();
  const out: unknown[] = [];
  let l = 0;
  let r = 0;
  while (l < lPE.length || r < rPE.length) {
    if (l < lPE.length && r < rPE.length) {
      const pe = lPE[l];
      if (pe === rPE[r]) {
        mergedRHS.add(pe);
        out.push(mergeApplied(lByPE.get(pe), rByPE.get(pe), list.elem));
        l++;
        r++;
        nextShared = shared.shift();
        continue;
      }
      if (rByPE.has(pe) && nextShared !== undefined && nextShared !== pe) {
        l++;
        continue;
      }
    }
    if (l < lPE.length) {
      const pe = lPE[l];
      if (!rByPE.has(pe)) {
        out.push(deepCopy(lhs[l]));
        l++;
        continue;
      }
      if (mergedRHS.has(pe)) {
        l++;
        continue;
      }
    }
    if (r < rPE.length) {
      const pe = rPE[r];
      mergedRHS.add(pe);
      out.push(mergeApplied(lByPE.get(pe), rByPE.get(pe), list.elem));
      r++;
      if (nextShared !== undefined && nextShared === pe) nextShared = shared.shift();
    }
  }
  return out;
}

/** Renders a field path the way apply conflicts name it: `.spec.template.spec.containers[name="app"].image`. */
export function renderPath(path: readonly string[]): string {
  return path
    .map((pe) => {
      if (pe.startsWith('f:')) return `.${pe.slice(2)}`;
      if (pe.startsWith('k:')) {
        const key = JSON.parse(pe.slice(2)) as Record<string, unknown>;
        return `[${Object.entries(key)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(',')}]`;
      }
      if (pe.startsWith('v:')) return `[=${pe.slice(2)}]`;
      return `[${pe.slice(2)}]`;
    })
    .join('');
}

function conflictError(conflicts: Map<string, { manager: ManagerSet; set: FieldSet }>): ApiError {
  const causes: { reason: string; message: string; field: string }[] = [];
  const lines: string[] = [];
  let total = 0;
  const sorted = [...conflicts.values()].sort((a, b) => (a.manager.manager < b.manager.manager ? -1 : 1));
  const single: string[] = [];
  for (const { manager, set } of sorted) {
    let who = JSON.stringify(manager.manager);
    if (manager.subresource !== '') who += ` with subresource ${JSON.stringify(manager.subresource)}`;
    if (manager.operation === 'Update') who += ` using ${manager.apiVersion}`;
    const paths = set.paths().map(renderPath).sort();
    total += paths.length;
    for (const p of paths) causes.push({ reason: 'FieldManagerConflict', message: `conflict with ${who}`, field: p });
    lines.push(`conflicts with ${who}:`, ...paths.map((p) => `- ${p}`));
    if (paths.length === 1) single.push(`conflict with ${who}: ${paths[0]}`);
  }
  const message = total === 1 ? `Apply failed with 1 conflict: ${single[0]}` : `Apply failed with ${total} conflicts: ${lines.join('\n')}`;
  return new ApiError(409, 'Conflict', message, { causes });
}

export interface ApplyRequest {
  readonly live: KubeObject | undefined;
  readonly config: KubeObject;
  readonly node: TypeNode;
  readonly managed: Map<string, ManagerSet>;
  readonly manager: string;
  readonly force: boolean;
  readonly subresource: string;
  readonly apiVersion: string;
  readonly now: Date;
  /** Reset fields of the endpoint (status on the main resource, spec on /status), never applied. */
  readonly ignored: FieldSet;
}

export interface ApplyResult {
  readonly object: KubeObject;
  readonly managed: Map<string, ManagerSet>;
}

/** Updater.Apply: merges, prunes, computes ownership; throws 409 Conflict on conflicts when not forced. */
export function serverSideApply(req: ApplyRequest): ApplyResult {
  const config = removePaths(req.config, req.ignored, req.node) as KubeObject;
  const configSet = stripMetadataMember(toFieldSet(trackedView(config), req.node).recursiveDifference(req.ignored));
  let merged = mergeApplied(req.live ?? {}, config, req.node) as KubeObject;

  const id = managerId({ manager: req.manager, operation: 'Apply', subresource: req.subresource });
  const lastSet = req.managed.get(id)?.set;
  const managers = new Map(req.managed);
  const mine: ManagerSet = {
    manager: req.manager,
    operation: 'Apply',
    subresource: req.subresource,
    apiVersion: req.apiVersion,
    time: timestamp(req.now),
    set: configSet,
  };
  managers.set(id, mine);

  if (lastSet !== undefined && !lastSet.empty) {
    let owned = new FieldSet();
    for (const m of managers.values()) owned = owned.union(m.set);
    const candidates = withNamedFieldsAsMembers(lastSet, req.node);
    const removable = candidates.difference(withNamedFieldsAsMembers(owned, req.node));
    merged = removePaths(merged, removable, req.node) as KubeObject;
  }

  const raw = compareObjects(trackedView(req.live), trackedView(merged), req.node);
  const compare = {
    added: stripMetadataMember(raw.added),
    modified: stripMetadataMember(raw.modified),
    removed: stripMetadataMember(raw.removed),
  };
  const changed = compare.modified.union(compare.added).recursiveDifference(req.ignored);
  const conflicts = new Map<string, { manager: ManagerSet; set: FieldSet }>();
  for (const [key, m] of managers) {
    if (key === id) continue;
    const conflict = m.set.intersection(changed);
    if (!conflict.empty) conflicts.set(key, { manager: m, set: conflict });
  }
  if (!req.force && conflicts.size > 0) throw conflictError(conflicts);
  const out = new Map<string, ManagerSet>();
  for (const [key, m] of managers) {
    if (key === id) {
      out.set(key, m);
      continue;
    }
    const set = m.set.difference(conflicts.get(key)?.set ?? new FieldSet()).difference(compare.removed);
    if (!set.empty) out.set(key, { ...m, set });
  }
  // managedFieldsUpdater: the applier's time moves only when the object changed (a new applier of a no-op has none).
  if (req.live !== undefined && deepEqual(trackedView(req.live), trackedView(merged))) mine.time = req.managed.get(id)?.time;
  return { object: merged, managed: out };
}

/** The reset-field set of an endpoint: `status` for the main resource of a kind with /status, `spec` for /status. */
export function resetFields(paths: readonly string[]): FieldSet {
  const set = new FieldSet();
  for (const p of paths) set.insert([fieldElement(p)]);
  return set;
}
