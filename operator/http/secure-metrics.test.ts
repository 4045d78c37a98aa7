// Tests of the HTTPS metrics server: auth decides each request, the certificate is self-signed or mounted and reloaded.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import { Counter, Registry } from 'prom-client';
import { eventually } from '../../test/support/eventually.js';
import { VirtualClock } from '../../test/support/virtual-time.js';
import { selfSignedCertificate } from '../../x509/self-signed.js';
import type { AuthDecision } from './metrics-auth.js';
import { readCertificateDir, serveSecureMetrics, type MetricsAuthorizer } from './secure-metrics.js';

const LOOPBACK = { host: '127.0.0.1', port: 0 };

/** Allows the token "reader", forbids "nobody", answers "busy" as reviews at their bound do, and 401s the rest; counts its calls. */
class FakeAuth implements MetricsAuthorizer {
  calls = 0;
  async decide(authorization: string | undefined, method: string, path: string): Promise<AuthDecision> {
    this.calls += 1;
    if (authorization === 'Bearer reader' && method === 'GET' && path === '/metrics') return { status: 200, user: 'reader' };
    if (authorization === 'Bearer nobody') return { status: 403, message: 'Authorization denied for user nobody' };
    if (authorization === 'Bearer busy') return { status: 429, message: 'Too many authentication reviews in flight', retryAfterSeconds: 1 };
    return { status: 401, message: 'Unauthorized' };
  }
}

function registry(): Registry {
  const metrics = new Registry();
  new Counter({ name: 'test_scrapes_total', help: 'a sample', registers: [metrics] }).inc(3);
  return metrics;
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly peer: PeerCertificate;
}

/** One GET on a fresh connection (no keep-alive: a reload must be seen by the next connection). */
function get(url: string, options: { token?: string; ca?: string; method?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: options.method ?? 'GET',
        agent: false,
        ...(options.ca ? { ca: options.ca } : { rejectUnauthorized: false }),
        headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerCertificate();
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers, peer }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function certDir(t: { teardown(fn: () => void): void }): { dir: string; write(pair: { cert: string; key: string }): void } {
  const dir = mkdtempSync(join(tmpdir(), 'metrics-certs-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    write: (pair) => {
      writeFileSync(join(dir, 'tls.crt'), pair.cert);
      writeFileSync(join(dir, 'tls.key'), pair.key);
    },
  };
}

test('over HTTPS with a self-signed certificate: 401, 403, 429 with Retry-After, 200 with the metrics, as the authorizer decides', async (t) => {
  const auth = new FakeAuth();
  const server = await serveSecureMetrics({ address: LOOPBACK, registry: registry(), auth });
  t.teardown(() => server.close());
  t.regex(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const anonymous = await get(`${server.url}/metrics`);
  t.is(anonymous.status, 401);
  t.is(anonymous.body, 'Unauthorized\n');
  t.is(anonymous.headers['www-authenticate'], 'Bearer');
  t.is((await get(`${server.url}/metrics`, { token: 'forged' })).status, 401);
  t.like(await get(`${server.url}/metrics`, { token: 'nobody' }), { status: 403, body: 'Authorization denied for user nobody\n' });
  t.like(await get(`${server.url}/metrics`, { token: 'busy' }), { status: 429, headers: { 'retry-after': '1' } });
  const scraped = await get(`${server.url}/metrics?x=1`, { token: 'reader' });
  t.is(scraped.status, 200);
  t.regex(scraped.body, /^test_scrapes_total 3$/m);
  t.regex(String(scraped.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const served = new X509Certificate(scraped.peer.raw);
  t.is(served.subject, 'CN=customapp-operator-metrics');
  t.true(served.checkIssued(served), 'self-signed');
  t.is(served.checkIP('127.0.0.1'), '127.0.0.1');
});

test('other paths are 404 and other methods 405, without asking the authorizer', async (t) => {
  const auth = new FakeAuth();
  const server = await serveSecureMetrics({ address: LOOPBACK, registry: registry(), auth });
  t.teardown(() => server.close());
  t.is((await get(`${server.url}/healthz`, { token: 'reader' })).status, 404);
  const posted = await get(`${server.url}/metrics`, { token: 'reader', method: 'POST' });
  t.is(posted.status, 405);
  t.is(posted.headers.allow, 'GET');
  t.is(auth.calls, 0);
});

test('plain HTTP on the metrics port gets no metrics: the TLS server drops it', async (t) => {
  const server = await serveSecureMetrics({ address: LOOPBACK, registry: registry(), auth: new FakeAuth() });
  t.teardown(() => server.close());
  const plain = server.url.replace('https:', 'http:');
  const outcome = await new Promise<string>((resolve) => {
    const req = httpRequest(`${plain}/metrics`, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(`${res.statusCode} ${Buffer.concat(chunks).toString('utf8')}`));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
  t.notRegex(outcome, /test_scrapes_total/);
  t.log(`plain http answer: ${outcome}`);
});

const RELOAD_MS = 10_000;

/**
 * A server of the certificate mounted in `mounted`, re-read every {@link RELOAD_MS} of a virtual clock, and its log
 * lines; `reread(msg)` runs one re-read and resolves once it has logged `msg` (the read itself is real file I/O).
 */
async function reloadingServer(t: ExecutionContext, mounted: { dir: string }) {
  const clock = new VirtualClock();
  const lines: string[] = [];
  const server = await serveSecureMetrics({
    address: LOOPBACK,
    registry: registry(),
    auth: new FakeAuth(),
    certDir: mounted.dir,
    reloadIntervalMs: RELOAD_MS,
    scheduler: clock,
    logger: pino({ level: 'debug' }, { write: (line: string) => lines.push(line) }),
  });
  t.teardown(() => server.close());
  const reread = async (msg: string): Promise<string> => {
    clock.advance(RELOAD_MS);
    return eventually(`the re-read certificate logs ${msg}`, () => lines.find((line) => line.includes(`"msg":"${msg}"`)), 5_000, 5);
  };
  return { server, lines, reread };
}

test('a mounted certificate is served (a client trusting exactly it verifies), and a replacement is picked up in place', async (t) => {
  const first = selfSignedCertificate({ commonName: 'first' });
  const second = selfSignedCertificate({ commonName: 'second' });
  const mounted = certDir(t);
  mounted.write(first);
  const { server, lines, reread } = await reloadingServer(t, mounted);
  t.is((await get(`${server.url}/metrics`, { token: 'reader', ca: first.cert })).status, 200, 'verified against the mounted certificate');
  await t.throwsAsync(get(`${server.url}/metrics`, { token: 'reader', ca: second.cert }), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });

  mounted.write(second);
  t.regex(await reread('metrics.certificate.reloaded'), /CN=second/);
  const subject = new X509Certificate((await get(`${server.url}/metrics`, { token: 'reader' })).peer.raw).subject;
  t.is(subject, 'CN=second', 'the new certificate is served without a restart');
  t.is((await get(`${server.url}/metrics`, { token: 'reader', ca: second.cert })).status, 200);
  t.false(lines.join('').includes('PRIVATE KEY'), 'no key in the logs');
});

test('a broken replacement is logged and skipped: the last good certificate stays served', async (t) => {
  const good = selfSignedCertificate({ commonName: 'good' });
  const mounted = certDir(t);
  mounted.write(good);
  const { server, reread } = await reloadingServer(t, mounted);
  // Halves of two different pairs, as a reader caught between two writes would see.
  mounted.write({ cert: selfSignedCertificate({ commonName: 'other' }).cert, key: good.key });
  t.regex(await reread('metrics.certificate.invalid'), /is not the private key of/);
  t.is((await get(`${server.url}/metrics`, { token: 'reader', ca: good.cert })).status, 200);
});

test('a certificate directory that cannot be served fails the start, quoting the path', async (t) => {
  const mounted = certDir(t);
  await t.throwsAsync(readCertificateDir(mounted.dir), {
    message: new RegExp(`^--metrics-cert-dir "${mounted.dir}": cannot read tls.crt and tls.key`),
  });
  mounted.write({ cert: 'not a certificate', key: 'not a key' });
  await t.throwsAsync(readCertificateDir(mounted.dir), { message: new RegExp(`^"${mounted.dir}/tls.crt" is not a PEM certificate`) });
  const pair = selfSignedCertificate({ commonName: 'a' });
  mounted.write({ cert: pair.cert, key: 'not a key' });
  await t.throwsAsync(readCertificateDir(mounted.dir), { message: new RegExp(`^"${mounted.dir}/tls.key" is not a PEM private key`) });
  mounted.write({ cert: pair.cert, key: selfSignedCertificate({ commonName: 'b' }).key });
  await t.throwsAsync(serveSecureMetrics({ address: LOOPBACK, registry: registry(), auth: new FakeAuth(), certDir: mounted.dir }), {
    message: `"${mounted.dir}/tls.key" is not the private key of "${mounted.dir}/tls.crt"`,
  });
});
