// An in-memory Lease server in virtual time whose network delays, reorders and loses answers as each client's network says.
import type { SchedulerLike } from 'rxjs';
import { ApiError } from '../../kube/errors.js';
import type { Resource } from '../../kube/resources.js';
import type { Lease } from '../../kube/objects.js';
import type { LeaseClient } from '../leader-elector.js';

/** The kinds of request a process sends: its elector's three, and its own work. */
export type RequestKind = 'get' | 'create' | 'replace' | 'write';

/** What the network does with one request: how long it travels, and whether and when its answer comes back. */
export interface Delivery {
  /** The request lands on the server this long after it was sent, whatever the client does meanwhile; or never. */
  readonly transitMs: number | 'lost';
  /** The answer reaches the client this long after the request landed, or never. */
  readonly answer: { readonly delayMs: number } | 'lost';
}

/** Something the server applied, in the order it applied it. */
export type Landed =
  | { readonly seq: number; readonly at: number; readonly kind: 'lease'; readonly holder: string }
  | { readonly seq: number; readonly at: number; readonly kind: 'write'; readonly writer: string };

/** One process's connection: a Lease client for its elector, and a workload write that its fence can stop. */
export interface Connection {
  readonly client: LeaseClient;
  /** A write of the process's own work (a Deployment update, say), refused once fenced. */
  write(): Promise<void>;
  /** Refuses every later write and abandons those in flight (which still land: they were sent). */
  fence(): void;
}

function apiError(code: number, reason: string, message: string): ApiError {
  return new ApiError(message, code, { kind: 'Status', status: 'Failure', code, reason, message });
}

/**
 * One Lease on a server in virtual time. Every request lands after its transit time (even if its client gave up
 * on it), is applied in landing order with the API's optimistic concurrency (a stale resourceVersion is a 409),
 * and its answer comes back later or never, as the client's network decides. Everything that changes the Lease
 * holder and every workload write is recorded in `landed`, in the order the server applied it.
 */
export class FakeLeaseServer {
  readonly landed: Landed[] = [];
  private lease: Lease | undefined;
  private revision = 0;

  constructor(private readonly clock: SchedulerLike) {}

  /** A connection for the process `identity`, whose every request goes through `network`. */
  connect(identity: string, network: (kind: RequestKind) => Delivery): Connection {
    const fence = new AbortController();
    const call = <T>(kind: RequestKind, signal: AbortSignal | undefined, apply: () => T): Promise<T> =>
      this.call(network(kind), signal, apply);
    const client: LeaseClient = {
      get: <T>(_resource: Resource, _namespace: string | undefined, _name: string, options: { signal?: AbortSignal } = {}) =>
        call('get', options.signal, () => {
          if (!this.lease) throw apiError(404, 'NotFound', 'leases "lease" not found');
          return structuredClone(this.lease) as unknown as T;
        }),
      create: <T>(_resource: Resource, _namespace: string | undefined, body: T, options: { signal?: AbortSignal } = {}) =>
        call('create', options.signal, () => {
          if (this.lease) throw apiError(409, 'AlreadyExists', 'leases "lease" already exists');
          return this.store(body as unknown as Lease) as unknown as T;
        }),
      replace: <T>(_resource: Resource, _namespace: string | undefined, _name: string, body: T, options: { signal?: AbortSignal } = {}) =>
        call('replace', options.signal, () => {
          if (!this.lease) throw apiError(404, 'NotFound', 'leases "lease" not found');
          const lease = body as unknown as Lease;
          if (lease.metadata.resourceVersion !== this.lease.metadata.resourceVersion)
            throw apiError(409, 'Conflict', 'the object has been modified');
          return this.store(lease) as unknown as T;
        }),
    };
    return {
      client,
      write: () => {
        if (fence.signal.aborted) return Promise.reject(new ApiError('fenced', 0));
        return call('write', fence.signal, () => {
          this.landed.push({ seq: this.landed.length, at: this.clock.now(), kind: 'write', writer: identity });
        });
      },
      fence: () => fence.abort(),
    };
  }

  private store(lease: Lease): Lease {
    const holder = lease.spec?.holderIdentity ?? '';
    const changed = holder !== (this.lease?.spec?.holderIdentity ?? undefined);
    this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.revision) } };
    if (changed) this.landed.push({ seq: this.landed.length, at: this.clock.now(), kind: 'lease', holder });
    return structuredClone(this.lease);
  }

  /** Sends a request: it lands (and is applied) after its transit; its answer, if any, comes back after its delay. */
  private call<T>(delivery: Delivery, signal: AbortSignal | undefined, apply: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new ApiError('aborted before it was sent', 0));
        return;
      }
      let settled = false;
      const onAbort = (): void => {
        settled = true;
        reject(new ApiError('aborted', 0));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (delivery.transitMs === 'lost') return;
      this.clock.schedule(() => {
        let outcome: { readonly value: T } | { readonly error: unknown };
        try {
          outcome = { value: apply() };
        } catch (error) {
          outcome = { error };
        }
        if (delivery.answer === 'lost') return;
        this.clock.schedule(() => {
          if (settled) return;
          settled = true;
          signal?.removeEventListener('abort', onAbort);
          if ('value' in outcome) resolve(outcome.value);
          else reject(outcome.error);
        }, delivery.answer.delayMs);
      }, delivery.transitMs);
    });
  }
}
