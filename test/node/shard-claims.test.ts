// The shard claims reader on literal audit events: a write is a replica's own only while the ring gives it the object.
import test from 'ava';
import { shardLeaseName } from '../../operator/manager/sharding.js';
import { ownerOf } from '../../operator/shard/ring.js';
import { RING_VIEW_ANNOTATION } from '../../operator/shard/shard.js';
import type { AuditEvent } from './audit-log.js';
import { writesOutsideClaims } from './shard-claims.js';

const at = (second: number): string => `2026-12-01T17:00:${String(second).padStart(2, '0')}.250000Z`;
const A = shardLeaseName('pod-a');
const B = shardLeaseName('pod-b');
const BOTH = [A, B].sort();
/** The first key of `ns` that `member` owns in the view of both pods (rendezvous hashing decides; the test does not guess). */
const keyOf = (member: string): string => {
  for (let index = 0; ; index += 1) if (ownerOf(`ns/app-${index}`, BOTH) === member) return `ns/app-${index}`;
};
const sentBy = (pod: string): AuditEvent['user'] => ({ username: 'operator', extra: { 'authentication.kubernetes.io/pod-name': [pod] } });

/** A write of `pod`'s ring Lease at `second`: renewed at `renewed` (a renewal changes the record), acknowledging `view`. */
const leaseWrite = (
  second: number,
  pod: string,
  view: readonly string[] | undefined,
  renewed = second,
  holder = `${pod}_1`,
): AuditEvent => ({
  stage: 'ResponseComplete',
  verb: 'update',
  requestURI: `/apis/coordination.k8s.io/v1/namespaces/system/leases/${shardLeaseName(pod)}`,
  user: sentBy(pod),
  objectRef: { resource: 'leases', namespace: 'system', name: shardLeaseName(pod), apiGroup: 'coordination.k8s.io' },
  responseStatus: { code: 200 },
  responseObject: {
    metadata: { annotations: { [RING_VIEW_ANNOTATION]: view ? JSON.stringify(view) : '' } },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: at(renewed) },
  },
  requestReceivedTimestamp: at(second),
  stageTimestamp: at(second),
});
/** `pod`'s status patch of the CustomApp `key` at `second`. */
const patch = (second: number, pod: string, key: string, code = 200): AuditEvent => {
  const [namespace, name] = key.split('/');
  return {
    stage: 'ResponseComplete',
    verb: 'patch',
    requestURI: `/apis/app.example.com/v1/namespaces/${namespace}/customapps/${name}/status`,
    user: sentBy(pod),
    objectRef: { resource: 'customapps', subresource: 'status', namespace, name, apiGroup: 'app.example.com' },
    responseStatus: { code },
    requestReceivedTimestamp: at(second),
    stageTimestamp: at(second),
  };
};
const check = (events: readonly AuditEvent[]) => writesOutsideClaims(events, { isWorkload: () => false });
const whys = (events: readonly AuditEvent[]): string[] =>
  check(events).violations.map((each) => `${each.writer} ${each.object}: ${each.why}`);

test('each shard writing for the objects its acknowledged view gives it breaks nothing; a refused write is not counted', (t) => {
  const events = [
    leaseWrite(1, 'pod-a', BOTH),
    leaseWrite(1, 'pod-b', BOTH),
    patch(2, 'pod-a', keyOf(A)),
    patch(3, 'pod-b', keyOf(B)),
    patch(4, 'pod-b', keyOf(A), 409),
  ];
  t.deepEqual(check(events), { violations: [], writes: 2 });
});

test("a write for an object the writer's acknowledged view gives to another shard is reported", (t) => {
  const events = [leaseWrite(1, 'pod-a', BOTH), leaseWrite(1, 'pod-b', BOTH), patch(2, 'pod-a', keyOf(B))];
  t.deepEqual(whys(events), [`pod-a ${keyOf(B)}: its acknowledged view ${JSON.stringify(BOTH)} gives the key to ${B}`]);
});

test('a shard that claims a key second must wait for the first to give it up: its write before that is reported, after it is not', (t) => {
  const key = keyOf(B);
  const events = [
    // a alone: it claims every key; b joins and acknowledges the view of both, which gives b the key.
    leaseWrite(1, 'pod-a', [A]),
    leaseWrite(2, 'pod-b', BOTH),
    patch(3, 'pod-b', key),
    // a acknowledges the view of both: it gave the key up, b may act.
    leaseWrite(4, 'pod-a', BOTH),
    patch(5, 'pod-b', key),
  ];
  t.deepEqual(whys(events), [
    `pod-b ${key}: ${A} claimed it since ${new Date(Date.parse(at(1))).toISOString()}, before ${B}'s claim from ${new Date(Date.parse(at(2))).toISOString()}`,
  ]);
});

test("a write after the writer's Lease lapsed (its record unchanged for the Lease duration) or was released is reported; a renewal keeps it live", (t) => {
  const key = keyOf(A);
  const events = [
    leaseWrite(1, 'pod-a', BOTH),
    // An acknowledgement alone changes no record: the Lease is live until 15 s after its renewal at 1 s.
    leaseWrite(10, 'pod-a', BOTH, 1),
    patch(15, 'pod-a', key),
    patch(17, 'pod-a', key),
    leaseWrite(20, 'pod-a', BOTH),
    patch(21, 'pod-a', key),
    leaseWrite(22, 'pod-a', BOTH, 20, ''),
    patch(23, 'pod-a', key),
  ];
  t.deepEqual(
    check(events).violations.map((each) => [each.at, each.why]),
    [
      [at(17), `its Lease ${A} was not live (lapsed)`],
      [at(23), `its Lease ${A} was not live (released)`],
    ],
  );
});

test("a write by a pod whose Lease was never written is reported; Events and the Leases' own writes are not checked", (t) => {
  const event: AuditEvent = { ...patch(2, 'pod-a', keyOf(A)), objectRef: { resource: 'events', namespace: 'ns', name: 'x.1' } };
  t.deepEqual(check([event, leaseWrite(3, 'pod-a', BOTH)]), { violations: [], writes: 0 });
  t.deepEqual(whys([patch(2, 'pod-a', keyOf(A))]), [`pod-a ${keyOf(A)}: its Lease ${A} was never written before`]);
});

test("a new holder of the same Lease (the pod's container restarted) claims anew: the other shard's claim meanwhile comes first", (t) => {
  const key = keyOf(A);
  const events = [
    leaseWrite(1, 'pod-a', BOTH),
    leaseWrite(1, 'pod-b', [B]),
    // b alone after a's Lease lapsed: b claims everything from 17 s.
    leaseWrite(17, 'pod-b', [B]),
    // a's new process takes its Lease over at 20 s with the view of both: b still claims the key.
    leaseWrite(20, 'pod-a', BOTH, 20, 'pod-a_2'),
    patch(21, 'pod-a', key),
  ];
  t.is(check(events).violations.length, 1);
  t.regex(check(events).violations[0]!.why, new RegExp(`^${B} claimed it since`));
});
