// The request pipeline on node:http: health, authentication and impersonation, the admin endpoint, fault injection,
// counting and authorization, then the handlers (handlers/), and every error answered as a Status.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Attributes, nonResourceAttributes, type UserInfo } from './authz.js';
import { ApiError, badRequest, internalError, PageNotFound, tooManyRequests, unauthorized } from './errors.js';
import type { FaultRequest } from './faults.js';
import { readBody, wantsPretty, writeJson } from './http.js';
import { authorize, type ServerDeps } from './handlers/deps.js';
import { serveNonResource } from './handlers/non-resource.js';
import { serveResource } from './handlers/resource.js';
import { requestInfo } from './route.js';

export type { ServerDeps } from './handlers/deps.js';

const healthPaths = new Set(['/healthz', '/livez', '/readyz']);

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
      if (info.resourceRequest) this.deps.writes.begin(req, res, { ...fault, name: info.name });
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
        const method = (req.method ?? 'GET').toLowerCase();
        authorize(this.deps, nonResourceAttributes(user, method === 'head' ? 'get' : method, path));
        serveNonResource(this.deps, req, res, path, query, pretty);
        return;
      }
      await serveResource(this.deps, req, res, info, query, user, fault, pretty);
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
    for (const a of attributes) authorize(this.deps, a);
    const impliedGroups = sa !== null && groups.length === 0 ? ['system:serviceaccounts', `system:serviceaccounts:${sa[1]}`] : [];
    const all = [...groups, ...impliedGroups];
    if (username !== 'system:anonymous' && !all.includes('system:authenticated')) all.push('system:authenticated');
    return { username, groups: all };
  }
}
