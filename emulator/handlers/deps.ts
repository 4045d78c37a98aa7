// What the HTTP handlers share: the emulator's parts, and the authorization check that answers 403.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Api } from '../api.js';
import type { Attributes } from '../authz.js';
import type { Authenticator } from '../auth.js';
import type { ControllerQueue, Logger } from '../controllers/queue.js';
import type { Counters } from '../counters.js';
import type { Faults } from '../faults.js';
import type { OpenApiDocuments } from '../openapi.js';
import { forbiddenFor, type RbacAuthorizer } from '../rbac.js';
import type { ResourceRegistry } from '../resources.js';
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

/** Throws 403 unless RBAC allows the request. */
export function authorize(deps: ServerDeps, a: Attributes): void {
  const decision = deps.rbac.authorize(a);
  if (!decision.allowed) throw forbiddenFor(a);
}
