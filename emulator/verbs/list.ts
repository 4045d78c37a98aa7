// LIST: selectors, resourceVersion semantics (unset, 0, NotOlderThan, Exact) and pagination with continue tokens.
import { ApiError, badRequest, expired, type FieldError, forbiddenField, invalid, tooLargeResourceVersion } from '../errors.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import { checkFieldSelector, fieldsMatch, labelsMatch, parseFieldSelector, parseLabelSelector } from '../selectors.js';
import { type Collection, HistoryExpired } from '../store.js';
import type { ApiBase } from './base.js';
import type { ListOptions, ListResult, Selection } from './types.js';

const continuePrefix = 'meta.k8s.io/v1';

export function parseSelection(rt: ResourceType, namespace: string, labelSelector = '', fieldSelector = ''): Selection {
  const labels = parseLabelSelector(labelSelector);
  const fields = parseFieldSelector(fieldSelector);
  checkFieldSelector(fields, rt.fieldGetters, rt.fieldSelectorStyle);
  return { namespace, labels, fields };
}

/** Whether a (storage-form) object is selected; field selectors see the resource's own shape. */
export function selects(rt: ResourceType, selection: Selection, obj: KubeObject): boolean {
  if (selection.namespace !== '' && obj.metadata.namespace !== selection.namespace) return false;
  if (selection.labels.length > 0 && !labelsMatch(selection.labels, obj.metadata.labels)) return false;
  if (selection.fields.length > 0 && !fieldsMatch(selection.fields, rt.fieldGetters, rt.fromStorage ? rt.fromStorage(obj) : obj))
    return false;
  return true;
}

export function list(api: ApiBase, rt: ResourceType, namespace: string, options: ListOptions): ListResult {
  const selection = parseSelection(rt, namespace, options.labelSelector, options.fieldSelector);
  const collection = api.collectionOf(rt);
  const rvParam = options.resourceVersion ?? '';
  const match = options.resourceVersionMatch ?? '';
  const listOptionsInvalid = (error: FieldError) => invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', [error]);
  if (match !== '' && rvParam === '')
    throw listOptionsInvalid(
      forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'),
    );
  if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
    throw listOptionsInvalid({
      type: 'FieldValueNotSupported',
      field: 'resourceVersionMatch',
      detail: `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"`,
    });
  }
  if (options.continue && rvParam !== '' && rvParam !== '0')
    throw badRequest('specifying resource version is not allowed when using continue');
  if (match === 'Exact' && rvParam === '0')
    throw listOptionsInvalid(forbiddenField('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  const requested = rvParam === '' ? 0 : parseResourceVersion(rvParam);
  if (requested > api.store.currentRv) throw tooLargeResourceVersion(requested, api.store.currentRv);

  let state: Iterable<[string, KubeObject]>;
  let listRv = api.store.currentRv;
  let start = '';
  const limit = rvParam === '0' && !options.continue ? 0 : (options.limit ?? 0);
  if (options.continue) {
    const token = decodeContinue(options.continue);
    listRv = token.rv;
    start = token.start;
    state = snapshot(collection, listRv, () => {
      const fresh = encodeContinue(api.store.currentRv, start);
      return new ApiError(
        410,
        'Expired',
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        { causes: [] },
        { 'X-Continue': fresh },
      );
    });
  } else if (match === 'Exact') {
    listRv = requested;
    state = snapshot(collection, requested, () => expired(`too old resource version: ${requested} (${collection.compactedThrough})`));
  } else {
    state = [...collection.sortedKeys()].map((k) => [k, collection.objects.get(k)!.object] as [string, KubeObject]);
  }

  const prefix = rt.namespaced && namespace !== '' ? `${namespace}/` : '';
  const items: KubeObject[] = [];
  let lastKey = '';
  let remaining = 0;
  let more = false;
  for (const [key, obj] of state) {
    if (prefix !== '' && !key.startsWith(prefix)) continue;
    const relative = `/${key.slice(prefix.length)}`;
    if (start !== '' && relative < start) continue;
    if (!selects(rt, selection, obj)) continue;
    if (limit > 0 && items.length >= limit) {
      more = true;
      remaining++;
      continue;
    }
    items.push(api.present(rt, obj));
    lastKey = relative;
  }
  const result: { items: KubeObject[]; resourceVersion: number; continue?: string; remainingItemCount?: number } = {
    items,
    resourceVersion: listRv,
  };
  if (more) {
    result.continue = encodeContinue(listRv, `${lastKey}\u0000`);
    if (selection.labels.length === 0 && selection.fields.length === 0) result.remainingItemCount = remaining;
  }
  return result;
}

function snapshot(collection: Collection, rv: number, onExpired: () => ApiError): [string, KubeObject][] {
  let state: Map<string, KubeObject>;
  try {
    state = collection.snapshotAt(rv);
  } catch (e) {
    if (e instanceof HistoryExpired) throw onExpired();
    throw e;
  }
  return [...state.keys()].sort().map((k) => [k, state.get(k)!]);
}

function parseResourceVersion(value: string): number {
  if (!/^\d+$/.test(value)) throw badRequest(`resourceVersion: Invalid value: "${value}": must be a non-negative integer`);
  return Number(value);
}

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: continuePrefix, rv, start })).toString('base64url');
}

function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (parsed.v !== continuePrefix || typeof parsed.rv !== 'number' || typeof parsed.start !== 'string') throw new Error('bad token');
    return { rv: parsed.rv, start: parsed.start };
  } catch {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
}
