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
  | { readonly seq: number; readonly at: number; readonly kind: 'lease'; readonly name: string; readonly holder: string }
  | { readonly seq: number; readonly at: number; readonly kind: 'write'; readonly writer: string };

/** One process's connection: a Lease client for its elector, and a workload write that its fence can stop. */
export interface Connection {
  readonly client: LeaseClient;
  /** A write of the process's own work (a Deployment update, say), refused once fenced. */
  write(): Promise<void>;
  /**
   * A write of the process's own work that `apply` carries out on the server when it lands; refused once fenced.
   * `signal` abandons it (it still lands, if it was sent).
   */
  request<T>(apply: () => T, signal?: AbortSignal): Promise<T>;
  /** Refuses every later write and abandons those in flight (which still land: they were sent). */
  fence(): void;
}

function apiError(code: number, reason: string, message: string): ApiError {
  return new ApiError(message, code, { kind: 'Status', status: 'Failure', code, reason, message });
}

/** A watch of every Lease: each change delivers a snapshot of all of them, in the server's order. */
export interface LeaseWatch {
  /** How long the next snapshot takes to arrive, from now (never earlier than the one before it: a watch is ordered). */
  readonly delayMs: () => number;
  readonly deliver: (leases: readonly Lease[]) => void;
}

/**
 * Leases, by name, on a server in virtual time. Every request lands after its transit time (even if its client gave
 * up on it), is applied in landing order with the API's optimistic concurrency (a stale resourceVersion is a 409),
 * and its answer comes back later or never, as the client's network decides. Everything that changes a Lease's
 * holder and every workload write is recorded in `landed`, in the order the server applied it. A watch gets a
 * snapshot of every Lease after each change, in order, as late as its network says.
 */
export class FakeLeaseServer {
  readonly landed: Landed[] = [];
  private readonly leases = new Map<string, Lease>();
  private readonly watches = new Set<LeaseWatch & { arrivesAt: number }>();
  private revision = 0;

  constructor(private readonly clock: SchedulerLike) {}

  /** A connection for the process `identity`, whose every request goes through `network`. */
  connect(identity: string, network: (kind: RequestKind) => Delivery): Connection {
    const fence = new AbortController();
    const call = <T>(kind: RequestKind, signal: AbortSignal | undefined, apply: () => T): Promise<T> =>
      this.call(network(kind), signal, apply);
    const client: LeaseClient = {
      get: <T>(_resource: Resource, _namespace: string | undefined, name: string, options: { signal?: AbortSignal } = {}) =>
        call('get', options.signal, () => {
          const lease = this.leases.get(name);
          if (!lease) throw apiError(404, 'NotFound', `leases "${name}" not found`);
          return structuredClone(lease) as unknown as T;
        }),
      create: <T>(_resource: Resource, _namespace: string | undefined, body: T, options: { signal?: AbortSignal } = {}) =>
        call('create', options.signal, () => {
          const name = (body as unknown as Lease).metadata.name ?? '';
          if (this.leases.has(name)) throw apiError(409, 'AlreadyExists', `leases "${name}" already exists`);
          return this.store(body as unknown as Lease) as unknown as T;
        }),
      replace: <T>(_resource: Resource, _namespace: string | undefined, name: string, body: T, options: { signal?: AbortSignal } = {}) =>
        call('replace', options.signal, () => {
          const current = this.leases.get(name);
          if (!current) throw apiError(404, 'NotFound', `leases "${name}" not found`);
          const lease = body as unknown as Lease;
          if (lease.metadata.resourceVersion !== current.metadata.resourceVersion)
            throw apiError(409, 'Conflict', 'the object has been modified');
          return this.store(lease) as unknown as T;
        }),
    };
    const request = <T>(apply: () => T, signal?: AbortSignal): Promise<T> => {
      if (fence.signal.aborted) return Promise.reject(new ApiError('fenced', 0));
      if (!signal) return call('write', fence.signal, apply);
      // Either the fence or the caller's signal abandons it: listeners on both (the sources hold them strongly).
      const either = new AbortController();
      const abandon = (): void => either.abort();
      fence.signal.addEventListener('abort', abandon, { once: true });
      signal.addEventListener('abort', abandon, { once: true });
      if (signal.aborted) abandon();
      return call('write', either.signal, apply).finally(() => {
        fence.signal.removeEventListener('abort', abandon);
        signal.removeEventListener('abort', abandon);
      });
    };
    return {
      client,
      write: () =>
        request(() => {
          this.landed.push({ seq: this.landed.length, at: this.clock.now(), kind: 'write', writer: identity });
        }),
      request,
      fence: () => fence.abort(),
    };
  }

  /** Starts a watch of every Lease: the current snapshot first, then one after each change. Returns its stop. */
  watch(watch: LeaseWatch): () => void {
    const entry = { ...watch, arrivesAt: this.clock.now() };
    this.watches.add(entry);
    this.send(entry);
    return () => this.watches.delete(entry);
  }

  /** Every Lease as it is now. */
  snapshot(): Lease[] {
    return [...this.leases.values()].map((lease) => structuredClone(lease));
  }

  private send(watch: LeaseWatch & { arrivesAt: number }): void {
    const leases = this.snapshot();
    const now = this.clock.now();
    watch.arrivesAt = Math.max(watch.arrivesAt, now + watch.delayMs());
    this.clock.schedule(() => {
      if (this.watches.has(watch)) watch.deliver(leases);
    }, watch.arrivesAt - now);
  }

  private store(lease: Lease): Lease {
    const name = lease.metadata.name ?? '';
    const holder = lease.spec?.holderIdentity ?? '';
    const changed = holder !== (this.leases.get(name)?.spec?.holderIdentity ?? undefined);
    const stored = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.revision) } };
    this.leases.set(name, stored);
    if (changed) this.landed.push({ seq: this.landed.length, at: this.clock.now(), kind: 'lease', name, holder });
    for (const watch of this.watches) this.send(watch);
    return structuredClone(stored);
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
