// What the HTTP handlers share: the emulator's parts, one resource request as its handlers read it, and the
// authorization check that answers 403.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Api } from '../api.js';
import type { Attributes, UserInfo } from '../authz.js';
import type { Authenticator } from '../auth.js';
import type { ControllerQueue, Logger } from '../controllers/queue.js';
import type { Counters } from '../counters.js';
import type { Faults } from '../faults.js';
import type { Rendering } from '../http.js';
import type { OpenApiDocuments } from '../openapi.js';
import { forbiddenFor, type RbacAuthorizer } from '../rbac.js';
import type { ResourceRegistry, ResourceType } from '../resources.js';
import type { RequestInfo } from '../route.js';
import type { WatchHub } from '../watch.js';
import type { WriteLog } from '../write-log.js';

export interface ServerDeps {
  readonly api: Api;
  readonly registry: ResourceRegistry;
  readonly hub: WatchHub;
  readonly authn: Authenticator;
  readonly rbac: RbacAuthorizer;
  readonly counters: Counters;
  readonly writes: WriteLog;
  readonly faults: Faults;
  readonly openapi: OpenApiDocuments;
  readonly logger: Logger;
  readonly queue: ControllerQueue;
  readonly version: Record<string, string>;
  readonly serverAddress: () => string;
  readonly admin: (req: IncomingMessage, res: ServerResponse, path: string, body: () => Promise<string>) => Promise<void>;
}

/** One request for a served resource, as the verb handlers need it. */
export interface ResourceCall {
  readonly deps: ServerDeps;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly rt: ResourceType;
  /** The request's namespace, or '' for a cluster-scoped resource. */
  readonly namespace: string;
  readonly info: RequestInfo;
  readonly query: URLSearchParams;
  readonly user: UserInfo;
  readonly rendering: Rendering;
  readonly pretty: boolean;
}

/** Throws 403 unless RBAC allows the request. */
export function authorize(deps: ServerDeps, a: Attributes): void {
  const decision = deps.rbac.authorize(a);
  if (!decision.allowed) throw forbiddenFor(a);
}
