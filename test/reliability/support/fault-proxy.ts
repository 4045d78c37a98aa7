// A plain-http proxy in front of an API server that answers chosen requests badly: malformed JSON, hangs, Status errors.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';

/** The request a rule looks at. */
export interface ProxiedRequest {
  readonly method: string;
  /** The path without the query, e.g. `/api/v1/namespaces/a/configmaps`. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** True for `?watch=true` (or `watch=1`). */
  readonly watch: boolean;
}

/** What the proxy answers instead of the server. */
export type FaultAnswer =
  /** 200 with a body that is not JSON (a list cut in the middle). */
  | { readonly kind: 'malformed-body' }
  /** A watch stream (200) whose first line is not JSON; the connection then stays open. */
  | { readonly kind: 'malformed-watch-line' }
  /** A watch stream (200) that sends headers and then nothing, until the client gives up. */
  | { readonly kind: 'hang' }
  /** A Status error object with this HTTP code (and `Retry-After` when given). */
  | {
      readonly kind: 'status';
      readonly code: number;
      readonly reason: string;
      readonly message: string;
      readonly retryAfterSeconds?: number;
    }
  /** A watch stream (200) whose first event is `ERROR` with this Status; the connection then ends. */
  | { readonly kind: 'watch-error'; readonly code: number; readonly reason: string; readonly message: string }
  /** The request reaches the server (which acts on it), but its answer never reaches the client. */
  | { readonly kind: 'lost-answer' }
  /**
   * The request reaches the server at once (a list is evaluated then), and its answer reaches the client `ms` later:
   * a slow answer, as from an overloaded API server or a long paginated list.
   */
  | { readonly kind: 'delayed-answer'; readonly ms: number }
  /**
   * The request reaches the server `ms` after the client sent it (a slow network on the way there), or never if the
   * client gives up on it first: what a client aborts meanwhile has not been written.
   */
  | { readonly kind: 'delayed-request'; readonly ms: number };

/** One rule: which requests, what answer, how many times. */
export interface FaultRule {
  readonly match: (request: ProxiedRequest) => boolean;
  readonly answer: FaultAnswer;
  /** Answer this many matching requests, then pass them through. @default unlimited */
  readonly times?: number;
}

/** One request the proxy sent on to the server, with when it went and when the server was done with it. */
export interface Exchange {
  readonly method: string;
  readonly path: string;
  /** When the proxy sent the request on (performance.now()). */
  readonly sentAt: number;
  /**
   * When the server's answer arrived, or when the proxy gave up on it (the client went away first): by then the
   * server has applied the request, or never will. Undefined while it is pending.
   */
  settledAt?: number;
  /** The server's HTTP status, when it answered. */
  code?: number;
}

/** A running proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: the server URL for the client under test. */
  readonly url: string;
  /** Every request sent on to the server, in order (watches included). */
  readonly exchanges: readonly Exchange[];
  /** The `delayed-request` requests whose client gave up before they were sent on, with when (performance.now()). */
  readonly abandoned: readonly { readonly method: string; readonly path: string; readonly at: number }[];
  /** Adds a rule; answers its id. */
  add(rule: FaultRule): number;
  /** How many requests a rule has answered. */
  hits(id: number): number;
  remove(id: number): void;
  /** Closes every connection and stops listening. */
  close(): Promise<void>;
}

function statusBody(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

/** Answers a request without the server, except `lost-answer`, which `forward` handles. */
function answerWith(
  answer: Exclude<FaultAnswer, { kind: 'lost-answer' | 'delayed-answer' | 'delayed-request' }>,
  response: ServerResponse,
): void {
  switch (answer.kind) {
    case 'malformed-body':
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":');
      return;
    case 'malformed-watch-line':
      response.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      response.write('{"type":"ADDED","object":{"metadata":{"name":\n');
      return;
    case 'hang':
      response.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      response.flushHeaders();
      return;
    case 'status':
      response.writeHead(answer.code, {
        'content-type': 'application/json',
        ...(answer.retryAfterSeconds === undefined ? {} : { 'retry-after': String(answer.retryAfterSeconds) }),
      });
      response.end(statusBody(answer.code, answer.reason, answer.message));
      return;
    case 'watch-error':
      response.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      response.end(`{"type":"ERROR","object":${statusBody(answer.code, answer.reason, answer.message)}}\n`);
      return;
  }
}

/**
 * Sends a request on to the server. With `loseAnswer`, the server's answer is read and dropped, and the client waits
 * on; with `delayMs`, the answer is read whole and sent that much later.
 */
type Forward = (
  request: IncomingMessage,
  response: ServerResponse,
  options?: { readonly loseAnswer?: boolean; readonly delayMs?: number },
) => void;

/** The request as a rule sees it. */
function proxiedRequest(request: IncomingMessage): ProxiedRequest {
  const url = new URL(request.url ?? '/', 'http://proxy');
  return {
    method: request.method ?? 'GET',
    path: url.pathname,
    query: url.searchParams,
    watch: ['true', '1'].includes(url.searchParams.get('watch') ?? ''),
  };
}

/** Reads the server's answer whole and sends it to the client `delayMs` later (not at all if the client has gone). */
function relayLater(answer: IncomingMessage, response: ServerResponse, delayMs: number): void {
  const chunks: Buffer[] = [];
  answer.on('data', (chunk: Buffer) => chunks.push(chunk));
  answer.once('end', () => {
    const timer = setTimeout(() => {
      const { 'transfer-encoding': _chunked, ...headers } = answer.headers;
      response.writeHead(answer.statusCode ?? 502, headers);
      response.end(Buffer.concat(chunks));
    }, delayMs);
    response.once('close', () => clearTimeout(timer));
  });
  answer.once('error', () => response.destroy());
}

/** Forwards to `upstream` (its certificate unchecked), recording each request sent on in `exchanges`. */
function forwarder(upstream: URL, exchanges: Exchange[]): Forward {
  const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
  return (request, response, { loseAnswer = false, delayMs = 0 } = {}) => {
    const exchange: Exchange = {
      method: request.method ?? 'GET',
      path: new URL(request.url ?? '/', 'http://proxy').pathname,
      sentAt: performance.now(),
    };
    exchanges.push(exchange);
    const settle = (code?: number): void => {
      exchange.settledAt ??= performance.now();
      exchange.code ??= code;
    };
    const outgoing = send(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: upstream.host },
        rejectUnauthorized: false,
      },
      (answer) => {
        settle(answer.statusCode);
        if (loseAnswer) {
          answer.resume();
          return;
        }
        if (delayMs > 0) {
          relayLater(answer, response, delayMs);
          return;
        }
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
        answer.once('error', () => response.destroy());
      },
    );
    outgoing.once('error', () => response.destroy());
    outgoing.once('close', () => settle());
    response.once('close', () => outgoing.destroy());
    request.pipe(outgoing);
  };
}

/**
 * Starts a proxy on a free loopback port that forwards to `target`: a plain `http://host:port` URL, or an
 * `https://` one (envtest's), whose certificate is not checked. The client talks plain HTTP to the proxy and sends
 * its own credentials, which are forwarded as they are.
 */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const rules = new Map<number, FaultRule & { hits: number }>();
  const sockets = new Set<Socket>();
  const exchanges: Exchange[] = [];
  const abandoned: { method: string; path: string; at: number }[] = [];
  let nextId = 1;

  const forward = forwarder(new URL(target), exchanges);

  const server: Server = createServer((request, response) => {
    const proxied = proxiedRequest(request);
    for (const rule of rules.values()) {
      if ((rule.times !== undefined && rule.hits >= rule.times) || !rule.match(proxied)) continue;
      rule.hits += 1;
      if (rule.answer.kind === 'delayed-request') {
        // The body waits in the paused request; a client that gives up closes the response, and nothing is sent on.
        request.pause();
        let sent = false;
        const timer = setTimeout(() => {
          sent = true;
          forward(request, response);
        }, rule.answer.ms);
        response.once('close', () => {
          clearTimeout(timer);
          if (!sent) abandoned.push({ method: proxied.method, path: proxied.path, at: performance.now() });
        });
        return;
      }
      if (rule.answer.kind === 'lost-answer' || rule.answer.kind === 'delayed-answer') {
        forward(request, response, rule.answer.kind === 'lost-answer' ? { loseAnswer: true } : { delayMs: rule.answer.ms });
        return;
      }
      request.resume();
      answerWith(rule.answer, response);
      return;
    }
    forward(request, response);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('fault proxy: no port');

  return {
    url: `http://127.0.0.1:${address.port}`,
    exchanges,
    abandoned,
    add: (rule) => {
      const id = nextId++;
      rules.set(id, { ...rule, hits: 0 });
      return id;
    },
    hits: (id) => rules.get(id)?.hits ?? 0,
    remove: (id) => {
      rules.delete(id);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
