// The request pipeline on node:http: authentication, fault injection, counting, authorization, routing to the verbs,
// discovery, OpenAPI and the admin endpoint, and every error answered as a Status.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Api, DeleteOptions, WriteContext } from './api.js';
import type { Attributes, UserInfo } from './authz.js';
import type { Authenticator } from './auth.js';
import type { ControllerQueue, Logger } from './controllers/queue.js';
import type { Counters } from './counters.js';
import { aggregatedDiscovery, aggregatedDiscoveryType, apiGroup, apiGroupList, apiResourceList, apiVersions, etagOf } from './discovery.js';
import {
  ApiError,
  badRequest,
  internalError,
  methodNotAllowed,
  notFound,
  PageNotFound,
  pathNotFound,
  tooManyRequests,
  unauthorized,
} from './errors.js';
import type { FaultRequest, Faults } from './faults.js';
import { parseFieldValidation } from './fieldvalidation.js';
import {
  cachedJson,
  decodeObjectBody,
  decodePatchBody,
  patchKindOf,
  readBody,
  type Rendering,
  renderingOf,
  wantsPretty,
  warningHeaders,
  writeJson,
  writeText,
} from './http.js';
import { deepCopy, isObject, type KubeObject } from './object.js';
import type { OpenApiDocuments } from './openapi.js';
import { forbiddenFor, type RbacAuthorizer } from './rbac.js';
import { groupVersion, type ResourceRegistry, type ResourceType } from './resources.js';
import { applyJsonPatch, parseJsonPatch } from './patch/json-patch.js';
import { applyMergePatch } from './patch/merge-patch.js';
import { answerReview, tokenRequest } from './reviews.js';
import { type RequestInfo, requestInfo } from './route.js';
import { tableOf } from './table.js';
import { WatchHub } from './watch.js';

export interface ServerDeps {
  readonly api: Api;
  readonly registry: ResourceRegistry;
  readonly hub: WatchHub;
  readonly authn: Authenticator;
  readonly rbac: RbacAuthorizer;
  readonly counters: Counters;
  readonly faults: Faults;
  readonly openapi: OpenApiDocuments;
  readonly logger: Logger;
  readonly queue: ControllerQueue;
  readonly version: Record<string, string>;
  readonly serverAddress: () => string;
  readonly admin: (req: IncomingMessage, res: ServerResponse, path: string, body: () => Promise<string>) => Promise<void>;
}

const healthPaths = new Set(['/healthz', '/livez', '/readyz']);

/** Go's %v of a DeleteOptions field given as a query parameter. */
function deleteOptionsFrom(query: URLSearchParams, body: unknown): DeleteOptions {
  const fromBody = isObject(body) ? body : {};
  const preconditions = isObject(fromBody.preconditions) ? fromBody.preconditions : {};
  const grace = query.get('gracePeriodSeconds') ?? fromBody.gracePeriodSeconds;
  return {
    propagationPolicy: query.get('propagationPolicy') ?? (fromBody.propagationPolicy as string | undefined),
    orphanDependents: query.has('orphanDependents')
      ? query.get('orphanDependents') === 'true'
      : (fromBody.orphanDependents as boolean | undefined),
    gracePeriodSeconds: grace === undefined || grace === null ? undefined : Number(grace),
    dryRun: query.getAll('dryRun').includes('All') || (Array.isArray(fromBody.dryRun) && fromBody.dryRun.includes('All')),
    preconditions: { uid: preconditions.uid as string | undefined, resourceVersion: preconditions.resourceVersion as string | undefined },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export class RequestHandler {
  constructor(private readonly deps: ServerDeps) {}

  /** The entry point for node:http; never throws, every failure becomes a Status. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.serve(req, res).catch((e) => this.fail(req, res, e, false));
  };

  private fail(req: IncomingMessage, res: ServerResponse, e: unknown, pretty: boolean): void {
    const error = e instanceof ApiError ? e : internalError(e instanceof Error ? e.message : String(e));
    if (!(e instanceof ApiError)) {
      this.deps.logger.error({ method: req.method, url: req.url, err: e instanceof Error ? e.stack : String(e) }, 'request failed');
    } else {
      this.deps.logger.debug({ method: req.method, url: req.url, code: error.code, reason: error.reason }, 'request rejected');
    }
    if (error instanceof PageNotFound && !res.headersSent) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
      res.end('404 page not found\n');
      return;
    }
    const status = error.status();
    const continueToken = error.headers['X-Continue'];
    if (continueToken !== undefined) status.metadata = { continue: continueToken };
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(error.headers)) if (k !== 'X-Continue') headers[k] = v;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    writeJson(res, error.code, status, pretty, headers);
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const path = url.pathname;
    const query = url.searchParams;
    const pretty = wantsPretty(query, req.headers['user-agent']);
    res.setHeader('Audit-Id', randomUUID());
    try {
      if (healthPaths.has(path) || path.startsWith('/healthz/') || path.startsWith('/livez/') || path.startsWith('/readyz/')) {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
        res.end('ok');
        return;
      }
      const authenticated = this.deps.authn.authenticate(req.headers.authorization);
      if (authenticated === undefined) throw unauthorized();
      const user = this.impersonated(req, authenticated);
      if (path === '/emulator' || path.startsWith('/emulator/')) {
        if (!user.groups.includes('system:masters'))
          throw new ApiError(
            403,
            'Forbidden',
            `forbidden: User ${JSON.stringify(user.username)} cannot use the emulator admin endpoint`,
            {},
          );
        await this.deps.admin(req, res, path, async () => (await readBody(req)).toString('utf8'));
        return;
      }
      const info = requestInfo(req.method ?? 'GET', path, query);
      const fault: FaultRequest = {
        verb: info.verb,
        group: info.group,
        resource: info.subresource === '' ? info.resource : `${info.resource}/${info.subresource}`,
        namespace: info.namespace,
        user: user.username,
      };
      const latency = this.deps.faults.latencyFor(fault);
      if (latency > 0) await sleep(latency);
      const failure = this.deps.faults.failureFor(fault);
      if (failure !== undefined) {
        if (info.resourceRequest) this.deps.counters.record(fault);
        if (failure.code === 429) throw tooManyRequests(failure.retryAfterSeconds);
        if (failure.code === 503)
          throw new ApiError(
            503,
            'ServiceUnavailable',
            'The server is currently unable to handle the request',
            {},
            { 'Retry-After': String(failure.retryAfterSeconds) },
          );
        throw internalError('injected fault');
      }
      if (!info.resourceRequest) {
        this.authorize({
          user,
          verb: (req.method ?? 'GET').toLowerCase() === 'head' ? 'get' : (req.method ?? 'GET').toLowerCase(),
          resourceRequest: false,
          namespace: '',
          apiGroup: '',
          apiVersion: '',
          resource: '',
          subresource: '',
          name: '',
          path,
        });
        this.serveNonResource(req, res, path, query, pretty);
        return;
      }
      await this.serveResource(req, res, info, query, user, fault, pretty);
    } catch (e) {
      this.fail(req, res, e, pretty);
    }
  }

  /** Impersonate-User / Impersonate-Group (kubectl --as): allowed when the caller may `impersonate` them. */
  private impersonated(req: IncomingMessage, user: UserInfo): UserInfo {
    const username = req.headers['impersonate-user'];
    const rawGroups = req.headers['impersonate-group'];
    const groups =
      rawGroups === undefined ? [] : (Array.isArray(rawGroups) ? rawGroups : [rawGroups]).flatMap((g) => g.split(',').map((s) => s.trim()));
    if (username === undefined || Array.isArray(username)) {
      if (groups.length > 0) throw badRequest(`requested [{Group  ${groups.join(' ')}}] without impersonating a user`);
      return user;
    }
    const base = { user, resourceRequest: true, namespace: '', apiVersion: 'v1', subresource: '', path: '' };
    const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(username);
    const attributes: Attributes[] = [
      sa !== null
        ? { ...base, verb: 'impersonate', apiGroup: '', resource: 'serviceaccounts', namespace: sa[1], name: sa[2] }
        : { ...base, verb: 'impersonate', apiGroup: '', resource: 'users', name: username },
      ...groups.map((g) => ({ ...base, verb: 'impersonate', apiGroup: '', resource: 'groups', name: g })),
    ];
    for (const a of attributes) this.authorize(a);
    const impliedGroups = sa !== null && groups.length === 0 ? ['system:serviceaccounts', `system:serviceaccounts:${sa[1]}`] : [];
    const all = [...groups, ...impliedGroups];
    if (username !== 'system:anonymous' && !all.includes('system:authenticated')) all.push('system:authenticated');
    return { username, groups: all };
  }

  private authorize(a: Attributes): void {
    const decision = this.deps.rbac.authorize(a);
    if (!decision.allowed) throw forbiddenFor(a);
  }

  private serveNonResource(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, pretty: boolean): void {
    const { registry } = this.deps;
    const accept = req.headers.accept ?? '';
    const aggregated = accept.includes('apidiscovery.k8s.io') && (accept.includes('v=v2') || accept.includes('v=v2beta1'));
    const discovery = (body: Record<string, unknown>) => {
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
    };
    const segments = path.split('/').filter((s) => s !== '');
    if (path === '/version' || path === '/version/') {
      writeJson(res, 200, this.deps.version, pretty);
      return;
    }
    if (path === '/api' || path === '/api/') {
      if (aggregated) {
        discovery(aggregatedDiscovery(registry, true));
        return;
      }
      writeJson(res, 200, apiVersions(this.deps.serverAddress()), pretty);
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
      writeJson(res, 200, this.deps.openapi.index(), pretty);
      return;
    }
    if (path.startsWith('/openapi/v3/')) {
      const doc = this.deps.openapi.document(path.slice('/openapi/v3/'.length));
      if (doc !== undefined) {
        writeText(res, 200, doc, { 'Cache-Control': query.has('hash') ? 'public, immutable' : 'no-cache, private' });
        return;
      }
    }
    if (segments[0] === 'api' || (segments[0] === 'apis' && segments.length > 1 && registry.versionsOf(segments[1]).length > 0))
      throw pathNotFound();
    throw new PageNotFound();
  }

  private writeContext(req: IncomingMessage, query: URLSearchParams, user: UserInfo): WriteContext & { force: boolean } {
    const dryRun = query.getAll('dryRun');
    for (const d of dryRun) if (d !== 'All') throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(d)}: supported values: "All"`);
    const fieldManager = query.get('fieldManager') ?? undefined;
    if (fieldManager !== undefined && fieldManager.length > 128) throw badRequest('fieldManager: Too long: may not be more than 128 bytes');
    return {
      user,
      userAgent: req.headers['user-agent'],
      fieldManager,
      dryRun: dryRun.includes('All'),
      fieldValidation: parseFieldValidation(query.get('fieldValidation')),
      warnings: [],
      authorize: (a) => this.deps.rbac.authorize(a),
      force: query.get('force') === 'true',
    };
  }

  private respondObject(
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
        this.deps.api.now(),
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

  private async serveResource(
    req: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo,
    query: URLSearchParams,
    user: UserInfo,
    fault: FaultRequest,
    pretty: boolean,
  ): Promise<void> {
    const { api, registry, counters } = this.deps;
    const rt = registry.get(info.group, info.version, info.resource);
    if (rt === undefined && info.apiPrefix === 'apis' && registry.versionsOf(info.group).length === 0) throw new PageNotFound();
    if (rt === undefined || (info.subresource !== '' && !rt.subresources.includes(info.subresource)) || info.parts.length > 3)
      throw pathNotFound();
    counters.record(fault);
    this.authorize({
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
    if (rt.namespaced && info.namespace === '' && !['list', 'watch'].includes(info.verb)) throw pathNotFound();
    const namespace = rt.namespaced ? info.namespace : '';
    if (!rt.verbs.includes(info.verb) && info.subresource === '') throw methodNotAllowed();
    const rendering = renderingOf(req.headers.accept);

    if (rt.verbs.length === 1 && rt.verbs[0] === 'create') {
      const body = decodeObjectBody(req.headers['content-type'], await readBody(req), rt.kind);
      const answer = answerReview(rt.kind, isObject(body) ? body : {}, user, this.deps.rbac, this.deps.authn);
      return writeJson(res, 201, answer, pretty);
    }
    if (info.subresource === 'token') return this.serveToken(req, res, rt, namespace, info.name, pretty);
    if (info.subresource === 'scale') return this.serveScale(req, res, rt, namespace, info, query, user, pretty);

    switch (info.verb) {
      case 'get':
        return this.respondObject(res, 200, rt, api.get(rt, namespace, info.name), rendering, query, pretty);
      case 'list':
        return this.serveList(res, rt, namespace, query, rendering, fault, pretty);
      case 'watch':
        return this.serveWatch(req, res, rt, namespace, info.name, query, rendering, user);
      case 'create': {
        if (info.name !== '') throw methodNotAllowed();
        const ctx = this.writeContext(req, query, user);
        const body = decodeObjectBody(req.headers['content-type'], await readBody(req), rt.kind);
        const result = api.create(rt, namespace, body, ctx);
        return this.respondObject(res, 201, rt, result.object, rendering, query, pretty, warningHeaders(ctx.warnings));
      }
      case 'update': {
        if (info.name === '') throw methodNotAllowed();
        const ctx = this.writeContext(req, query, user);
        const body = decodeObjectBody(req.headers['content-type'], await readBody(req), rt.kind);
        const result = api.update(rt, namespace, info.name, body, info.subresource, ctx);
        return this.respondObject(
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
        const ctx = this.writeContext(req, query, user);
        const kind = patchKindOf(req.headers['content-type']);
        if (kind !== 'apply' && query.has('force')) throw badRequest('force: Forbidden: may not be specified for non-apply patch');
        const body = decodePatchBody(kind, await readBody(req));
        const result = api.patch(rt, namespace, info.name, kind, body, info.subresource, ctx);
        return this.respondObject(
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
        return this.respondObject(res, 200, rt, result.object, result.kind === 'object' ? rendering : 'json', query, pretty);
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

  private serveList(
    res: ServerResponse,
    rt: ResourceType,
    namespace: string,
    query: URLSearchParams,
    rendering: Rendering,
    fault: FaultRequest,
    pretty: boolean,
  ): void {
    const { api, faults } = this.deps;
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
      return json.startsWith(prefix)
        ? `{${json.slice(prefix.length)}`
        : JSON.stringify({ ...item, kind: undefined, apiVersion: undefined });
    });
    writeText(
      res,
      200,
      `{"kind":${JSON.stringify(rt.listKind)},"apiVersion":${JSON.stringify(groupVersion(rt))},"metadata":${JSON.stringify(metadata)},"items":[${items.join(',')}]}`,
    );
  }

  private serveWatch(
    req: IncomingMessage,
    res: ServerResponse,
    rt: ResourceType,
    namespace: string,
    name: string,
    query: URLSearchParams,
    rendering: Rendering,
    user: UserInfo,
  ): void {
    const { api, hub } = this.deps;
    let fieldSelector = query.get('fieldSelector') ?? '';
    if (name !== '') fieldSelector = fieldSelector === '' ? `metadata.name=${name}` : `${fieldSelector},metadata.name=${name}`;
    const selection = api.parseSelection(rt, namespace, query.get('labelSelector') ?? '', fieldSelector);
    const sendInitialEvents = query.has('sendInitialEvents') ? query.get('sendInitialEvents') === 'true' : undefined;
    const resourceVersion = query.get('resourceVersion') ?? '';
    const resourceVersionMatch = query.get('resourceVersionMatch') ?? '';
    WatchHub.validate({ resourceVersion, resourceVersionMatch, allowBookmarks: false, sendInitialEvents, timeoutSeconds: undefined });
    if (resourceVersion !== '' && !/^\d+$/.test(resourceVersion))
      throw badRequest(`resourceVersion: Invalid value: "${resourceVersion}": must be a non-negative integer`);
    const timeout = query.get('timeoutSeconds');
    const table = rendering === 'table' ? { columns: rt.columns(), includeObject: query.get('includeObject') ?? 'Metadata' } : undefined;
    hub.serve(
      {
        rt,
        selection,
        resourceVersion,
        resourceVersionMatch,
        allowBookmarks: query.get('allowWatchBookmarks') === 'true',
        sendInitialEvents,
        timeoutSeconds: timeout === null ? 1800 + Math.floor(Math.random() * 1800) : Number(timeout),
        user: user.username,
        table,
      },
      res,
      () => this.deps.logger.debug({ stream: 'watch', resource: rt.resource, user: user.username }, 'watch closed'),
    );
    req.on('error', () => res.destroy());
  }

  private async serveToken(
    req: IncomingMessage,
    res: ServerResponse,
    rt: ResourceType,
    namespace: string,
    name: string,
    pretty: boolean,
  ): Promise<void> {
    if (req.method !== 'POST') throw methodNotAllowed();
    const body = decodeObjectBody(req.headers['content-type'], await readBody(req), 'TokenRequest');
    const sa = this.deps.api.getStored(rt, namespace, name);
    if (sa === undefined) throw notFound(rt, name);
    writeJson(res, 201, tokenRequest(isObject(body) ? body : {}, sa.object, this.deps.authn, this.deps.api.now()), pretty);
  }

  /** The autoscaling/v1 Scale subresource of Deployments and of custom resources with a scale subresource. */
  private async serveScale(
    req: IncomingMessage,
    res: ServerResponse,
    rt: ResourceType,
    namespace: string,
    info: RequestInfo,
    query: URLSearchParams,
    user: UserInfo,
    pretty: boolean,
  ): Promise<void> {
    const { api } = this.deps;
    const paths = rt.scale ?? {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.selector',
    };
    const read = (obj: KubeObject, path: string | undefined): unknown => {
      if (path === undefined) return undefined;
      let v: unknown = obj;
      for (const p of path.replace(/^\./, '').split('.')) v = isObject(v) ? v[p] : undefined;
      return v;
    };
    const scaleOf = (obj: KubeObject) => {
      const selector =
        rt.scale === undefined ? selectorString((obj.spec as Record<string, unknown>)?.selector) : read(obj, paths.labelSelectorPath);
      const status: Record<string, unknown> = { replicas: read(obj, paths.statusReplicasPath) ?? 0 };
      if (selector) status.selector = selector;
      return {
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        metadata: {
          name: obj.metadata.name,
          namespace: obj.metadata.namespace,
          uid: obj.metadata.uid,
          resourceVersion: obj.metadata.resourceVersion,
          creationTimestamp: obj.metadata.creationTimestamp,
        },
        spec: { replicas: read(obj, paths.specReplicasPath) ?? 0 },
        status,
      };
    };
    const current = api.get(rt, namespace, info.name);
    if (info.verb === 'get') return writeJson(res, 200, scaleOf(current), pretty);
    const ctx = this.writeContext(req, query, user);
    let scale: Record<string, any>;
    const text = await readBody(req);
    if (info.verb === 'update') scale = decodeObjectBody(req.headers['content-type'], text, 'Scale') as Record<string, any>;
    else if (info.verb === 'patch') {
      const kind = patchKindOf(req.headers['content-type']);
      const body = decodePatchBody(kind, text);
      scale = (
        kind === 'json' ? applyJsonPatch(scaleOf(current), parseJsonPatch(body as string)) : applyMergePatch(scaleOf(current), body)
      ) as Record<string, any>;
    } else throw methodNotAllowed();
    const replicas = scale?.spec?.replicas;
    if (typeof replicas !== 'number' || replicas < 0) {
      throw new ApiError(
        422,
        'Invalid',
        `Scale.autoscaling "${info.name}" is invalid: spec.replicas: Invalid value: ${String(replicas)}: must be greater than or equal to 0`,
        {},
      );
    }
    const next = deepCopy(current);
    const segments = paths.specReplicasPath.replace(/^\./, '').split('.');
    let target: Record<string, any> = next as Record<string, any>;
    for (const s of segments.slice(0, -1)) target = isObject(target[s]) ? target[s] : (target[s] = {});
    target[segments[segments.length - 1]] = replicas;
    if (scale?.metadata?.resourceVersion) next.metadata.resourceVersion = scale.metadata.resourceVersion;
    const result = api.update(rt, namespace, info.name, next, '', ctx);
    writeJson(res, 200, scaleOf(result.object), pretty);
  }
}

function selectorString(selector: unknown): string {
  if (!isObject(selector)) return '';
  const labels = isObject(selector.matchLabels) ? selector.matchLabels : {};
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${String(labels[k])}`)
    .join(',');
}
