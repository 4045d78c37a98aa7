// The write record read by object: which object each write serves, and the overlap check that finds two acting shards.
import test from 'ava';
import type { RecordedWrite } from '../../support/write-record.js';
import { overlappingWrites, servedObject, writersOf, writesByObject } from './shard-writes.js';

const isWorkload = (name: string): boolean => name.startsWith('web-');

function write(user: string, group: string, resource: string, name: string, receivedMs: number, completedMs: number): RecordedWrite {
  return { user, verb: 'patch', group, resource, subresource: '', namespace: 'ns', name, receivedMs, completedMs, code: 200 };
}

test('a CustomApp, its Deployment and Service serve the CustomApp; a workload Deployment serves Deployment/ns/name; Leases and Events serve none', (t) => {
  t.is(servedObject(write('a', 'app.example.com', 'customapps', 'app-1', 0, 1), isWorkload), 'ns/app-1');
  t.is(servedObject(write('a', 'apps', 'deployments', 'app-1', 0, 1), isWorkload), 'ns/app-1');
  t.is(servedObject(write('a', '', 'services', 'app-1', 0, 1), isWorkload), 'ns/app-1');
  t.is(servedObject(write('a', 'apps', 'deployments', 'web-1', 0, 1), isWorkload), 'Deployment/ns/web-1');
  t.is(servedObject(write('a', 'coordination.k8s.io', 'leases', 'shard-a', 0, 1), isWorkload), undefined);
  t.is(servedObject(write('a', '', 'events', 'app-1.1829', 0, 1), isWorkload), undefined);
});

/** Patches of Deployment `name`, one per [user, receivedMs, completedMs] (the grouping orders them as received). */
const deploymentPatches = (name: string, ...spans: readonly (readonly [string, number, number])[]): RecordedWrite[] =>
  spans.map(([user, receivedMs, completedMs]) => write(user, 'apps', 'deployments', name, receivedMs, completedMs));

/** Groups `writes` by the object each serves, then checks the overlaps found and the users that wrote each object. */
const readByObject = test.macro(
  (t, writes: readonly RecordedWrite[], overlaps: readonly string[], writers: ReadonlyMap<string, ReadonlySet<string>>) => {
    const byObject = writesByObject(writes, isWorkload);
    t.deepEqual(overlappingWrites(byObject), overlaps);
    t.deepEqual(writersOf(byObject), writers);
  },
);

test(
  'writes of two users for one object overlap when one is received before the other completed',
  readByObject,
  [...deploymentPatches('app-1', ['a', 0, 10], ['b', 5, 6]), ...deploymentPatches('app-2', ['a', 0, 10], ['a', 1, 2], ['b', 9, 12])],
  [
    "ns/app-1: b patch deployments received while a's patch deployments was in progress (5 ms left)",
    "ns/app-2: b patch deployments received while a's patch deployments was in progress (1 ms left)",
  ],
  new Map([
    ['ns/app-1', new Set(['a', 'b'])],
    ['ns/app-2', new Set(['a', 'b'])],
  ]),
);

test(
  'a handoff (one user completes, then the other starts) and one user overlapping itself are no overlap',
  readByObject,
  [...deploymentPatches('app-1', ['a', 0, 10], ['b', 10, 12], ['a', 13, 14]), write('a', 'app.example.com', 'customapps', 'app-1', 2, 4)],
  [],
  new Map([['ns/app-1', new Set(['a', 'b'])]]),
);
