// Conversion between core/v1 Events (the storage form) and events.k8s.io/v1 Events, as the apiserver's conversion does.
import type { KubeObject } from '../object.js';

type Obj = Record<string, any>;

const renames: readonly (readonly [core: string, events: string])[] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['reportingComponent', 'reportingController'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
];

const shared = ['eventTime', 'series', 'reportingInstance', 'action', 'reason', 'related', 'type'];

export function eventToStorage(event: KubeObject): KubeObject {
  const e = event as Obj;
  const out: Obj = { apiVersion: 'v1', kind: 'Event', metadata: event.metadata };
  for (const field of shared) if (e[field] !== undefined) out[field] = e[field];
  for (const [core, events] of renames) if (e[events] !== undefined) out[core] = e[events];
  return out as KubeObject;
}

export function eventFromStorage(event: KubeObject): KubeObject {
  const e = event as Obj;
  const out: Obj = { kind: 'Event', apiVersion: 'events.k8s.io/v1', metadata: event.metadata };
  out.eventTime = e.eventTime ?? null;
  for (const field of shared) if (field !== 'eventTime' && e[field] !== undefined && e[field] !== '') out[field] = e[field];
  for (const [core, events] of renames) if (e[core] !== undefined && e[core] !== '' && e[core] !== 0) out[events] = e[core];
  out.deprecatedSource ??= {};
  return out as KubeObject;
}
