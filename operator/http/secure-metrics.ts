// /metrics over HTTPS with each request authenticated and authorized; the certificate is self-signed at start, or
// read from a directory and reloaded when its files change (a Secret volume is updated in place).
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  asyncScheduler,
  distinctUntilChanged,
  EMPTY,
  exhaustMap,
  filter,
  from,
  interval,
  type Observable,
  type SchedulerLike,
  skip,
  startWith,
} from 'rxjs';
import type { BindAddress } from './bind-address.js';
import type { AuthDecision } from './metrics-auth.js';
import { type ServingCertificate, selfSignedMetricsCertificate } from './self-signed.js';
import { type EndpointServer, listen } from './servers.js';

/** The file names in a certificate directory: those of a `kubernetes.io/tls` Secret (controller-runtime's defaults). */
export const CERT_FILE = 'tls.crt';
export const KEY_FILE = 'tls.key';

/** What decides each request (a {@link MetricsAuth}). */
export interface MetricsAuthorizer {
  decide(authorization: string | undefined, method: string, path: string): Promise<AuthDecision>;
}

/** Options of {@link serveSecureMetrics}. */
export interface SecureMetricsOptions {
  readonly address: BindAddress;
  readonly registry: Registry;
  readonly auth: MetricsAuthorizer;
  /** A directory with `tls.crt` and `tls.key` to serve, watched for changes. @default a self-signed certificate */
  readonly certDir?: string;
  /** How often the directory is read for a changed certificate. @default 10_000 (controller-runtime's certwatcher) */
  readonly reloadIntervalMs?: number;
  /** Timers of the reload. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** @default no logs */
  readonly logger?: Logger;
}

/**
 * Reads `tls.crt` and `tls.key` from `dir` and checks that they parse and belong together. Throws with the offending
 * path (never the key's content).
 */
export async function readCertificateDir(dir: string): Promise<ServingCertificate> {
  const certPath = join(dir, CERT_FILE);
  const keyPath = join(dir, KEY_FILE);
  const [cert, key] = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]).catch((error: unknown) => {
    throw new Error(`--metrics-cert-dir "${dir}": cannot read ${CERT_FILE} and ${KEY_FILE}: ${(error as Error).message}`, { cause: error });
  });
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (error) {
    throw new Error(`"${certPath}" is not a PEM certificate: ${(error as Error).message}`, { cause: error });
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new Error(`"${keyPath}" is not a PEM private key: ${(error as Error).message}`, { cause: error });
  }
  if (!certificate.checkPrivateKey(privateKey)) throw new Error(`"${keyPath}" is not the private key of "${certPath}"`);
  return { cert, key };
}

/**
 * Every changed, valid pair in `dir`, read every `intervalMs` (one read at a time). A pair that does not parse, or
 * whose halves do not match (caught between two writes), is logged and skipped: the last good one stays served.
 */
export function certificateChanges(
  dir: string,
  initial: ServingCertificate,
  options: { readonly intervalMs: number; readonly scheduler?: SchedulerLike; readonly logger?: Logger },
): Observable<ServingCertificate> {
  return interval(options.intervalMs, options.scheduler ?? asyncScheduler).pipe(
    exhaustMap(() =>
      from(
        readCertificateDir(dir).then(
          (pair): ServingCertificate | undefined => pair,
          (error: unknown) => {
            options.logger?.warn({ dir, err: { message: (error as Error).message } }, 'metrics.certificate.invalid');
            return undefined;
          },
        ),
      ),
    ),
    filter((pair): pair is ServingCertificate => pair !== undefined),
    startWith(initial),
    distinctUntilChanged((a: ServingCertificate, b: ServingCertificate) => a.cert === b.cert && a.key === b.key),
    skip(1),
  );
}

function describe(cert: string): { subject: string; notAfter: string; fingerprint256: string } {
  const certificate = new X509Certificate(cert);
  return { subject: certificate.subject, notAfter: certificate.validTo, fingerprint256: certificate.fingerprint256 };
}

async function answer(registry: Registry, auth: MetricsAuthorizer, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0]!;
  if (path !== '/metrics') {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    return;
  }
  if (request.method !== 'GET') {
    response.writeHead(405, { 'content-type': 'text/plain', allow: 'GET' }).end('method not allowed\n');
    return;
  }
  const decision = await auth.decide(request.headers.authorization, request.method, path);
  if (decision.status !== 200) {
    const headers = {
      'content-type': 'text/plain; charset=utf-8',
      ...(decision.status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
      ...(decision.status === 429 ? { 'retry-after': String(decision.retryAfterSeconds) } : {}),
    };
    response.writeHead(decision.status, headers).end(`${decision.message}\n`);
    return;
  }
  const text = await registry.metrics();
  response.writeHead(200, { 'content-type': registry.contentType }).end(text);
}

/**
 * `/metrics` over HTTPS (TLS 1.2 or later, HTTP/1.1 only as controller-runtime's metrics server disables HTTP/2):
 * each GET is decided by `auth` (401, 403, 429, 500 or the metrics), any other path is 404 without a review. The
 * certificate comes from `certDir` (checked at start: a bad one fails the start, quoting the path) and is swapped in
 * place when the files change, or is self-signed at start. Resolves once listening; `close` stops the reload too.
 */
export async function serveSecureMetrics(options: SecureMetricsOptions): Promise<EndpointServer> {
  const log = options.logger;
  const initial = options.certDir === undefined ? selfSignedMetricsCertificate() : await readCertificateDir(options.certDir);
  const server = createServer({ cert: initial.cert, key: initial.key, minVersion: 'TLSv1.2' }, (request, response) => {
    answer(options.registry, options.auth, request, response).catch((error: unknown) => {
      log?.error({ err: { message: (error as Error).message } }, 'metrics.failed');
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('internal error\n');
    });
  });
  // A plain-http request or a failed handshake ends its socket; it is not a server error.
  server.on('tlsClientError', (error) => log?.debug({ err: { message: error.message } }, 'metrics.tls.rejected'));
  const endpoint = await listen(server, options.address, 'https');
  log?.info({ url: endpoint.url, certificate: options.certDir ?? 'self-signed', ...describe(initial.cert) }, 'metrics.certificate');
  const reloads =
    options.certDir === undefined
      ? EMPTY.subscribe()
      : certificateChanges(options.certDir, initial, {
          intervalMs: options.reloadIntervalMs ?? 10_000,
          scheduler: options.scheduler,
          logger: log,
        }).subscribe((pair) => {
          server.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' });
          log?.info({ dir: options.certDir, ...describe(pair.cert) }, 'metrics.certificate.reloaded');
        });
  return {
    url: endpoint.url,
    close: async () => {
      reloads.unsubscribe();
      await endpoint.close();
    },
  };
}
