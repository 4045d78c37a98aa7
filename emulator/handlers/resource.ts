// Resource requests: finds the resource type, authorizes, and answers each verb (get, list, watch, create, update,
// patch, delete, deletecollection), the review APIs and the token and scale subresources.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from '../authz.js';
import { badRequest, methodNotAllowed, PageNotFound, pathNotFound } from '../errors.js';
import type { FaultRequest } from '../faults.js';
import {
  cachedJson,
  decodeObjectBody,
  decodePatchBody,
  patchKindOf,
  readBody,
  type Rendering,
  renderingOf,
  warningHeaders,
  writeJson,
} from '../http.js';
import { isObject, type KubeObject } from '../object.js';
import { groupVersion, type ResourceType } from '../resources.js';
import { answerReview } from '../reviews.js';
import type { RequestInfo } from '../route.js';
import { tableOf } from '../table.js';
import { authorize, type ServerDeps } from './deps.js';
import { serveList } from './list.js';
import { deleteOptionsFrom, writeContext } from './options.js';
import { serveScale, serveToken } from './subresources.js';
import { serveWatch } from './watch.js';
import { manager } from '../verbs/field-managers.js';

function respondObject(
  deps: ServerDeps,
  res: ServerResponse,
  code: number,
  rt: ResourceType,
  obj: KubeObject,
  rendering: Rendering,
  query: URLSearchParams,
  pretty: boolean,
  headers: Record<string, string | string[]> = {},
): void {
  if (rendering === 'table' && obj.kind === rt.kind) {
    const table = tableOf(
      rt.columns(),
      [obj],
      { resourceVersion: obj.metadata.resourceVersion },
      query.get('includeObject') ?? 'Metadata',
      deps.api.now(),
    );
    writeJson(res, code, table, pretty, headers);
    return;
  }
  if (rendering === 'metadata' && obj.kind === rt.kind) {
    writeJson(res, code, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata }, pretty, headers);
    return;
  }
  writeJson(res, code, pretty ? obj : cachedJson(obj), pretty, headers);
}

export async function serveResource(
  deps: ServerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  info: RequestInfo,
  query: URLSearchParams,
  user: UserInfo,
  fault: FaultRequest,
  pretty: boolean,
): Promise<void> {
  const { api, registry, counters } = deps;
  const rt = registry.get(info.group, info.version, info.resource);
  const served = rt !== undefined && (info.subresource === '' || rt.subresources.includes(info.subresource)) && info.parts.length <= 3;
  if (served) counters.record(fault);
  // The apiserver authorizes in its filter chain, before any routing: a resource nobody serves is a 403 first.
  authorize(deps, {
    user,
    verb: info.verb,
    resourceRequest: true,
    namespace: info.namespace,
    apiGroup: info.group,
    apiVersion: info.version,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
    path: info.path,
  });
  // Under a group that only CRDs serve, the apiextensions handler passes unknown versions and resources on to the
  // mux's plain "404 page not found"; built-in groups answer a NotFound Status.
  if (rt === undefined && info.apiPrefix === 'apis' && !registry.isBuiltinGroup(info.group)) throw new PageNotFound();
  if (!served) throw pathNotFound();
  if (rt.namespaced && info.namespace === '' && !['list', 'watch'].includes(info.verb)) throw pathNotFound();
  const namespace = rt.namespaced ? info.namespace : '';
  if (!rt.verbs.includes(info.verb) && info.subresource === '') throw methodNotAllowed();
  const rendering = renderingOf(req.headers.accept);

  if (rt.verbs.length === 1 && rt.verbs[0] === 'create') {
    const body = decodeObjectBody(req.headers['content-type'], await readBody(req), rt.kind);
    const ctx = writeContext(deps, req, query, user);
    const answer = answerReview(rt.kind, isObject(body) ? body : {}, user, deps.rbac, deps.authn, {
      manager: manager(ctx),
      now: api.now(),
    });
    return writeJson(res, 201, answer, pretty);
  }
  if (info.subresource === 'token') return serveToken(deps, req, res, rt, namespace, info.name, pretty);
  if (info.subresource === 'scale') return serveScale(deps, req, res, rt, namespace, info, query, user, pretty);

  switch (info.verb) {
    case 'get':
      return respondObject(deps, res, 200, rt, api.get(rt, namespace, info.name), rendering, query, pretty);
    case 'list':
      return serveList(deps, res, rt, namespace, query, rendering, fault, pretty);
    case 'watch':
      return serveWatch(deps, req, res, rt, namespace, info.name, query, rendering, user);
    case 'create': {
      if (info.name !== '') throw methodNotAllowed();
      const ctx = writeContext(deps, req, query, user);
      const body = decodeObjectBody(req.headers['content-type'], await readBody(req), rt.kind);
      const result = api.create(rt, namespace, body, ctx);
      deps.writes.named(req, result.object.metadata.name);
      return respondObject(deps, res, 201, rt, result.object, rendering, query, pretty, warningHeaders(ctx.warnings));
    }
    case 'update': {
      if (info.name === '') throw methodNotAllowed();
      const ctx = writeContext(deps, req, query, user);
      const body = decodeObjectBody(req.headers['content-type'], await readBody(req), rt.kind);
      const result = api.update(rt, namespace, info.name, body, info.subresource, ctx);
      return respondObject(
        deps,
        res,
        result.created ? 201 : 200,
        rt,
        result.object,
        rendering,
        query,
        pretty,
        warningHeaders(ctx.warnings),
      );
    }
    case 'patch': {
      if (info.name === '') throw methodNotAllowed();
      const ctx = writeContext(deps, req, query, user);
      const kind = patchKindOf(req.headers['content-type']);
      if (kind !== 'apply' && query.has('force')) throw badRequest('force: Forbidden: may not be specified for non-apply patch');
      const body = decodePatchBody(kind, await readBody(req));
      const result = api.patch(rt, namespace, info.name, kind, body, info.subresource, ctx);
      return respondObject(
        deps,
        res,
        result.created ? 201 : 200,
        rt,
        result.object,
        rendering,
        query,
        pretty,
        warningHeaders(ctx.warnings),
      );
    }
    case 'delete': {
      const text = await readBody(req);
      const body = text.toString('utf8').trim() === '' ? {} : decodeObjectBody(req.headers['content-type'], text, 'DeleteOptions');
      const result = api.delete(rt, namespace, info.name, deleteOptionsFrom(query, body));
      return respondObject(deps, res, 200, rt, result.object, result.kind === 'object' ? rendering : 'json', query, pretty);
    }
    case 'deletecollection': {
      const text = await readBody(req);
      const body = text.toString('utf8').trim() === '' ? {} : decodeObjectBody(req.headers['content-type'], text, 'DeleteOptions');
      const deleted = api.deleteCollection(
        rt,
        namespace,
        { labelSelector: query.get('labelSelector') ?? '', fieldSelector: query.get('fieldSelector') ?? '' },
        deleteOptionsFrom(query, body),
      );
      return writeJson(
        res,
        200,
        { kind: rt.listKind, apiVersion: groupVersion(rt), metadata: { resourceVersion: String(api.store.currentRv) }, items: deleted },
        pretty,
      );
    }
    default:
      throw methodNotAllowed();
  }
}
