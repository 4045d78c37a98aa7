// Reads the write record by object: which shard wrote for each CustomApp and workload, and whether two ever overlapped.
import type { RecordedWrite } from '../../support/write-record.js';

/**
 * The object a write serves, in the shard ring's key space (a CustomApp's `namespace/name`, a workload's
 * `Kind/namespace/name`), or undefined for a write that serves no one object (a Lease, an Event: an Event is posted
 * after its reconcile and may trail a handoff, so it says nothing about who acts on the object).
 * `isWorkload` tells a workload Deployment from a CustomApp's by name.
 */
export function servedObject(write: RecordedWrite, isWorkload: (name: string) => boolean): string | undefined {
  const object = `${write.namespace}/${write.name}`;
  if (write.group === 'app.example.com' && write.resource === 'customapps') return object;
  if (write.group === '' && write.resource === 'services') return object;
  if (write.group === 'apps' && write.resource === 'deployments') return isWorkload(write.name) ? `Deployment/${object}` : object;
  return undefined;
}

/** The writes of each object, in the order the server received them. */
export function writesByObject(writes: readonly RecordedWrite[], isWorkload: (name: string) => boolean): Map<string, RecordedWrite[]> {
  const byObject = new Map<string, RecordedWrite[]>();
  for (const write of writes) {
    const object = servedObject(write, isWorkload);
    if (object === undefined) continue;
    let list = byObject.get(object);
    if (!list) byObject.set(object, (list = []));
    list.push(write);
  }
  for (const list of byObject.values()) list.sort((a, b) => a.receivedMs - b.receivedMs);
  return byObject;
}

/**
 * Every write that the server received while another user's write for the same object was still in progress there
 * (received, not yet completed): two shards acting on one object at once. Described as `object: user verb resource
 * received while other-user's write (received … completed …) was in progress`, empty when none.
 */
export function overlappingWrites(byObject: ReadonlyMap<string, readonly RecordedWrite[]>): string[] {
  const overlaps: string[] = [];
  for (const [object, writes] of byObject) {
    // Per user, the write of the latest completion so far: any write of another user received before it completed overlaps.
    const latest = new Map<string, RecordedWrite>();
    for (const write of writes) {
      for (const [user, other] of latest) {
        if (user !== write.user && other.completedMs > write.receivedMs) {
          overlaps.push(
            `${object}: ${write.user} ${write.verb} ${write.resource}${write.subresource ? `/${write.subresource}` : ''} received while ` +
              `${user}'s ${other.verb} ${other.resource} was in progress (${Math.round(other.completedMs - write.receivedMs)} ms left)`,
          );
        }
      }
      const known = latest.get(write.user);
      if (!known || known.completedMs < write.completedMs) latest.set(write.user, write);
    }
  }
  return overlaps;
}

/** The users that wrote for each object. */
export function writersOf(byObject: ReadonlyMap<string, readonly RecordedWrite[]>): Map<string, Set<string>> {
  return new Map([...byObject].map(([object, writes]) => [object, new Set(writes.map((write) => write.user))]));
}
