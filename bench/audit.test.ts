// Tests of the audit-log reader and of the idle re-request figures built on it.
import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { auditTimeMs } from '../envtest/audit.js';
import { AuditLog, auditPolicy, parseAuditLine } from './audit.js';
import { idleFigures } from './idle.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const stamp = (ms: number): string => new Date(T0 + ms).toISOString().replace('Z', '000Z');

function line(
  id: string,
  stage: string,
  verb: string,
  uri: string,
  receivedMs: number,
  stageMs: number,
  resource = 'configmaps',
  namespace = 'bench-0',
): string {
  return JSON.stringify({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    auditID: id,
    stage,
    requestURI: uri,
    verb,
    user: { username: 'system:serviceaccount:bench-system:operator' },
    objectRef: { resource, namespace, apiVersion: 'v1' },
    responseStatus: { code: 200 },
    requestReceivedTimestamp: stamp(receivedMs),
    stageTimestamp: stamp(stageMs),
  });
}

function withLog(t: { teardown: (fn: () => void) => void }, lines: string[]): { log: AuditLog; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-audit-test-'));
  const path = join(dir, 'audit.log');
  writeFileSync(path, lines.map((text) => `${text}\n`).join(''));
  const log = new AuditLog(path);
  t.teardown(() => {
    void log.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { log, path };
}

test('the policy logs metadata of the operator identity only', (t) => {
  const policy = auditPolicy('system:serviceaccount:bench-system:operator');
  t.regex(policy, /- level: Metadata\n {2}users: \["system:serviceaccount:bench-system:operator"\]\n- level: None/);
  t.regex(policy, /omitStages: \["RequestReceived"\]/);
});

test('audit timestamps keep their microseconds', (t) => {
  t.true(Math.abs(auditTimeMs('2026-01-01T00:00:01.123456Z') - auditTimeMs('2026-01-01T00:00:01Z') - 123.456) < 1e-3);
});

test('a line gives the verb, the resource with group and subresource, the stream and the watch timeout', (t) => {
  const parsed = parseAuditLine(
    JSON.stringify({
      auditID: 'a',
      stage: 'ResponseComplete',
      verb: 'patch',
      requestURI: '/apis/app.example.com/v1/namespaces/ns/customapps/x/status',
      objectRef: { resource: 'customapps', namespace: 'ns', apiGroup: 'app.example.com', subresource: 'status' },
      requestReceivedTimestamp: '2026-01-01T00:00:00.000000Z',
      stageTimestamp: '2026-01-01T00:00:00.004000Z',
    }),
  );
  t.like(parsed, { verb: 'patch', resource: 'customapps.app.example.com/status', completedMs: T0 + 4, code: undefined });
  const watch = parseAuditLine(
    line(
      'w',
      'ResponseStarted',
      'watch',
      '/api/v1/namespaces/bench-0/configmaps?fieldSelector=metadata.name%3Dx&timeoutSeconds=295&watch=true',
      0,
      1,
    ),
  );
  t.like(watch, {
    verb: 'watch',
    resource: 'configmaps',
    timeoutSeconds: 295,
    completedMs: undefined,
    streamKey: 'configmaps|bench-0|metadata.name=x|',
  });
  t.is(parseAuditLine('not json'), undefined);
});

test('requests are counted once per audit ID, and a list or watch right after a watch ended is a renewal', async (t) => {
  const uri = '/api/v1/namespaces/bench-0/configmaps?watch=true';
  const { log, path } = withLog(t, [
    line('w1', 'ResponseStarted', 'watch', uri, 0, 1),
    line('g1', 'ResponseComplete', 'get', '/api/v1/namespaces/bench-0/configmaps/x', 500, 502),
    line('w1', 'ResponseComplete', 'watch', uri, 0, 60_000),
  ]);
  await log.refresh();
  appendFileSync(
    path,
    `${line('w2', 'ResponseStarted', 'watch', uri, 60_010, 60_011)}\n${line('p1', 'ResponseComplete', 'patch', '/apis/apps/v1/namespaces/bench-0/deployments/a', 61_000, 61_003, 'deployments')}\n`,
  );
  await log.refresh();
  const { work, renewals } = log.counts(T0, T0 + 120_000);
  t.deepEqual(work, { watch: { configmaps: 1 }, get: { configmaps: 1 }, patch: { deployments: 1 } });
  t.deepEqual(renewals, { watch: { configmaps: 1 } });
  t.is(log.openWatchesAt(T0 + 30_000).length, 1);
  t.is(log.openWatchesAt(T0 + 60_005).length, 0);
  t.is(log.openWatchesAt(T0 + 90_000).length, 1);
  t.is(log.between(T0 + 500, T0 + 61_000).length, 2);
});

test('idle figures: a client timeout counts as is, an early client close by its lifetime, the rest as the server default', async (t) => {
  const withTimeout = '/apis/apps/v1/deployments?timeoutSeconds=300&watch=true';
  const inactivity = '/api/v1/namespaces/bench-0/configmaps?fieldSelector=metadata.name%3Dx&watch=true';
  const serverEnded = '/api/v1/namespaces/bench-0/services?watch=true';
  const { log } = withLog(t, [
    line('a', 'ResponseStarted', 'watch', withTimeout, 0, 1, 'deployments'),
    line('b1', 'ResponseStarted', 'watch', inactivity, 0, 1),
    line('b1', 'ResponseComplete', 'watch', inactivity, 0, 30_000),
    line('b2', 'ResponseStarted', 'watch', inactivity, 30_005, 30_006),
    line('b2', 'ResponseComplete', 'watch', inactivity, 30_005, 60_005),
    line('b3', 'ResponseStarted', 'watch', inactivity, 60_010, 60_011),
    line('c', 'ResponseStarted', 'watch', serverEnded, 0, 1, 'services'),
  ]);
  await log.refresh();
  const { renewals, work } = log.counts(T0 + 10_000, T0 + 70_000);
  const idle = idleFigures({
    requests: log.between(0, T0 + 70_000),
    fromMs: T0 + 10_000,
    toMs: T0 + 70_000,
    serverWatchTimeoutSeconds: 60,
    renewals,
    all: work,
  });
  t.is(idle.watchStreams, 3);
  t.is(idle.renewals, 2);
  t.deepEqual(idle.periods, { clientTimeout: 1, clientClosed: 1, serverDefault: 1 });
  t.is(idle.requestsPerRenewal, 1);
  // Per hour: 3600/300 = 12, 3600/30 = 120, 3600/2700 ≈ 1.33; their mean.
  t.is(Math.round(idle.extrapolatedPerWatchHour! * 100) / 100, Math.round(((12 + 120 + 3600 / 2700) / 3) * 100) / 100);
  t.is(Math.round(idle.measuredPerWatchHour), 40);
});
