// Non-resource paths: /version, discovery (legacy and aggregated), OpenAPI v3; anything else is 404.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  aggregatedDiscovery,
  aggregatedDiscoveryType,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  etagOf,
} from '../discovery.js';
import { PageNotFound, pathNotFound } from '../errors.js';
import { writeJson, writeText } from '../http.js';
import type { ServerDeps } from './deps.js';

/** Aggregated discovery in the version the Accept header asks for (v2, or v2beta1 alone), with its ETag. */
function writeAggregatedDiscovery(res: ServerResponse, accept: string, body: Record<string, unknown>): void {
  const text = JSON.stringify(body);
  writeText(res, 200, text, {
    'Content-Type':
      accept.includes('v=v2beta1') && !accept.includes('v=v2;')
        ? aggregatedDiscoveryType.replace('v=v2', 'v=v2beta1')
        : aggregatedDiscoveryType,
    ETag: etagOf(text),
    Vary: 'Accept',
    'Cache-Control': 'public',
  });
}

export function serveNonResource(
  deps: ServerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
  pretty: boolean,
): void {
  const { registry } = deps;
  const accept = req.headers.accept ?? '';
  const aggregated = accept.includes('apidiscovery.k8s.io') && (accept.includes('v=v2') || accept.includes('v=v2beta1'));
  const discovery = (body: Record<string, unknown>) => writeAggregatedDiscovery(res, accept, body);
  const segments = path.split('/').filter((s) => s !== '');
  if (path === '/version' || path === '/version/') {
    writeJson(res, 200, deps.version, pretty);
    return;
  }
  if (path === '/api' || path === '/api/') {
    if (aggregated) {
      discovery(aggregatedDiscovery(registry, true));
      return;
    }
    writeJson(res, 200, apiVersions(deps.serverAddress()), pretty);
    return;
  }
  if (path === '/apis' || path === '/apis/') {
    if (aggregated) {
      discovery(aggregatedDiscovery(registry, false));
      return;
    }
    writeJson(res, 200, apiGroupList(registry), pretty);
    return;
  }
  if (segments[0] === 'api' && segments.length === 2) {
    const list = apiResourceList(registry, '', segments[1]);
    if (list !== undefined) {
      writeJson(res, 200, list, pretty);
      return;
    }
  }
  if (segments[0] === 'apis' && segments.length === 2) {
    const group = apiGroup(registry, segments[1]);
    if (group !== undefined) {
      writeJson(res, 200, group, pretty);
      return;
    }
  }
  if (segments[0] === 'apis' && segments.length === 3) {
    const list = apiResourceList(registry, segments[1], segments[2]);
    if (list !== undefined) {
      writeJson(res, 200, list, pretty);
      return;
    }
  }
  if (path === '/openapi/v3' || path === '/openapi/v3/') {
    writeJson(res, 200, deps.openapi.index(), pretty);
    return;
  }
  if (path.startsWith('/openapi/v3/')) {
    const doc = deps.openapi.document(path.slice('/openapi/v3/'.length));
    if (doc !== undefined) {
      writeText(res, 200, doc, { 'Cache-Control': query.has('hash') ? 'public, immutable' : 'no-cache, private' });
      return;
    }
  }
  // A version a built-in group does not serve is a NotFound Status; under a CRD-only group, "404 page not found".
  if (segments[0] === 'api' || (segments[0] === 'apis' && segments.length > 1 && registry.isBuiltinGroup(segments[1])))
    throw pathNotFound();
  throw new PageNotFound();
}
