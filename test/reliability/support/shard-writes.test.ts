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

test('writes of two users for one object overlap when one is received before the other completed', (t) => {
  const byObject = writesByObject(
    [
      write('a', 'apps', 'deployments', 'app-1', 0, 10),
      write('b', 'apps', 'deployments', 'app-1', 5, 6),
      write('a', 'apps', 'deployments', 'app-2', 0, 10),
      write('a', 'apps', 'deployments', 'app-2', 1, 2),
      write('b', 'apps', 'deployments', 'app-2', 9, 12),
    ],
    isWorkload,
  );
  t.deepEqual(overlappingWrites(byObject), [
    "ns/app-1: b patch deployments received while a's patch deployments was in progress (5 ms left)",
    "ns/app-2: b patch deployments received while a's patch deployments was in progress (1 ms left)",
  ]);
});

test('a handoff (one user completes, then the other starts) and one user overlapping itself are no overlap', (t) => {
  const byObject = writesByObject(
    [
      write('a', 'apps', 'deployments', 'app-1', 0, 10),
      write('a', 'app.example.com', 'customapps', 'app-1', 2, 4),
      write('b', 'apps', 'deployments', 'app-1', 10, 12),
      write('a', 'apps', 'deployments', 'app-1', 13, 14),
    ],
    isWorkload,
  );
  t.deepEqual(overlappingWrites(byObject), []);
  t.deepEqual(writersOf(byObject), new Map([['ns/app-1', new Set(['a', 'b'])]]));
});
