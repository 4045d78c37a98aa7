// Reads the node's audit log by shard: which ring members claimed an object when each operator write for it landed.
import { shardLeaseName } from '../../operator/manager/sharding.js';
import { ownerOf, type View } from '../../operator/shard/ring.js';
import { acknowledgedView, leaseRecord } from '../../operator/shard/shard.js';
import { servedObject } from '../reliability/support/shard-writes.js';
import type { RecordedWrite } from '../support/write-record.js';
import { type AuditEvent, auditMs, senderOf, WRITE_VERBS } from './audit-log.js';

/** A ring Lease as one successful write (or delete) of it left it. */
interface LeaseState {
  /** When the server applied the write (ms since the epoch). */
  readonly at: number;
  /** `<identity>_<uuid>`, '' once released or deleted. */
  readonly holder: string;
  /** Its record's last change (holder, duration, times) plus its duration: the shard judges a member live until then. */
  readonly liveUntil: number;
  /** The view it acknowledged (`app.example.com/ring-view`), undefined without one. */
  readonly ack?: View;
}

/** A write for an object by a replica that did not own it in the ring when the write arrived. */
export interface ShardFencingViolation {
  readonly write: string;
  readonly at: string;
  /** The pod that sent it. */
  readonly writer: string;
  /** The object in the ring's key space. */
  readonly object: string;
  readonly why: string;
}

const RING_PREFIX = shardLeaseName('');

/** Each ring Lease's states in the order the server applied its successful writes and deletes. */
function ringLeaseStates(events: readonly AuditEvent[], defaultDurationMs: number): Map<string, LeaseState[]> {
  const states = new Map<string, LeaseState[]>();
  /** Each Lease's record (holder, duration, times) and when the server applied its last change. */
  const records = new Map<string, { record: string; changedAt: number }>();
  const changes = events
    .filter(
      (event) =>
        event.objectRef?.resource === 'leases' &&
        event.objectRef.name?.startsWith(RING_PREFIX) &&
        ['create', 'update', 'patch', 'delete'].includes(event.verb) &&
        (event.responseStatus?.code ?? 500) < 300,
    )
    .sort((a, b) => auditMs(a.stageTimestamp) - auditMs(b.stageTimestamp));
  for (const event of changes) {
    const name = event.objectRef!.name!;
    const list = states.get(name) ?? [];
    states.set(name, list);
    const at = auditMs(event.stageTimestamp);
    if (event.verb === 'delete') {
      list.push({ at, holder: '', liveUntil: at });
      records.delete(name);
      continue;
    }
    const spec = event.responseObject?.spec ?? {};
    const record = leaseRecord(spec);
    const changedAt = records.get(name)?.record === record ? records.get(name)!.changedAt : at;
    records.set(name, { record, changedAt });
    const durationMs = spec.leaseDurationSeconds === undefined ? defaultDurationMs : spec.leaseDurationSeconds * 1000;
    const ack = acknowledgedView({ metadata: { annotations: { ...event.responseObject?.metadata?.annotations } } });
    list.push({ at, holder: spec.holderIdentity ?? '', liveUntil: changedAt + durationMs, ack });
  }
  return states;
}

/** The index of the last state applied at or before `at`, or -1. */
function lastAt(states: readonly LeaseState[], at: number): number {
  let index = -1;
  while (index + 1 < states.length && states[index + 1]!.at <= at) index += 1;
  return index;
}

/**
 * Since when `member` has claimed `key` at `at` without a break: its Lease live, held by one holder, and every view it
 * acknowledged meanwhile giving it the key; undefined when it does not claim the key then.
 */
function claimedSince(states: readonly LeaseState[], member: string, key: string, at: number): number | undefined {
  let index = lastAt(states, at);
  const claims = (state: LeaseState): boolean => state.holder !== '' && state.ack !== undefined && ownerOf(key, state.ack) === member;
  const latest = states[index];
  if (!latest || !claims(latest) || latest.liveUntil <= at) return undefined;
  while (index > 0) {
    const before = states[index - 1]!;
    if (!claims(before) || before.holder !== states[index]!.holder || before.liveUntil <= states[index]!.at) break;
    index -= 1;
  }
  return states[index]!.at;
}

/**
 * The operator's successful writes for an object of the ring (a CustomApp, its Deployment or Service, a workload:
 * {@link servedObject}) that arrived when their writer did not own it: its own ring Lease not live (on the server's
 * clock, from the last change of its record), its acknowledged view giving the key to another member, or another live
 * member claiming the key in its acknowledged view since before the writer's claim began (the shard that claims second
 * sees the first's claim and waits for it to end). Writer and member are told apart by pod: a pod's Lease is
 * `shardLeaseName(<pod>)`. Lease writes, Events and reviews serve no one object and are not checked.
 */
export function writesOutsideClaims(
  events: readonly AuditEvent[],
  options: { readonly isWorkload: (name: string) => boolean; readonly leaseDurationMs?: number },
): { violations: ShardFencingViolation[]; writes: number } {
  const states = ringLeaseStates(events, options.leaseDurationMs ?? 15_000);
  const violations: ShardFencingViolation[] = [];
  let writes = 0;
  for (const event of events) {
    if (!WRITE_VERBS.has(event.verb) || event.objectRef?.resource === 'leases' || (event.responseStatus?.code ?? 500) >= 300) continue;
    const key = servedObject(recordedWrite(event), options.isWorkload);
    if (key === undefined) continue;
    writes += 1;
    const at = auditMs(event.requestReceivedTimestamp);
    const writer = senderOf(event);
    const member = shardLeaseName(writer);
    const own = states.get(member) ?? [];
    const current = own[lastAt(own, at)];
    const report = (why: string): void => {
      violations.push({ write: `${event.verb} ${event.requestURI}`, at: event.requestReceivedTimestamp, writer, object: key, why });
    };
    if (!current || current.holder === '' || current.liveUntil <= at) {
      report(
        current
          ? `its Lease ${member} was not live (${current.holder ? 'lapsed' : 'released'})`
          : `its Lease ${member} was never written before`,
      );
      continue;
    }
    if (!current.ack || ownerOf(key, current.ack) !== member) {
      report(
        `its acknowledged view ${JSON.stringify(current.ack ?? null)} gives the key to ${current.ack ? ownerOf(key, current.ack) : 'no one'}`,
      );
      continue;
    }
    const since = claimedSince(own, member, key, at)!;
    for (const [other, otherStates] of states) {
      if (other === member) continue;
      const otherSince = claimedSince(otherStates, other, key, at);
      if (otherSince !== undefined && otherSince < since)
        report(
          `${other} claimed it since ${new Date(otherSince).toISOString()}, before ${member}'s claim from ${new Date(since).toISOString()}`,
        );
    }
  }
  return { violations, writes };
}

/** An audit event as the write record's entry that {@link servedObject} reads (the sender as the user). */
function recordedWrite(event: AuditEvent): RecordedWrite {
  const ref = event.objectRef ?? {};
  return {
    user: senderOf(event),
    verb: event.verb,
    group: ref.apiGroup ?? '',
    resource: ref.resource ?? '',
    subresource: ref.subresource ?? '',
    namespace: ref.namespace ?? '',
    name: ref.name ?? '',
    receivedMs: auditMs(event.requestReceivedTimestamp),
    completedMs: auditMs(event.stageTimestamp),
    code: event.responseStatus?.code ?? 0,
  };
}
