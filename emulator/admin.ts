// The admin HTTP endpoint under /emulator/ (admin token only): counters, open watches, and the fault API.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Counters } from './counters.js';
import { ApiError, badRequest, pathNotFound } from './errors.js';
import type { FailureFault, Faults, LatencyFault, RequestMatch, WatchMatch } from './faults.js';
import { writeJson } from './http.js';
import type { Store } from './store.js';
import type { WatchHub } from './watch.js';

export interface AdminDeps {
  readonly counters: Counters;
  readonly faults: Faults;
  readonly hub: WatchHub;
  readonly store: Store;
}

function parse(text: string): Record<string, any> {
  if (text.trim() === '') return {};
  try {
    const value = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
    return value;
  } catch (e) {
    throw badRequest(`admin request body must be a JSON object: ${(e as Error).message}`);
  }
}

function watchMatch(body: Record<string, any>): WatchMatch {
  return { group: body.group, resource: body.resource, namespace: body.namespace, user: body.user };
}

function requestMatch(body: Record<string, any>): RequestMatch | undefined {
  return body.match === undefined ? undefined : (body.match as RequestMatch);
}

/**
 * Routes:
 *   GET  /emulator/counters                       counters snapshot (requests and open watches)
 *   POST /emulator/counters/reset
 *   GET  /emulator/watches                        open watches
 *   GET  /emulator/faults                         active faults
 *   POST /emulator/faults/fail                    {match?, rate?, code?: 500|429|503, retryAfterSeconds?, times?} → {id}
 *   POST /emulator/faults/latency                 {match?, ms} → {id}
 *   POST /emulator/faults/drop-watches            {group?, resource?, namespace?, user?, mode?: "end"|"reset"} → {dropped}
 *   POST /emulator/faults/expire-next-watch       {group?, resource?, namespace?, user?} → {id}
 *   POST /emulator/faults/expire-next-continue    {match?} → {id}
 *   POST /emulator/faults/compact                 → {resourceVersion}
 *   POST /emulator/faults/history-window          {size} → {size}
 *   POST /emulator/faults/reset
 *   DELETE /emulator/faults/<id>
 */
export function adminHandler(deps: AdminDeps) {
  return async (req: IncomingMessage, res: ServerResponse, path: string, body: () => Promise<string>): Promise<void> => {
    const method = req.method ?? 'GET';
    const route = `${method} ${path.replace(/\/+$/, '')}`;
    const ok = (value: unknown) => writeJson(res, 200, value, false);
    switch (route) {
      case 'GET /emulator/counters':
        return ok(deps.counters.snapshot());
      case 'POST /emulator/counters/reset':
        deps.counters.reset();
        return ok({});
      case 'GET /emulator/watches':
        return ok(
          deps.hub
            .watches()
            .map(({ id, group, resource, namespace, user, startedAt }) => ({ id, group, resource, namespace, user, startedAt })),
        );
      case 'GET /emulator/faults':
        return ok(deps.faults.list());
      case 'POST /emulator/faults/fail': {
        const b = parse(await body());
        const fault: FailureFault = {
          match: requestMatch(b),
          rate: b.rate,
          code: b.code,
          retryAfterSeconds: b.retryAfterSeconds,
          times: b.times,
        };
        if (fault.code !== undefined && ![500, 429, 503].includes(fault.code)) throw badRequest('code must be 500, 429 or 503');
        return ok({ id: deps.faults.failRequests(fault) });
      }
      case 'POST /emulator/faults/latency': {
        const b = parse(await body());
        if (typeof b.ms !== 'number' || b.ms < 0) throw badRequest('ms must be a non-negative number');
        const fault: LatencyFault = { match: requestMatch(b), ms: b.ms };
        return ok({ id: deps.faults.addLatency(fault) });
      }
      case 'POST /emulator/faults/drop-watches': {
        const b = parse(await body());
        return ok({ dropped: deps.faults.dropWatches(watchMatch(b), b.mode === 'reset' ? 'reset' : 'end') });
      }
      case 'POST /emulator/faults/expire-next-watch':
        return ok({ id: deps.faults.expireNextWatch(watchMatch(parse(await body()))) });
      case 'POST /emulator/faults/expire-next-continue':
        return ok({ id: deps.faults.expireNextContinue(requestMatch(parse(await body()))) });
      case 'POST /emulator/faults/compact':
        deps.faults.compact();
        return ok({ resourceVersion: String(deps.store.currentRv) });
      case 'POST /emulator/faults/history-window': {
        const b = parse(await body());
        if (!Number.isInteger(b.size) || b.size < 0) throw badRequest('size must be a non-negative integer');
        deps.faults.setHistoryWindow(b.size);
        return ok({ size: b.size });
      }
      case 'POST /emulator/faults/reset':
        deps.faults.reset();
        return ok({});
      default: {
        const m = /^DELETE \/emulator\/faults\/(\d+)$/.exec(route);
        if (m !== null) {
          if (!deps.faults.remove(Number(m[1]))) throw new ApiError(404, 'NotFound', `fault ${m[1]} not found`, {});
          return ok({});
        }
        throw pathNotFound();
      }
    }
  };
}
