// An in-memory API for unit tests: the write verbs of KubeClient, and a list, over a map, each call recorded in order.
import type { KubeClient, WriteClient } from '../client.js';
import type { DeleteOptions, ListOptions, PatchType, WriteOptions } from '../options.js';
import type { KubeObject, ObjectList } from '../objects.js';
import { ApiError } from '../errors.js';
import { resourceLabel, type Resource } from '../resources.js';

/** One call, as a test asserts on it: `create deployments.apps ns/name`, with the body sent. */
export interface RecordedCall {
  readonly verb: 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete';
  /** `deployments.apps`, `customapps.app.example.com/status`, `events`. */
  readonly resource: string;
  /** `namespace/name`. */
  readonly key: string;
  readonly body?: unknown;
}

function statusError(code: number, reason: string, message: string): ApiError {
  return new ApiError(message, code, { kind: 'Status', status: 'Failure', code, reason, message });
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * A fake API server with the semantics a reconcile relies on: uids and resourceVersions assigned on write,
 * optimistic concurrency (a stale `metadata.resourceVersion` in an update or merge patch is a 409), AlreadyExists,
 * NotFound, delete preconditions, and the status subresource (a status write changes only `status`, a write of the
 * main resource never changes it). Every call
 * is recorded in `calls`; `failNext` makes the next matching call fail, `failEvery` each one until lifted. Objects are stored as JSON copies.
 */
export class RecordingClient implements WriteClient, Pick<KubeClient, 'list'> {
  readonly calls: RecordedCall[] = [];
  private readonly objects = new Map<string, KubeObject>();
  private revision = 100;
  private readonly failures: {
    readonly match: (call: RecordedCall) => boolean;
    readonly error: ApiError;
    /** Fails every matching call until removed, not only the next. */
    readonly lasting?: boolean;
  }[] = [];

  /** Puts an object in place without recording a call (what the cluster held before the test). */
  seed<T extends KubeObject>(resource: Resource, object: T): T {
    const stored = this.stamp(object);
    this.objects.set(this.id(resource, stored.metadata.namespace, stored.metadata.name!), stored);
    return structuredClone(stored) as T;
  }

  /** The stored object, or undefined. */
  stored<T extends KubeObject>(resource: Resource, namespace: string, name: string): T | undefined {
    const object = this.objects.get(this.id(resource, namespace, name));
    return object ? (structuredClone(object) as T) : undefined;
  }

  /** Every stored object of a resource. */
  all<T extends KubeObject>(resource: Resource): T[] {
    const prefix = `${resourceLabel(resource)}/`;
    return [...this.objects].filter(([id]) => id.startsWith(prefix)).map(([, object]) => structuredClone(object) as T);
  }

  /** Makes the next call that `match`es fail with `error`. */
  failNext(match: (call: RecordedCall) => boolean, error: ApiError): void {
    this.failures.push({ match, error });
  }

  /** Makes every call that `match`es fail with `error` (an admission refusal, a quota) until the answered function is called. */
  failEvery(match: (call: RecordedCall) => boolean, error: ApiError): () => void {
    const failure = { match, error, lasting: true };
    this.failures.push(failure);
    return () => {
      const at = this.failures.indexOf(failure);
      if (at >= 0) this.failures.splice(at, 1);
    };
  }

  /** The calls so far as `verb resource key` lines, for exact assertions on order. */
  lines(filter: (call: RecordedCall) => boolean = () => true): string[] {
    return this.calls.filter(filter).map((call) => `${call.verb} ${call.resource} ${call.key}`);
  }

  /**
   * The stored objects of a resource in one namespace or all, with every label of an equality selector (`a=b,c=d`,
   * the only form the operator sends), in one page; recorded as `list resource namespace/*`.
   */
  async list<T extends KubeObject>(resource: Resource, options: ListOptions = {}): Promise<ObjectList<T>> {
    this.record({ verb: 'list', resource: resourceLabel(resource), key: `${options.namespace ?? ''}/*` });
    const wanted = (options.labelSelector ?? '')
      .split(',')
      .filter((term) => term !== '')
      .map((term) => term.split('='));
    const items = this.all<T>(resource).filter(
      (object) =>
        (options.namespace === undefined || object.metadata.namespace === options.namespace) &&
        wanted.every(([key, value]) => object.metadata.labels?.[key!] === value),
    );
    return { metadata: { resourceVersion: String(this.revision) }, items };
  }

  async get<T extends KubeObject>(resource: Resource, namespace: string | undefined, name: string): Promise<T> {
    this.record({ verb: 'get', resource: resourceLabel(resource), key: `${namespace}/${name}` });
    const object = this.objects.get(this.id(resource, namespace, name));
    if (!object) throw statusError(404, 'NotFound', `${resource.plural} "${name}" not found`);
    return structuredClone(object) as T;
  }

  async create<T extends KubeObject>(resource: Resource, namespace: string | undefined, body: T, _options: WriteOptions = {}): Promise<T> {
    const name = body.metadata.name ?? `${body.metadata.namespace}-generated`;
    this.record({ verb: 'create', resource: resourceLabel(resource), key: `${namespace}/${name}`, body });
    const id = this.id(resource, namespace, name);
    if (this.objects.has(id)) throw statusError(409, 'AlreadyExists', `${resource.plural} "${name}" already exists`);
    const stored = this.stamp({ ...structuredClone(body), metadata: { ...body.metadata, name, namespace } });
    this.objects.set(id, stored);
    return structuredClone(stored) as T;
  }

  async replace<T extends KubeObject>(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    body: T,
    options: WriteOptions = {},
  ): Promise<T> {
    const label = resourceLabel(resource) + (options.subresource ? `/${options.subresource}` : '');
    this.record({ verb: 'update', resource: label, key: `${namespace}/${name}`, body });
    const current = this.current(resource, namespace, name);
    this.checkVersion(current, body.metadata.resourceVersion, name);
    const replaced = { ...structuredClone(body), metadata: { ...body.metadata, uid: current.metadata.uid } };
    const stored = this.stamp(this.withinSubresource(current, replaced, options.subresource), current);
    this.objects.set(this.id(resource, namespace, name), stored);
    return structuredClone(stored) as T;
  }

  async patch<T extends KubeObject>(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    options: WriteOptions = {},
  ): Promise<T> {
    const label = resourceLabel(resource) + (options.subresource ? `/${options.subresource}` : '');
    this.record({ verb: 'patch', resource: label, key: `${namespace}/${name}`, body: patch });
    if (type !== 'merge') throw new Error(`RecordingClient: only merge patches are supported, not ${type}`);
    const current = this.current(resource, namespace, name);
    const patched = mergePatch(structuredClone(current), patch) as KubeObject;
    this.checkVersion(current, patched.metadata.resourceVersion, name);
    const stored = this.stamp(this.withinSubresource(current, patched, options.subresource), current);
    this.objects.set(this.id(resource, namespace, name), stored);
    return structuredClone(stored) as T;
  }

  async delete(resource: Resource, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<KubeObject> {
    this.record({ verb: 'delete', resource: resourceLabel(resource), key: `${namespace}/${name}` });
    const current = this.current(resource, namespace, name);
    if (options.preconditions?.uid && options.preconditions.uid !== current.metadata.uid) {
      throw statusError(409, 'Conflict', `precondition failed: uid ${options.preconditions.uid} is not ${current.metadata.uid}`);
    }
    this.objects.delete(this.id(resource, namespace, name));
    return current;
  }

  /** What a write of `next` stores: the status subresource changes status only; the main resource never changes status. */
  private withinSubresource(current: KubeObject, next: KubeObject, subresource: string | undefined): KubeObject {
    const status = (object: KubeObject): unknown => (object as { status?: unknown }).status;
    return (subresource === 'status' ? { ...current, status: status(next) } : { ...next, status: status(current) }) as KubeObject;
  }

  private record(call: RecordedCall): void {
    this.calls.push(call);
    const at = this.failures.findIndex((failure) => failure.match(call));
    if (at < 0) return;
    const failure = this.failures[at]!;
    if (!failure.lasting) this.failures.splice(at, 1);
    throw failure.error;
  }

  private current(resource: Resource, namespace: string | undefined, name: string): KubeObject {
    const current = this.objects.get(this.id(resource, namespace, name));
    if (!current) throw statusError(404, 'NotFound', `${resource.plural} "${name}" not found`);
    return current;
  }

  private checkVersion(current: KubeObject, resourceVersion: string | undefined, name: string): void {
    if (resourceVersion !== undefined && resourceVersion !== current.metadata.resourceVersion) {
      throw statusError(409, 'Conflict', `Operation cannot be fulfilled on "${name}": the object has been modified`);
    }
  }

  private stamp(object: KubeObject, previous?: KubeObject): KubeObject {
    this.revision += 1;
    return {
      ...object,
      metadata: {
        ...object.metadata,
        uid: previous?.metadata.uid ?? object.metadata.uid ?? `uid-${this.revision}`,
        resourceVersion: String(this.revision),
        // As the API server does: a write that changes the spec moves the generation (metadata and status do not).
        generation: previous
          ? (previous.metadata.generation ?? 1) +
            (JSON.stringify((object as { spec?: unknown }).spec) === JSON.stringify((previous as { spec?: unknown }).spec) ? 0 : 1)
          : (object.metadata.generation ?? 1),
      },
    };
  }

  private id(resource: Resource, namespace: string | undefined, name: string): string {
    return `${resourceLabel(resource)}/${namespace ?? ''}/${name}`;
  }
}
