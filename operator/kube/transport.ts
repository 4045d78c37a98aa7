// The HTTP side of the API client: TLS and keep-alive, credentials, timeouts, aborts, and the fence that stops writes.
import type { IncomingHttpHeaders } from 'node:http';
import { Client, type Dispatcher } from 'undici';
import type { Connection } from './connection.js';
import { ANSWER_TOO_LARGE, ApiError, type Status } from './errors.js';
import type { Verb } from './options.js';
import type { Resource } from './resources.js';
import { decodeObject, isProtobuf } from './protobuf.js';
import { retryAfter, statusFromBody } from './wire.js';

/** One request, as the client describes it. */
export interface Call {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly verb: Verb;
  readonly resource: Resource;
  readonly namespace?: string;
  readonly subresource?: string;
  readonly body?: unknown;
  readonly contentType?: string;
  /** The answer's media types. @default 'application/json' */
  readonly accept?: string;
  readonly signal?: AbortSignal;
}

/** An answer whose head has arrived: its status and headers, and its body read whole or as it comes. */
export interface Answer {
  readonly statusCode: number;
  /** Lower-case names. */
  readonly headers: IncomingHttpHeaders;
  /**
   * The whole body. Past `maxBytes` it stops reading, drops the connection and rejects with an {@link ApiError} of
   * reason `AnswerTooLarge` naming `what`: the bytes already read are let go.
   */
  read(maxBytes?: number, what?: string): Promise<Buffer>;
  /** The body's chunks as they arrive (a watch); a connection lost before the server ended the body throws. */
  chunks(): AsyncIterableIterator<Buffer>;
}

/** Methods sent again after a stale keep-alive socket: those HTTP calls idempotent (a PUT carries its resourceVersion). */
const REPLAYABLE: ReadonlySet<Call['method']> = new Set(['GET', 'PUT', 'DELETE']);
/**
 * Stale sockets one request may meet before its error is final: an API server that closes idle connections closes
 * the idle connections together, so a request may draw several in turn; a new socket is never stale.
 */
const MAX_STALE_SOCKETS = 8;
/** How a socket the server closed while idle fails the request written on it: reset, or written after the close. */
const STALE_SOCKET_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE']);

/**
 * How long an idle keep-alive connection is kept: under kube-apiserver's 90 s idle timeout, so that the server seldom
 * closes one as it is reused (client-go keeps them 90 s; undici's default of 4 s would mean a new TLS handshake after
 * every quiet spell).
 */
const KEEP_ALIVE_MS = 60_000;
/** Idle connections kept for reuse; more (after a burst of concurrent requests) are closed. */
const MAX_IDLE_CONNECTIONS = 64;
/** A body's unread bytes past which its connection stops reading until the reader catches up (a watch's backpressure). */
const HIGH_WATER_BYTES = 1 << 20;
/** What undici's errors for a request that waited too long are coded. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * One keep-alive connection: an undici Client carrying one request at a time. The transport keeps its own idle list
 * (not undici's Pool) because a request must know whether it went out on a socket that already served others: only
 * such a socket can be stale.
 */
interface Line {
  readonly client: Client;
  /** Whether the client's socket is open; a client connects when a request needs it, so an open socket was used. */
  open: boolean;
}

/**
 * Carries requests to the API server over keep-alive connections (undici's HTTP/1.1 client: about half of
 * node:https's CPU per request). It also holds the fence: once fenced, every request in flight but a watch is
 * aborted and every write is refused before it is sent.
 */
export class Transport {
  private readonly origin: string;
  /** The server URL's path (a proxy's prefix), put before every request's path. */
  private readonly prefix: string;
  private readonly idle: Line[] = [];
  /**
   * The non-watch requests in flight, from the moment {@link Transport.send} admits them (before it awaits the
   * credentials), so that {@link Transport.fence} aborts them wherever they are.
   */
  private readonly inFlight = new Set<Fenceable>();
  /** Why writes are refused, once fenced. */
  private fencedBecause: string | undefined;
  /** Asked before each write is sent: a reason refuses it (see {@link Transport.fenceWhen}). */
  private writeCheck: (() => string | undefined) | undefined;

  constructor(
    private readonly connection: Connection,
    private readonly userAgent: string,
  ) {
    const server = new URL(connection.server);
    this.origin = server.origin;
    this.prefix = server.pathname.replace(/\/+$/, '');
  }

  /** Aborts every request in flight but watches, and refuses every later write. */
  fence(reason: string): void {
    this.fencedBecause ??= reason;
    for (const request of [...this.inFlight]) request.fence();
  }

  /**
   * Asks `check` before each write is sent (at the same two points as the fence): a reason refuses the write as a
   * fence would, without fencing for good. A Lease's renew deadline checked here holds even when the process was
   * frozen past it and its timers have not run yet.
   */
  fenceWhen(check: () => string | undefined): void {
    this.writeCheck = check;
  }

  /** Why writes are refused, or undefined while they are not. */
  get fenced(): string | undefined {
    return this.fencedBecause;
  }

  /** Closes idle keep-alive connections. In-flight requests are not affected. */
  close(): void {
    for (const line of this.idle.splice(0)) void line.client.destroy().catch(() => undefined);
  }

  /** The ApiError of an error answer, with the server's Status and Retry-After. */
  async failure(call: Call, response: Answer): Promise<ApiError> {
    const body = await response.read().catch(() => Buffer.alloc(0));
    const protobuf = isProtobuf(response.headers['content-type']);
    const text = protobuf ? '' : body.toString('utf8');
    const status = protobuf ? protobufStatus(body) : statusFromBody(text);
    const message = status?.message ?? (text.slice(0, 200) || 'no message');
    return new ApiError(
      `${call.method} ${call.path}: ${response.statusCode} ${status?.reason ?? ''}: ${message}`.replace(/ {2}/, ' '),
      response.statusCode,
      status,
      retryAfter(response.headers, status),
    );
  }

  /**
   * Sends one request: credentials and user agent added, the body serialized, `call.signal` and a fence abort it,
   * a timeout (0: none, for watches) fails it when the server stays silent that long. Resolves with the answer as
   * soon as its head arrives; `abort` releases it (dropping the connection unless the answer was read whole).
   */
  async send(call: Call, timeoutMs: number): Promise<{ response: Answer; abort: () => void }> {
    this.refuse(call);
    // Registered before the first await: a fence that comes while the credentials are fetched (an exec plugin, a
    // token file) aborts this request too, and nothing can interleave between the last check and the socket.
    const fenceable = new Fenceable();
    if (call.verb !== 'watch') this.inFlight.add(fenceable);
    let headers: Record<string, string>;
    try {
      headers = { accept: call.accept ?? 'application/json', 'user-agent': this.userAgent, ...(await this.connection.authHeaders()) };
      if (fenceable.fenced) throw this.fencedError(call);
      this.refuse(call);
    } catch (error) {
      this.inFlight.delete(fenceable);
      throw error;
    }
    const payload = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body));
    if (payload) headers['content-type'] = call.contentType ?? 'application/json';
    const options: Dispatcher.DispatchOptions = {
      path: this.prefix + call.path,
      method: call.method,
      headers,
      body: payload,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    };
    for (let attempt = 1; ; attempt += 1) {
      let staleSocket = false;
      try {
        return await this.dispatch(call, options, { timeoutMs, fenceable }, () => {
          staleSocket = true;
        });
      } catch (error) {
        if (!staleSocket || !REPLAYABLE.has(call.method) || attempt >= MAX_STALE_SOCKETS) throw error;
      }
      // The server closed an idle keep-alive connection as this request went out on it, so it never read the request:
      // sent again (as Go's transport does for idempotent requests), on the next idle connection or a new one, unless
      // something stopped it meanwhile. Every connection the server closed at once is used up in turn, a new one last.
      this.refuse(call);
      if (fenceable.fenced) throw this.fencedError(call);
      if (call.verb !== 'watch') this.inFlight.add(fenceable);
    }
  }

  /**
   * One attempt of {@link send} on an idle connection or a new one. `onStaleSocket` is told, before the rejection,
   * when the request failed before any answer on a socket that had served others (the server had closed it).
   */
  private dispatch(
    call: Call,
    options: Dispatcher.DispatchOptions,
    sending: { timeoutMs: number; fenceable: Fenceable },
    onStaleSocket: () => void,
  ): Promise<{ response: Answer; abort: () => void }> {
    const { timeoutMs, fenceable } = sending;
    const line = this.idle.pop() ?? this.newLine();
    const reused = line.open;
    return new Promise((resolve, reject) => {
      let body: Body | undefined;
      let controller: Dispatcher.DispatchController | undefined;
      /** Why the request was stopped before undici handed it a controller. */
      let stoppedEarly: Error | undefined;
      let released = false;
      const stop = (reason: Error): void => {
        if (controller) controller.abort(reason);
        else stoppedEarly ??= reason;
      };
      const onAbort = (): void => stop(new ApiError(`${call.method} ${call.path}: aborted`, 0));
      const onFence = (): void => stop(this.fencedError(call));
      call.signal?.addEventListener('abort', onAbort, { once: true });
      fenceable.onFence = onFence;
      const detach = (): void => {
        call.signal?.removeEventListener('abort', onAbort);
        fenceable.onFence = undefined;
        this.inFlight.delete(fenceable);
      };
      /** Gives the connection back once its request is over; one that failed goes last, so live ones are tried first. */
      const release = (failed: boolean): void => {
        if (released) return;
        released = true;
        if (failed) line.open = false;
        this.putBack(line, failed);
      };
      const abort = (): void => {
        detach();
        if (body && !body.ended) stop(new ApiError(`${call.method} ${call.path}: released before its end`, 0));
      };
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (started) => {
          controller = started;
          if (stoppedEarly) started.abort(stoppedEarly);
        },
        onResponseStart: (started, statusCode, headers) => {
          body = new Body(started, statusCode, headers, call);
          resolve({ response: body, abort });
        },
        onResponseData: (_controller, chunk) => body?.push(chunk),
        onResponseEnd: () => {
          body?.end();
          release(false);
        },
        onResponseError: (_controller, error) => {
          release(true);
          const failure = this.failed(call, error, timeoutMs);
          if (body) {
            body.fail(failure);
            return;
          }
          detach();
          if (reused && isSocketError(error)) onStaleSocket();
          reject(failure);
        },
      };
      try {
        line.client.dispatch(options, handler);
      } catch (error) {
        release(true);
        detach();
        reject(this.failed(call, error as Error, timeoutMs));
      }
    });
  }

  /** A new connection (undici connects it when its first request goes out). */
  private newLine(): Line {
    const { ca, cert, key, rejectUnauthorized } = this.connection;
    const client = new Client(this.origin, {
      connect: { ca, cert, key, rejectUnauthorized },
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
      pipelining: 1,
    });
    const line: Line = { client, open: false };
    client.on('connect', () => {
      line.open = true;
    });
    client.on('disconnect', () => {
      line.open = false;
    });
    return line;
  }

  private putBack(line: Line, last: boolean): void {
    if (this.idle.length >= MAX_IDLE_CONNECTIONS) {
      void line.client.destroy().catch(() => undefined);
      return;
    }
    if (last) this.idle.unshift(line);
    else this.idle.push(line);
  }

  /** An undici error as the caller's ApiError, named by the request (and a timeout by its length). */
  private failed(call: Call, error: Error, timeoutMs: number): ApiError {
    if (error instanceof ApiError) return error;
    const code = (error as NodeJS.ErrnoException).code ?? '';
    const message = TIMEOUT_CODES.has(code) ? `no answer within ${timeoutMs} ms` : error.message;
    return new ApiError(`${call.method} ${call.path}: ${message}`, 0, undefined, undefined, { cause: error });
  }

  /** Throws when `call` may not be sent: its own signal aborted, or a write while fenced or refused by the write check. */
  private refuse(call: Call): void {
    if (call.signal?.aborted)
      throw new ApiError(`${call.method} ${call.path}: aborted`, 0, undefined, undefined, { cause: call.signal.reason });
    if (call.method === 'GET') return;
    if (this.fencedBecause !== undefined) throw this.fencedError(call);
    const late = this.writeCheck?.();
    if (late !== undefined) throw new ApiError(`${call.method} ${call.path}: fenced: ${late}`, 0);
  }

  private fencedError(call: Call): ApiError {
    return new ApiError(`${call.method} ${call.path}: fenced: ${this.fencedBecause}`, 0);
  }
}

/**
 * A request the fence may stop: a flag and one callback, lighter than an AbortController and its EventTarget, whose
 * listeners cost more than the rest of a request's bookkeeping.
 */
class Fenceable {
  fenced = false;
  /** Stops the attempt on the wire, if one is. */
  onFence: (() => void) | undefined;

  fence(): void {
    this.fenced = true;
    this.onFence?.();
  }
}

/** Whether `error` is the socket failing under a request (reset, closed, written after the close), not a timeout or abort. */
function isSocketError(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return code === 'UND_ERR_SOCKET' || STALE_SOCKET_CODES.has(code);
}

/**
 * An answer's body as undici hands it over: chunks kept until they are read, the connection paused while more than
 * {@link HIGH_WATER_BYTES} wait for a reader that streams (or has not come yet). A chunk read is let go at once, and
 * the stream's reader is a plain object, not a generator, whose locals would keep the last chunk (a Secret's bytes)
 * while it waits for the next. Exported for its tests.
 */
export class Body implements Answer {
  private queue: Buffer[] = [];
  private queued = 0;
  private error: ApiError | undefined;
  /** Whether the body ended or failed. */
  ended = false;
  /** Whether a reader takes the body whole (never paused, held to `limit`). */
  private whole = false;
  private limit = Number.POSITIVE_INFINITY;
  private limitWhat = 'answer';
  /** Wakes the reader waiting for more. */
  private wake: (() => void) | undefined;

  constructor(
    private readonly controller: Dispatcher.DispatchController,
    readonly statusCode: number,
    readonly headers: IncomingHttpHeaders,
    private readonly call: Call,
  ) {}

  push(chunk: Buffer): void {
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.whole) this.holdToLimit();
    else if (this.queued > HIGH_WATER_BYTES && !this.controller.paused) this.controller.pause();
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  /** Ends the body with `error`: a whole read drops what it read; a stream's reader gets the chunks that came first. */
  fail(error: ApiError): void {
    if (this.ended) return;
    this.ended = true;
    this.error = error;
    if (this.whole) {
      this.queue = [];
      this.queued = 0;
    }
    this.notify();
  }

  async read(maxBytes = Number.POSITIVE_INFINITY, what = 'answer'): Promise<Buffer> {
    this.whole = true;
    this.limit = maxBytes;
    this.limitWhat = what;
    this.holdToLimit();
    if (this.controller.paused) this.controller.resume();
    while (!this.ended) await new Promise<void>((resolve) => (this.wake = resolve));
    if (this.error) throw this.error;
    const chunks = this.queue;
    this.queue = [];
    this.queued = 0;
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }

  chunks(): AsyncIterableIterator<Buffer> {
    const next = async (): Promise<IteratorResult<Buffer, undefined>> => {
      for (;;) {
        const chunk = this.queue.shift();
        if (chunk !== undefined) {
          this.queued -= chunk.length;
          if (this.controller.paused && this.queued <= HIGH_WATER_BYTES) this.controller.resume();
          return { value: chunk, done: false };
        }
        if (this.error) throw new ApiError(`watch ${this.call.path}: connection closed mid-stream (${this.error.message})`, 0);
        if (this.ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    };
    const done = async (): Promise<IteratorResult<Buffer, undefined>> => ({ value: undefined, done: true });
    return {
      next,
      return: done,
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /** Past the limit of a whole read: stops reading, drops the connection and fails with `AnswerTooLarge`. */
  private holdToLimit(): void {
    if (this.queued <= this.limit || this.ended) return;
    this.fail(new ApiError(`${this.limitWhat}: answer larger than ${this.limit} bytes`, 0, { kind: 'Status', reason: ANSWER_TOO_LARGE }));
    this.controller.abort(this.error!);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** The metav1.Status of a protobuf error answer, if it is one. */
function protobufStatus(body: Buffer): Status | undefined {
  try {
    const object = decodeObject(body) as Status;
    return object.kind === 'Status' ? object : undefined;
  } catch {
    return undefined;
  }
}
