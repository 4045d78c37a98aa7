// LIST over HTTP: the expired-continue fault, then JSON (each item serialised once), Table or PartialObjectMetadata.
import { ApiError } from '../errors.js';
import type { FaultRequest } from '../faults.js';
import { cachedJson, writeJson, writeText } from '../http.js';
import { groupVersion } from '../resources.js';
import { tableOf } from '../table.js';
import type { ResourceCall } from './deps.js';

export function serveList({ deps, res, rt, namespace, query, rendering, pretty }: ResourceCall, fault: FaultRequest): void {
  const { api, faults } = deps;
  const limit = query.get('limit');
  const token = query.get('continue') ?? undefined;
  if (token !== undefined && token !== '' && faults.takeExpiredContinue(fault)) {
    throw new ApiError(
      410,
      'Expired',
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    );
  }
  const result = api.list(rt, namespace, {
    labelSelector: query.get('labelSelector') ?? '',
    fieldSelector: query.get('fieldSelector') ?? '',
    limit: limit === null || limit === '' ? undefined : Number(limit),
    continue: token === '' ? undefined : token,
    resourceVersion: query.get('resourceVersion') ?? undefined,
    resourceVersionMatch: query.get('resourceVersionMatch') ?? undefined,
  });
  const metadata: Record<string, unknown> = { resourceVersion: String(result.resourceVersion) };
  if (result.continue !== undefined) metadata.continue = result.continue;
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  if (rendering === 'table') {
    writeJson(res, 200, tableOf(rt.columns(), result.items, metadata, query.get('includeObject') ?? 'Metadata', api.now()), pretty);
    return;
  }
  if (rendering === 'metadata') {
    const items = result.items.map((i) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: i.metadata }));
    writeJson(res, 200, { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata, items }, pretty);
    return;
  }
  const builtin = rt.strategicMerge;
  if (pretty) {
    const items = builtin ? result.items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest) : result.items;
    writeJson(res, 200, { kind: rt.listKind, apiVersion: groupVersion(rt), metadata, items }, true);
    return;
  }
  const items = result.items.map((item) => {
    const json = cachedJson(item);
    if (!builtin) return json;
    const prefix = `{"kind":${JSON.stringify(item.kind)},"apiVersion":${JSON.stringify(item.apiVersion)},`;
    return json.startsWith(prefix) ? `{${json.slice(prefix.length)}` : JSON.stringify({ ...item, kind: undefined, apiVersion: undefined });
  });
  writeText(
    res,
    200,
    `{"kind":${JSON.stringify(rt.listKind)},"apiVersion":${JSON.stringify(groupVersion(rt))},"metadata":${JSON.stringify(metadata)},"items":[${items.join(',')}]}`,
  );
}
