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
import { authorize, type ResourceCall, type ServerDeps } from './deps.js';
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

/** Answers `obj` in the call's rendering (or `rendering`), with `code` and `headers`. */
function respond(
  call: ResourceCall,
  code: number,
  obj: KubeObject,
  headers?: Record<string, string | string[]>,
  rendering = call.rendering,
): void {
  respondObject(call.deps, call.res, code, call.rt, obj, rendering, call.query, call.pretty, headers);
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
  const rt = servedResourceType(deps, info, user, fault);
  const namespace = rt.namespaced ? info.namespace : '';
  const call: ResourceCall = { deps, req, res, rt, namespace, info, query, user, rendering: renderingOf(req.headers.accept), pretty };
  if (rt.verbs.length === 1 && rt.verbs[0] === 'create') return serveReview(call);
  if (info.subresource === 'token') return serveToken(call);
  if (info.subresource === 'scale') return serveScale(call);
  switch (info.verb) {
    case 'get':
      return respond(call, 200, deps.api.get(rt, namespace, info.name));
    case 'list':
      return serveList(call, fault);
    case 'watch':
      return serveWatch(call);
    case 'create':
    case 'update':
    case 'patch':
      return serveWrite(call, info.verb);
    case 'delete':
    case 'deletecollection':
      return serveDelete(call, info.verb);
    default:
      throw methodNotAllowed();
  }
}

/**
 * The resource type a request names, once the request is authorized and the type serves its path and verb; counts
 * the request. Throws the apiserver's answer otherwise.
 */
function servedResourceType(deps: ServerDeps, info: RequestInfo, user: UserInfo, fault: FaultRequest): ResourceType {
  const { registry, counters } = deps;
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
  if (!rt.verbs.includes(info.verb) && info.subresource === '') throw methodNotAllowed();
  return rt;
}

/** A review API (create only): answers the review without storing it. */
async function serveReview({ deps, req, res, rt, query, user, pretty }: ResourceCall): Promise<void> {
  const body = decodeObjectBody(req.headers['content-type'], await readBody(req), rt.kind);
  const ctx = writeContext(deps, req, query, user);
  const answer = answerReview(rt.kind, isObject(body) ? body : {}, user, deps.rbac, deps.authn, {
    manager: manager(ctx),
    now: deps.api.now(),
  });
  writeJson(res, 201, answer, pretty);
}

/** create (without a name), update and patch (with one); 201 when the write created the object. */
async function serveWrite(call: ResourceCall, verb: 'create' | 'update' | 'patch'): Promise<void> {
  const { deps, req, rt, namespace, info, query } = call;
  if ((verb === 'create') !== (info.name === '')) throw methodNotAllowed();
  const ctx = writeContext(deps, req, query, call.user);
  if (verb === 'patch') {
    const kind = patchKindOf(req.headers['content-type']);
    if (kind !== 'apply' && query.has('force')) throw badRequest('force: Forbidden: may not be specified for non-apply patch');
    const body = decodePatchBody(kind, await readBody(req));
    const result = deps.api.patch(rt, namespace, info.name, kind, body, info.subresource, ctx);
    return respond(call, result.created ? 201 : 200, result.object, warningHeaders(ctx.warnings));
  }
  const body = decodeObjectBody(req.headers['content-type'], await readBody(req), rt.kind);
  if (verb === 'update') {
    const result = deps.api.update(rt, namespace, info.name, body, info.subresource, ctx);
    return respond(call, result.created ? 201 : 200, result.object, warningHeaders(ctx.warnings));
  }
  const result = deps.api.create(rt, namespace, body, ctx);
  deps.writes.named(req, result.object.metadata.name);
  respond(call, 201, result.object, warningHeaders(ctx.warnings));
}

/** delete (one object, or a Status for a deletion that completes at once) and deletecollection (a list of what went). */
async function serveDelete(call: ResourceCall, verb: 'delete' | 'deletecollection'): Promise<void> {
  const { deps, req, res, rt, namespace, info, query } = call;
  const text = await readBody(req);
  const body = text.toString('utf8').trim() === '' ? {} : decodeObjectBody(req.headers['content-type'], text, 'DeleteOptions');
  if (verb === 'delete') {
    const result = deps.api.delete(rt, namespace, info.name, deleteOptionsFrom(query, body));
    return respond(call, 200, result.object, undefined, result.kind === 'object' ? call.rendering : 'json');
  }
  const deleted = deps.api.deleteCollection(
    rt,
    namespace,
    { labelSelector: query.get('labelSelector') ?? '', fieldSelector: query.get('fieldSelector') ?? '' },
    deleteOptionsFrom(query, body),
  );
  const list = {
    kind: rt.listKind,
    apiVersion: groupVersion(rt),
    metadata: { resourceVersion: String(deps.api.store.currentRv) },
    items: deleted,
  };
  writeJson(res, 200, list, call.pretty);
}
