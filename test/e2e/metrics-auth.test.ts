// Secure metrics on both targets: 401 without or with a bad token, 403 without the metrics-reader role, 200 with it;
// answers cached; plain HTTP gets nothing; a mounted certificate is served by `npm start` with --metrics-cert-dir.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import test from 'ava';
import { METRICS_READER_ROLE, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { selfSignedCertificate } from '../../x509/self-signed.js';
import { selectedTargets } from '../support/targets.js';
import { startTestOperator, type TestOperator, clusterScenario } from '../support/operator-harness.js';
import { metricsReaderToken, scrapeHttps, serviceAccountToken } from '../support/metrics-scrape.js';
import { OperatorProcess } from '../support/operator-process.js';

const SCRAPERS = 'monitoring';
const user = (name: string): string => `system:serviceaccount:${SCRAPERS}:${name}`;

/** The operator's review requests so far, as `verb resource code` lines. */
const reviews = (running: TestOperator): string[] =>
  running.requests
    .filter((sample) => sample.resource.includes('review'))
    .map((sample) => `${sample.verb} ${sample.resource} ${sample.code}`);

for (const target of selectedTargets()) {
  let reader: string;
  let nobody: string;
  const scenario = clusterScenario(test, target, undefined, async ({ cluster, admin }) => {
    reader = await metricsReaderToken(cluster, admin, SCRAPERS, 'prometheus');
    nobody = await serviceAccountToken(cluster, SCRAPERS, 'nobody');
  });

  test.serial(
    `[${target}] /metrics: 401 without a token or with a bad one, 403 without the role, 200 with ${METRICS_READER_ROLE}`,
    async (t) => {
      const running = await startTestOperator(scenario.cluster!, {
        metricsBindAddress: { host: '127.0.0.1', port: 0 },
        healthProbeBindAddress: { host: '127.0.0.1', port: 0 },
      });
      t.teardown(() => running.operator.stop());
      const url = `${running.operator.metricsUrl}/metrics`;
      t.regex(url, /^https:\/\/127\.0\.0\.1:\d+\/metrics$/);

      t.like(await scrapeHttps(url), { status: 401, body: 'Unauthorized\n' });
      t.deepEqual(reviews(running), [], 'no token: refused without asking the API server');
      t.like(await scrapeHttps(url, { token: 'not-a-token' }), { status: 401 });
      const forged = `${reader.slice(0, -6)}${reader.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA'}`;
      t.like(await scrapeHttps(url, { token: forged }), { status: 401 }, 'a token whose signature does not verify');
      t.like(await scrapeHttps(url, { token: nobody }), { status: 403, body: `Authorization denied for user ${user('nobody')}\n` });

      const scraped = await scrapeHttps(url, { token: reader });
      t.is(scraped.status, 200);
      t.regex(scraped.body, /^# TYPE controller_runtime_reconcile_total counter$/m);
      t.regex(scraped.body, /^rest_client_requests_total\{verb="create",resource="tokenreviews.authentication.k8s.io",code="201"\} [1-9]/m);
      t.regex(
        scraped.body,
        /^rest_client_requests_total\{verb="create",resource="subjectaccessreviews.authorization.k8s.io",code="201"\} [1-9]/m,
      );
      const served = new X509Certificate(scraped.certificate);
      t.true(served.checkIssued(served), 'a self-signed certificate when none is mounted');

      const asked = reviews(running).length;
      t.deepEqual(
        [...new Set(reviews(running))].sort(),
        ['create subjectaccessreviews.authorization.k8s.io 201', 'create tokenreviews.authentication.k8s.io 201'],
        'every review answered, none denied to the operator',
      );
      for (let index = 0; index < 5; index += 1) t.is((await scrapeHttps(url, { token: reader })).status, 200);
      t.is((await scrapeHttps(url, { token: nobody })).status, 403);
      t.is(reviews(running).length, asked, 'repeated scrapes reuse the cached answers: no new review');

      const plain = await new Promise<string>((resolve) => {
        const req = httpRequest(url.replace('https:', 'http:'), { agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        });
        req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        req.end();
      });
      t.notRegex(plain, /controller_runtime/, 'plain HTTP on the metrics port gets no metrics');
      const ready = await fetch(`${running.operator.healthUrl}/readyz`);
      t.is(ready.status, 200, 'the probes stay plain HTTP, with no token');
    },
  );

  test.serial(
    `[${target}] npm start with --metrics-cert-dir serves the mounted certificate; a scraper trusting it gets the metrics`,
    async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'metrics-cert-'));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      const mounted = selfSignedCertificate({ commonName: 'customapp-operator-metrics.customapp-system.svc' });
      writeFileSync(join(dir, 'tls.crt'), mounted.cert);
      writeFileSync(join(dir, 'tls.key'), mounted.key);
      const { path: kubeconfig } = await scenario.cluster!.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
      const operator = new OperatorProcess([
        `--kubeconfig=${kubeconfig}`,
        '--metrics-bind-address=127.0.0.1:0',
        `--metrics-cert-dir=${dir}`,
        '--health-probe-bind-address=0',
        '--namespace=metrics-process',
      ]);
      t.teardown(() => operator.dispose());
      // Its workers start (and set max_concurrent_reconciles) once the caches are in sync, after `started`.
      await operator.waitFor(
        'the workers started',
        () => operator.find('started').length > 0 && operator.find('controller.start').length > 0,
      );
      const url = `${operator.find('started')[0]!.metrics as string}/metrics`;
      t.regex(url, /^https:/);
      const scraped = await scrapeHttps(url, { token: reader, ca: mounted.cert });
      t.is(scraped.status, 200, 'verified against the mounted certificate');
      t.regex(scraped.body, /^controller_runtime_max_concurrent_reconciles\{controller="customapp"\} 4$/m);
      t.is((await scrapeHttps(url, { token: nobody, ca: mounted.cert })).status, 403);
      t.is(operator.find('metrics.certificate', { certificate: dir }).length, 1, 'the start says which certificate it serves');
      operator.kill('SIGTERM');
      t.deepEqual(await operator.exited, { code: 0, signal: null }, operator.stderr);
    },
  );
}
