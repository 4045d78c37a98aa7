// The operator's HTTP endpoints: /metrics on one address, /healthz and /readyz on another.
import { createServer, type Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { BindAddress } from './bind-address.js';

/** A listening endpoint server. */
export interface EndpointServer {
  /** `http://host:port` (or `https://`), with the port actually bound. */
  readonly url: string;
  close(): Promise<void>;
}

/** A named readiness or liveness check: undefined when it passes, or why it fails. */
export type Check = () => string | undefined;

/** Starts `server` on `address`; the URL names the port actually bound, with `scheme`. */
export async function listen(
  server: Server | HttpsServer,
  address: BindAddress,
  scheme: 'http' | 'https' = 'http',
): Promise<EndpointServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host =
    bound.family === 'IPv6'
      ? `[${bound.address === '::' ? '::1' : bound.address}]`
      : bound.address === '0.0.0.0'
        ? '127.0.0.1'
        : bound.address;
  return {
    url: `${scheme}://${host}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function report(checks: Readonly<Record<string, Check>>): { ok: boolean; text: string } {
  const lines: string[] = [];
  let ok = true;
  for (const [name, check] of Object.entries(checks)) {
    const failure = check();
    if (failure === undefined) lines.push(`[+]${name} ok`);
    else {
      ok = false;
      lines.push(`[-]${name} failed: ${failure}`);
    }
  }
  lines.push(ok ? 'ok' : 'check failed');
  return { ok, text: `${lines.join('\n')}\n` };
}

/**
 * `/healthz` (liveness) and `/readyz` (readiness), each a list of named checks in controller-runtime's format
 * (`[+]ping ok`, `[-]caches failed: …`): 200 when all pass, 503 otherwise. Both answer the same whether this
 * process leads or not.
 */
export function serveProbes(
  address: BindAddress,
  checks: { readonly healthz: Readonly<Record<string, Check>>; readonly readyz: Readonly<Record<string, Check>> },
): Promise<EndpointServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const set = path === '/healthz' ? checks.healthz : path === '/readyz' ? checks.readyz : undefined;
    if (!set) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const { ok, text } = report(set);
    response.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
  });
  return listen(server, address);
}

/** `/metrics` in the Prometheus text format, from one registry. */
export function serveMetrics(address: BindAddress, registry: Registry): Promise<EndpointServer> {
  const server = createServer((request, response) => {
    if ((request.url ?? '/').split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(error)}\n`),
    );
  });
  return listen(server, address);
}
