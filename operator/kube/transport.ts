// The HTTP side of the API client: TLS and keep-alive, credentials, timeouts, aborts, and the fence that stops writes.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Connection } from './connection.js';
import { ApiError, type Status } from './errors.js';
import type { Verb } from './options.js';
import type { Resource } from './resources.js';
import { decodeObject, isProtobuf } from './protobuf.js';
import { readBytes, retryAfter, statusFromBody } from './wire.js';

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

/** Methods sent again after a stale keep-alive socket: those HTTP calls idempotent (a PUT carries its resourceVersion). */
const REPLAYABLE: ReadonlySet<Call['method']> = new Set(['GET', 'PUT', 'DELETE']);
/**
 * Stale sockets one request may meet before its error is final: an API server that closes idle connections closes
 * the agent's idle sockets together, so a request may draw several in turn; a new socket is never stale.
 */
const MAX_STALE_SOCKETS = 8;
/** How a socket the server closed while idle fails the request written on it: reset, or written after the close. */
const STALE_SOCKET_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE']);

/**
 * Carries requests to the API server over one keep-alive agent. It also holds the fence: once fenced, every
 * request in flight but a watch is aborted and every write is refused before it is sent.
 */
export class Transport {
  private readonly agent: HttpAgent | HttpsAgent;
  private readonly secure: boolean;
  /**
   * The non-watch requests in flight, from the moment {@link Transport.send} admits them (before it awaits the
   * credentials), so that {@link Transport.fence} aborts them wherever they are.
   */
  private readonly inFlight = new Set<AbortController>();
  /** Why writes are refused, once fenced. */
  private fencedBecause: string | undefined;
  /** Asked before each write is sent: a reason refuses it (see {@link Transport.fenceWhen}). */
  private writeCheck: (() => string | undefined) | undefined;

  constructor(
    private readonly connection: Connection,
    private readonly userAgent: string,
  ) {
    this.secure = connection.server.startsWith('https:');
    this.agent = this.secure
      ? new HttpsAgent({
          keepAlive: true,
          ca: connection.ca,
          cert: connection.cert,
          key: connection.key,
          rejectUnauthorized: connection.rejectUnauthorized,
        })
      : new HttpAgent({ keepAlive: true });
  }

  /** Aborts every request in flight but watches, and refuses every later write. */
  fence(reason: string): void {
    this.fencedBecause ??= reason;
    for (const request of [...this.inFlight]) request.abort();
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

  /** Closes idle keep-alive sockets. In-flight requests are not affected. */
  close(): void {
    this.agent.destroy();
  }

  /** The ApiError of an error answer, with the server's Status and Retry-After. */
  async failure(call: Call, response: IncomingMessage): Promise<ApiError> {
    const body = await readBytes(response).catch(() => Buffer.alloc(0));
    const protobuf = isProtobuf(response.headers['content-type']);
    const text = protobuf ? '' : body.toString('utf8');
    const status = protobuf ? protobufStatus(body) : statusFromBody(text);
    const message = status?.message ?? (text.slice(0, 200) || response.statusMessage || 'no message');
    return new ApiError(
      `${call.method} ${call.path}: ${response.statusCode} ${status?.reason ?? ''}: ${message}`.replace(/ {2}/, ' '),
      response.statusCode ?? 0,
      status,
      retryAfter(response, status),
    );
  }

  /**
   * Sends one request: credentials and user agent added, the body serialized, `call.signal` and a fence abort it,
   * a timeout (0: none, for watches) destroys it. Resolves with the answer as soon as its head arrives; `abort`
   * releases it (destroying the socket unless the answer was read whole).
   */
  async send(call: Call, timeoutMs: number): Promise<{ response: IncomingMessage; abort: () => void }> {
    this.refuse(call);
    // Registered before the first await: a fence that comes while the credentials are fetched (an exec plugin, a
    // token file) aborts this request too, and nothing can interleave between the last check and the socket.
    const fenceable = new AbortController();
    if (call.verb !== 'watch') this.inFlight.add(fenceable);
    let headers: OutgoingHttpHeaders;
    try {
      headers = { accept: call.accept ?? 'application/json', 'user-agent': this.userAgent, ...(await this.connection.authHeaders()) };
      if (fenceable.signal.aborted) throw this.fencedError(call);
      this.refuse(call);
    } catch (error) {
      this.inFlight.delete(fenceable);
      throw error;
    }
    const payload = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body));
    if (payload) {
      headers['content-type'] = call.contentType ?? 'application/json';
      headers['content-length'] = payload.length;
    }
    const url = new URL(call.path, this.connection.server);
    for (let attempt = 1; ; attempt += 1) {
      let staleSocket = false;
      try {
        return await this.dispatch(call, url, { headers, payload, timeoutMs, fenceable }, () => {
          staleSocket = true;
        });
      } catch (error) {
        if (!staleSocket || !REPLAYABLE.has(call.method) || attempt >= MAX_STALE_SOCKETS) throw error;
      }
      // The server closed an idle keep-alive connection as this request went out on it, so it never read the request:
      // sent again (as Go's transport does for idempotent requests), on the next idle socket or a new one, unless
      // something stopped it meanwhile. Every socket the server closed at once is used up in turn, a new one last.
      this.refuse(call);
      if (fenceable.signal.aborted) throw this.fencedError(call);
      if (call.verb !== 'watch') this.inFlight.add(fenceable);
    }
  }

  /**
   * One attempt of {@link send} on the agent. `onStaleSocket` is told, before the rejection, when the request failed
   * on a reused keep-alive socket that the server had closed (reset or closed before any answer).
   */
  private dispatch(
    call: Call,
    url: URL,
    sending: { headers: OutgoingHttpHeaders; payload: Buffer | undefined; timeoutMs: number; fenceable: AbortController },
    onStaleSocket: () => void,
  ): Promise<{ response: IncomingMessage; abort: () => void }> {
    const { headers, payload, timeoutMs, fenceable } = sending;
    const send = this.secure ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const request = send(url, { method: call.method, headers, agent: this.agent });
      let answer: IncomingMessage | undefined;
      const onAbort = (): void => {
        request.destroy(new ApiError(`${call.method} ${call.path}: aborted`, 0));
      };
      call.signal?.addEventListener('abort', onAbort, { once: true });
      const onFence = (): void => {
        request.destroy(this.fencedError(call));
      };
      fenceable.signal.addEventListener('abort', onFence, { once: true });
      const onClose = (): void => {
        this.inFlight.delete(fenceable);
      };
      request.once('close', onClose);
      const abort = (): void => {
        call.signal?.removeEventListener('abort', onAbort);
        fenceable.signal.removeEventListener('abort', onFence);
        this.inFlight.delete(fenceable);
        if (!request.destroyed && !(answer?.complete ?? false)) request.destroy();
      };
      if (timeoutMs > 0) {
        request.setTimeout(timeoutMs, () =>
          request.destroy(new ApiError(`${call.method} ${call.path}: no answer within ${timeoutMs} ms`, 0)),
        );
      }
      request.once('response', (response) => {
        answer = response;
        resolve({ response, abort });
      });
      request.once('error', (error) => {
        call.signal?.removeEventListener('abort', onAbort);
        fenceable.signal.removeEventListener('abort', onFence);
        // Here, not at 'close' (which may come after a new attempt registered the same controller).
        request.off('close', onClose);
        this.inFlight.delete(fenceable);
        if (answer === undefined && request.reusedSocket && STALE_SOCKET_CODES.has((error as NodeJS.ErrnoException).code ?? ''))
          onStaleSocket();
        reject(
          error instanceof ApiError
            ? error
            : new ApiError(`${call.method} ${call.path}: ${error.message}`, 0, undefined, undefined, { cause: error }),
        );
      });
      request.end(payload);
    });
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

/** The metav1.Status of a protobuf error answer, if it is one. */
function protobufStatus(body: Buffer): Status | undefined {
  try {
    const object = decodeObject(body) as Status;
    return object.kind === 'Status' ? object : undefined;
  } catch {
    return undefined;
  }
}
