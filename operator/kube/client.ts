// The one API client of the operator: typed REST verbs and raw watch streams over HTTP/1.1 (undici), every request counted.
import { StringDecoder } from 'node:string_decoder';
import type { KubeConfig } from '@kubernetes/client-node';
import { type Connection, connectionFromKubeConfig } from './connection.js';
import { ApiError, type Status } from './errors.js';
import type { KubeObject, ObjectList, RawWatchEvent } from './objects.js';
import {
  type DeleteOptions,
  type ListOptions,
  PATCH_CONTENT_TYPES,
  type PatchType,
  type RequestSample,
  type WatchOptions,
  type WriteOptions,
} from './options.js';
import { resourceLabel, resourcePath, type Resource } from './resources.js';
import { type Call, Transport } from './transport.js';
import { decodeObject, decodeWatchEvent, decodesKind, FrameReader, isProtobuf, PROTOBUF_ACCEPT } from './protobuf.js';
import { parseWatchLine, query } from './wire.js';

export interface KubeClientOptions {
  /** Called after every request (and when a watch ends), for metrics. @default none */
  readonly onRequest?: (sample: RequestSample) => void;
  /** Timeout of non-watch requests. @default 30_000 */
  readonly requestTimeoutMs?: number;
  /** @default 'customapp-operator' */
  readonly userAgent?: string;
  /** Clock for durations. @default performance.now */
  readonly now?: () => number;
  /**
   * Ask for protobuf where the client decodes it (ConfigMaps and Secrets, `protobuf.ts`), as client-go's
   * clients of built-in kinds do: kube-apiserver encodes it with less CPU, and it is read without one string per
   * answer. An API server (or proxy) that does not serve it answers JSON, which is read as ever. @default true
   */
  readonly protobuf?: boolean;
}

/** The verbs a reconcile and its Event recorder use; a {@link KubeClient} has them, and unit tests pass a fake. */
export type WriteClient = Pick<KubeClient, 'get' | 'create' | 'replace' | 'patch' | 'delete'>;

/** The pseudo-resource that discovery requests are counted under in metrics. */
const DISCOVERY: Resource = { group: '', version: '', plural: 'discovery', kind: 'Discovery', namespaced: false };

/**
 * The operator's only way to the API server. It knows nothing of caches or retries: callers own those. Every
 * request is reported to `onRequest` with its verb and resource, which is how metrics and the benchmark count them.
 */
export class KubeClient {
  private readonly transport: Transport;
  private readonly onRequest: (sample: RequestSample) => void;
  private readonly requestTimeoutMs: number;
  private readonly userAgent: string;
  private readonly now: () => number;

  constructor(
    private readonly connection: Connection,
    private readonly options: KubeClientOptions = {},
  ) {
    this.userAgent = options.userAgent ?? 'customapp-operator';
    this.transport = new Transport(connection, this.userAgent);
    this.onRequest = options.onRequest ?? (() => undefined);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.now = options.now ?? (() => performance.now());
  }

  /** Builds a client from a client-node KubeConfig. */
  static async fromKubeConfig(kubeConfig: KubeConfig, options: KubeClientOptions = {}): Promise<KubeClient> {
    return new KubeClient(await connectionFromKubeConfig(kubeConfig), options);
  }

  /** The API server URL. */
  get server(): string {
    return this.connection.server;
  }

  async get<T extends KubeObject>(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    options: { subresource?: string; signal?: AbortSignal } = {},
  ): Promise<T> {
    return this.json<T>({
      method: 'GET',
      verb: 'get',
      resource,
      namespace,
      subresource: options.subresource,
      signal: options.signal,
      path: resourcePath(resource, namespace, name, options.subresource),
    });
  }

  async list<T extends KubeObject>(resource: Resource, options: ListOptions = {}, signal?: AbortSignal): Promise<ObjectList<T>> {
    const path =
      resourcePath(resource, options.namespace) +
      query({
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        limit: options.limit,
        continue: options.continue,
        resourceVersion: options.resourceVersion,
        resourceVersionMatch: options.resourceVersionMatch,
      });
    return this.json<ObjectList<T>>(
      { method: 'GET', verb: 'list', resource, namespace: options.namespace, path, signal },
      options.maxBytes,
      options.onBytes,
    );
  }

  async create<T extends KubeObject>(resource: Resource, namespace: string | undefined, body: T, options: WriteOptions = {}): Promise<T> {
    return this.write<T>('POST', resource, namespace, undefined, body, options);
  }

  /** PUT: a full replace, guarded by `metadata.resourceVersion` when the body carries it (409 when stale). */
  async replace<T extends KubeObject>(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    body: T,
    options: WriteOptions = {},
  ): Promise<T> {
    return this.write<T>('PUT', resource, namespace, name, body, options);
  }

  /** A POST (create, `name` undefined) or a PUT (update) of a whole object. */
  private write<T extends KubeObject>(
    method: 'POST' | 'PUT',
    resource: Resource,
    namespace: string | undefined,
    name: string | undefined,
    body: T,
    options: WriteOptions,
  ): Promise<T> {
    const path = resourcePath(resource, namespace, name, options.subresource) + query({ fieldManager: options.fieldManager });
    const verb = method === 'POST' ? 'create' : 'update';
    return this.json<T>({ method, verb, resource, namespace, subresource: options.subresource, path, body, signal: options.signal });
  }

  async patch<T extends KubeObject>(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    options: WriteOptions = {},
  ): Promise<T> {
    const path =
      resourcePath(resource, namespace, name, options.subresource) +
      query({
        fieldManager: options.fieldManager ?? (type === 'apply' ? this.userAgent : undefined),
        force: type === 'apply' ? options.force : undefined,
      });
    return this.json<T>({
      method: 'PATCH',
      verb: 'patch',
      resource,
      namespace,
      subresource: options.subresource,
      path,
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
      signal: options.signal,
    });
  }

  /** DELETE; answers the object (when finalizers hold it) or a Status. */
  async delete(resource: Resource, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<KubeObject | Status> {
    const body =
      options.propagationPolicy || options.preconditions
        ? { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: options.propagationPolicy, preconditions: options.preconditions }
        : undefined;
    return this.json<KubeObject | Status>({
      method: 'DELETE',
      verb: 'delete',
      resource,
      namespace,
      path: resourcePath(resource, namespace, name),
      body,
      signal: options.signal,
    });
  }

  /**
   * GET of a discovery document (`/api/v1`, `/apis/<group>`, `/apis/<group>/<version>`), counted as verb `get` of
   * resource `discovery`. Rejects with {@link ApiError} (404 when the group or version is not served).
   */
  async discovery<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.json<T>({ method: 'GET', verb: 'get', resource: DISCOVERY, path, signal });
  }

  /**
   * Opens a watch and yields its events as the server sends them. Rejects with {@link ApiError} when the server
   * refuses it (the Status of a 4xx/5xx), and throws from the iteration when the connection breaks or a line is
   * not JSON. Ends when the server closes the stream (timeoutSeconds). Aborting `signal` or leaving the loop
   * destroys the socket.
   */
  async *watch<T extends KubeObject>(
    resource: Resource,
    options: WatchOptions = {},
    signal?: AbortSignal,
  ): AsyncGenerator<RawWatchEvent<T>, void, undefined> {
    const path =
      resourcePath(resource, options.namespace) +
      query({
        watch: 'true',
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        resourceVersion: options.resourceVersion,
        allowWatchBookmarks: options.allowWatchBookmarks,
        timeoutSeconds: options.timeoutSeconds,
      });
    const call: Call = {
      method: 'GET',
      verb: 'watch',
      resource,
      namespace: options.namespace,
      path,
      signal,
      accept: this.accept(resource),
    };
    const started = this.now();
    let code = 0;
    const { response, abort } = await this.transport.send(call, 0);
    try {
      code = response.statusCode;
      if (code !== 200) throw await this.transport.failure(call, response);
      const events = isProtobuf(response.headers['content-type']) ? protobufEvents<T>(call.path) : jsonLineEvents<T>(call.path);
      // A suspended generator keeps every local it ever set, so no local may hold an event (or its bytes) while it
      // waits for the next chunk: the last event of a stream, a Secret's data included, would stay in memory. (So the
      // events are read here, not by a delegated generator: `yield*` keeps the last result it passed on.)
      let event: RawWatchEvent<T> | undefined;
      for await (const chunk of response.chunks()) {
        events.push(chunk);
        while ((event = events.next()) !== undefined) yield event;
      }
      events.end();
      while ((event = events.next()) !== undefined) yield event;
    } catch (error) {
      if (signal?.aborted) return;
      throw error instanceof ApiError
        ? error
        : new ApiError(`watch ${call.path}: ${(error as Error).message}`, 0, undefined, undefined, { cause: error });
    } finally {
      abort();
      this.report(call, code, started);
    }
  }

  /**
   * Fences this client: every request in flight (but watches) is aborted now, and every write from now on
   * (create, update, patch, delete) fails at once with `fenced: <reason>`, without reaching the server. Reads go
   * on. The operator fences its client when it loses the leader Lease, so that nothing it started as leader is
   * written after another process may lead: controller-runtime cancels its context for the same reason.
   */
  fence(reason: string): void {
    this.transport.fence(reason);
  }

  /** Refuses each write for which `check` answers a reason (a Lease past its renew deadline), as the fence does. */
  fenceWhen(check: () => string | undefined): void {
    this.transport.fenceWhen(check);
  }

  /**
   * Another client to the same server with the same options and credentials, over its own transport: its own
   * keep-alive sockets and its own fence, so that fencing either leaves the other writing. The Lease's client is one,
   * so that a stopping operator fences its work and then still releases its Lease (client-go's leader election runs
   * on its own client for the same reason).
   */
  withOwnFence(): KubeClient {
    return new KubeClient(this.connection, this.options);
  }

  /** Why the client is fenced, or undefined while it is not. */
  get fenced(): string | undefined {
    return this.transport.fenced;
  }

  /** Closes idle keep-alive sockets. In-flight requests are not affected. */
  close(): void {
    this.transport.close();
  }

  /**
   * Sends `call` and parses its answer (protobuf or JSON, as the server answered); an answer longer than `maxBytes` is
   * refused (`Answer.read`), and `onBytes` is told the length of one read whole and whether it was protobuf.
   */
  private async json<T>(call: Call, maxBytes?: number, onBytes?: (bytes: number, protobuf: boolean) => void): Promise<T> {
    const started = this.now();
    let code = 0;
    const sent: Call = { ...call, accept: this.accept(call.resource) };
    try {
      const { response, abort } = await this.transport.send(sent, this.requestTimeoutMs);
      try {
        code = response.statusCode;
        if (code < 200 || code >= 300) throw await this.transport.failure(sent, response);
        const bytes = await response.read(maxBytes, `${call.method} ${call.path}`);
        const protobuf = isProtobuf(response.headers['content-type']);
        onBytes?.(bytes.length, protobuf);
        try {
          return (protobuf ? decodeObject(bytes) : JSON.parse(bytes.toString('utf8'))) as T;
        } catch {
          // No excerpt and no SyntaxError cause (V8 quotes the input in it): the answer may hold Secret data.
          const format = protobuf ? 'protobuf' : 'JSON';
          throw new ApiError(`${call.method} ${call.path}: malformed ${format} in a ${code} answer (${bytes.length} bytes)`, code);
        }
      } finally {
        abort();
      }
    } finally {
      this.report(call, code, started);
    }
  }

  /** The media types to ask for: protobuf first for the kinds this client decodes. */
  private accept(resource: Resource): string | undefined {
    return this.options.protobuf !== false && decodesKind(resource.group, resource.kind) ? PROTOBUF_ACCEPT : undefined;
  }

  private report(call: Call, code: number, started: number): void {
    this.onRequest({
      verb: call.verb,
      resource: resourceLabel(call.resource),
      subresource: call.subresource,
      namespace: call.namespace,
      code,
      durationMs: this.now() - started,
    });
  }
}

/** A watch stream's events as its bytes arrive: `next` answers each whole one, `end` marks the stream's end. */
interface EventReader<T> {
  push(chunk: Buffer): void;
  next(): RawWatchEvent<T> | undefined;
  end(): void;
}

/** JSON lines; errors name the watch's path, never the line. */
function jsonLineEvents<T>(path: string): EventReader<T> {
  let pending = '';
  // A decoder, not chunk.toString(): a multi-byte character split across two chunks must not become U+FFFD.
  const decoder = new StringDecoder('utf8');
  return {
    push: (chunk) => {
      pending += decoder.write(chunk);
    },
    next: () => {
      for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
        const line = pending.slice(0, newline).trim();
        pending = pending.slice(newline + 1);
        if (line) return parseWatchLine<T>(line, path);
      }
      return undefined;
    },
    end: () => {
      // The last line may lack its newline.
      pending += `${decoder.end()}\n`;
    },
  };
}

/** Protobuf (`stream=watch`: length-prefixed WatchEvent frames); errors name the path and a frame's length, never its bytes. */
function protobufEvents<T>(path: string): EventReader<T> {
  const frames = new FrameReader();
  return {
    push: (chunk) => frames.push(chunk),
    next: () => {
      let frame: Buffer | undefined;
      try {
        frame = frames.next();
        return frame === undefined ? undefined : (decodeWatchEvent(frame) as RawWatchEvent<T>);
      } catch (error) {
        throw new ApiError(`watch ${path}: ${(error as Error).message}${frame ? ` (a frame of ${frame.length} bytes)` : ''}`, 0);
      }
    },
    end: () => {
      if (frames.pending > 0) throw new ApiError(`watch ${path}: stream ended inside a frame (${frames.pending} bytes)`, 0);
    },
  };
}
