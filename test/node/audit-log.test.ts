// The audit log readers on literal events: Lease terms, writes out of term, LISTs against WATCH streams.
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuditEvent, auditMs, leaseTerms, listsAndWatches, readAuditLog, senderOf, writesOutsideTerms } from './audit-log.js';

const LEASE = 'operator-leader';
const at = (second: number): string => `2026-12-01T17:00:${String(second).padStart(2, '0')}.250000Z`;
const leaseWrite = (second: number, ip: string, holder: string): AuditEvent => ({
  stage: 'ResponseComplete',
  verb: 'update',
  requestURI: `/apis/coordination.k8s.io/v1/namespaces/system/leases/${LEASE}`,
  user: { username: 'operator' },
  sourceIPs: [ip],
  objectRef: { resource: 'leases', namespace: 'system', name: LEASE, apiGroup: 'coordination.k8s.io' },
  responseStatus: { code: 200 },
  responseObject: { spec: { holderIdentity: holder } },
  requestReceivedTimestamp: at(second),
  stageTimestamp: at(second),
});
const request = (second: number, ip: string, verb: string, requestURI: string, code = 200): AuditEvent => ({
  stage: 'ResponseComplete',
  verb,
  requestURI,
  user: { username: 'operator' },
  sourceIPs: [ip],
  objectRef: { resource: 'deployments' },
  responseStatus: { code },
  requestReceivedTimestamp: at(second),
  stageTimestamp: at(second),
});
const PATCH = '/apis/apps/v1/namespaces/ns/deployments/a';

test('auditMs keeps the microseconds as a fraction of a millisecond', (t) => {
  t.is(auditMs('2026-12-01T17:00:01.250500Z') - auditMs('2026-12-01T17:00:01Z'), 250.5);
});

test("the sender is the pod a bound token names, else the request's address", (t) => {
  const bound = {
    ...leaseWrite(1, '10.0.0.1', 'a_1'),
    user: { username: 'operator', extra: { 'authentication.kubernetes.io/pod-name': ['a'] } },
  };
  t.is(senderOf(bound), 'a');
  t.is(senderOf(leaseWrite(1, '10.0.0.1', 'a_1')), '10.0.0.1');
});

test('a renewal continues a term; a new holder starts one', (t) => {
  const terms = leaseTerms([leaseWrite(1, '10.0.0.1', 'a_1'), leaseWrite(3, '10.0.0.1', 'a_1'), leaseWrite(20, '10.0.0.2', 'b_1')], LEASE);
  t.deepEqual(
    terms.map((term) => [term.holder, term.sender]),
    [
      ['a_1', '10.0.0.1'],
      ['b_1', '10.0.0.2'],
    ],
  );
});

test("a write by the old leader after its successor took the Lease is reported; the holder's own writes are not", (t) => {
  const events = [
    leaseWrite(1, '10.0.0.1', 'a_1'),
    request(5, '10.0.0.1', 'patch', PATCH),
    leaseWrite(20, '10.0.0.2', 'b_1'),
    request(21, '10.0.0.2', 'patch', PATCH),
    request(22, '10.0.0.1', 'patch', PATCH),
    request(23, '10.0.0.1', 'patch', PATCH, 403),
  ];
  const { violations, writes } = writesOutsideTerms(events, LEASE);
  t.is(writes, 3, 'a refused write landed nothing and is not counted');
  t.deepEqual(
    violations.map((violation) => [violation.writer, violation.holder]),
    [['10.0.0.1', 'b_1 from 10.0.0.2']],
  );
});

test('a write before any Lease write, or after the Lease was released, is reported', (t) => {
  const events = [
    request(0, '10.0.0.1', 'create', PATCH),
    leaseWrite(1, '10.0.0.1', 'a_1'),
    leaseWrite(2, '10.0.0.1', ''),
    request(3, '10.0.0.1', 'patch', PATCH),
  ];
  t.deepEqual(
    writesOutsideTerms(events, LEASE).violations.map((violation) => violation.holder),
    ['(before any holder)', '(released) from 10.0.0.1'],
  );
});

test('LISTs are counted per collection and WATCH streams once each, however often they resume, within the window', (t) => {
  const events = [
    request(1, '10.0.0.1', 'list', '/api/v1/configmaps?limit=500'),
    request(11, '10.0.0.1', 'list', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dx&limit=10'),
    request(12, '10.0.0.1', 'watch', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dx&resourceVersion=5&watch=true'),
    request(13, '10.0.0.1', 'watch', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dx&resourceVersion=9&watch=true'),
    request(14, '10.0.0.1', 'watch', '/apis/apps/v1/deployments?labelSelector=a%3Db&watch=true'),
  ];
  t.deepEqual(listsAndWatches(events, auditMs(at(10)), auditMs(at(20))), [
    { sender: '10.0.0.1', lists: 1, watches: 2, listed: { '/api/v1/namespaces/ns/configmaps?metadata.name=x': 1 } },
  ]);
});

test('a WATCH still open when the log is read counts by its start; other requests by their end alone', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'audit-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const open = { ...request(12, '10.0.0.1', 'watch', '/api/v1/configmaps?watch=true'), stage: 'ResponseStarted' };
  const list = request(11, '10.0.0.1', 'list', '/api/v1/configmaps');
  const lines = [open, { ...list, stage: 'ResponseStarted' }, list, { ...list, user: { username: 'other' } }];
  writeFileSync(join(dir, 'audit.log'), `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  const events = readAuditLog(join(dir, 'audit.log'), 'operator');
  t.deepEqual(
    events.map((event) => `${event.verb} ${event.stage}`),
    ['watch ResponseStarted', 'list ResponseComplete'],
  );
  t.is(listsAndWatches(events, auditMs(at(10)), auditMs(at(20)))[0]?.watches, 1);
});

test('a last line the API server is still writing is left out, not a failure to read the log', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'audit-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const list = request(11, '10.0.0.1', 'list', '/api/v1/configmaps');
  const whole = JSON.stringify(list);
  writeFileSync(join(dir, 'audit.log'), `${whole}\n${whole.slice(0, whole.length / 2)}`);
  t.deepEqual(
    readAuditLog(join(dir, 'audit.log'), 'operator').map((event) => `${event.verb} ${event.stage}`),
    ['list ResponseComplete'],
  );
});
