// Strategic merge patch for built-in kinds: lists merged by their patch merge keys, with the $patch, $retainKeys,
// $setElementOrder and $deleteFromPrimitiveList directives that kubectl sends (k8s.io/apimachinery strategicpatch).
import { ApiError } from '../errors.js';
import { deepCopy, deepEqual, isObject } from '../object.js';
import { childNode, type ListNode, listMergeKey, type TypeNode } from '../typeschema.js';

const setElementOrderPrefix = '$setElementOrder/';
const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList/';

function patchError(message: string): ApiError {
  return new ApiError(422, 'Invalid', message, {});
}

function goMap(value: Record<string, unknown>): string {
  return `map[${Object.keys(value)
    .sort()
    .map((k) => `${k}:${String(value[k])}`)
    .join(' ')}]`;
}

/** Applies a strategic merge patch to `original` (not modified) and returns the result. */
export function applyStrategicMergePatch(original: unknown, patch: unknown, node: TypeNode | undefined): unknown {
  if (!isObject(patch)) throw patchError('unable to find api field in struct for the patch: the patch must be an object');
  return mergeMap(isObject(original) ? original : {}, patch, node);
}

function mergeMap(original: Record<string, unknown>, patch: Record<string, unknown>, node: TypeNode | undefined): Record<string, unknown> {
  const directive = patch.$patch;
  if (directive !== undefined) {
    if (directive === 'replace') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(patch)) if (k !== '$patch') out[k] = stripDirectives(v);
      return out;
    }
    if (directive !== 'delete' && directive !== 'merge')
      throw patchError(`unknown patch type: ${String(directive)} in map: ${goMap(patch)}`);
  }
  const out: Record<string, unknown> = { ...original };
  const retainKeys = patch.$retainKeys;
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys') continue;
    if (key.startsWith(setElementOrderPrefix)) continue;
    if (key.startsWith(deleteFromPrimitiveListPrefix)) {
      const field = key.slice(deleteFromPrimitiveListPrefix.length);
      if (Array.isArray(out[field]) && Array.isArray(value)) {
        out[field] = (out[field] as unknown[]).filter((v) => !value.some((d) => deepEqual(d, v)));
      }
      continue;
    }
    const child = childNode(node, key);
    if (value === null) {
      delete out[key];
      continue;
    }
    if (isObject(value) && value.$patch === 'delete') {
      delete out[key];
      continue;
    }
    if (Array.isArray(value) || Array.isArray(out[key]) || (child !== undefined && child.kind === 'list')) {
      const order = patch[`${setElementOrderPrefix}${key}`];
      out[key] = mergeList(
        Array.isArray(out[key]) ? (out[key] as unknown[]) : [],
        Array.isArray(value) ? value : [],
        child,
        Array.isArray(order) ? order : undefined,
      );
      continue;
    }
    if (isObject(value)) {
      if (child !== undefined && (child.kind === 'scalar' || child.kind === 'any')) out[key] = stripDirectives(value);
      else out[key] = mergeMap(isObject(out[key]) ? (out[key] as Record<string, unknown>) : {}, value, child);
      continue;
    }
    out[key] = value;
  }
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(setElementOrderPrefix)) continue;
    const field = key.slice(setElementOrderPrefix.length);
    if (Object.hasOwn(patch, field) || !Array.isArray(order) || !Array.isArray(out[field])) continue;
    out[field] = mergeList(out[field] as unknown[], [], childNode(node, field), order);
  }
  if (Array.isArray(retainKeys)) {
    for (const key of Object.keys(out)) if (!retainKeys.includes(key)) delete out[key];
  }
  return out;
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value))
    return value.filter((v) => !(isObject(v) && v.$patch !== undefined && Object.keys(v).length === 1)).map(stripDirectives);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith(setElementOrderPrefix) || k.startsWith(deleteFromPrimitiveListPrefix))
      continue;
    out[k] = stripDirectives(v);
  }
  return out;
}

function keyOf(item: unknown, mergeKey: string | undefined): unknown {
  if (mergeKey === undefined) return item;
  return isObject(item) ? item[mergeKey] : undefined;
}

function indexIn(list: readonly unknown[], item: unknown, mergeKey: string | undefined): number {
  const k = keyOf(item, mergeKey);
  return list.findIndex((x) => deepEqual(keyOf(x, mergeKey), k));
}

function mergeList(original: unknown[], patch: unknown[], node: TypeNode | undefined, setElementOrder: unknown[] | undefined): unknown[] {
  const { merge, key } = listMergeKey(node);
  const elem = node !== undefined && node.kind === 'list' ? (node as ListNode).elem : undefined;
  if (!merge) return stripDirectives(patch) as unknown[];
  const objects = [...original, ...patch].some(isObject);
  let merged: unknown[];
  if (!objects) {
    merged = [...original];
    for (const v of patch) if (!merged.some((m) => deepEqual(m, v))) merged.push(v);
  } else {
    if (key === undefined) return stripDirectives(patch) as unknown[];
    if (patch.some((p) => isObject(p) && p.$patch === 'replace')) {
      return stripDirectives(patch.filter((p) => !(isObject(p) && p.$patch === 'replace'))) as unknown[];
    }
    merged = [...original];
    for (const item of patch) {
      if (!isObject(item)) continue;
      const at = indexIn(merged, item, key);
      if (item.$patch === 'delete') {
        if (at >= 0) merged.splice(at, 1);
        continue;
      }
      if (at >= 0) merged[at] = mergeMap(merged[at] as Record<string, unknown>, item, elem);
      else merged.push(stripDirectives(item));
    }
  }
  const patchOrder = setElementOrder ?? patch.filter((p) => !(isObject(p) && p.$patch !== undefined));
  const patchItems = merged.filter((m) => indexIn(patchOrder, m, objects ? key : undefined) >= 0);
  const serverOnly = merged.filter((m) => indexIn(patchOrder, m, objects ? key : undefined) < 0);
  const mk = objects ? key : undefined;
  patchItems.sort((a, b) => indexIn(patchOrder, a, mk) - indexIn(patchOrder, b, mk));
  serverOnly.sort((a, b) => indexIn(original, a, mk) - indexIn(original, b, mk));
  return mergeSorted(serverOnly, patchItems, original, mk);
}

/** strategicpatch.mergeSortedSlice: interleaves server-only items into patch items by their order in the live list. */
function mergeSorted(left: unknown[], right: unknown[], serverOrder: unknown[], mergeKey: string | undefined): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey);
      const ri = indexIn(serverOrder, right[j], mergeKey);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out.map((item) => deepCopy(item));
}
