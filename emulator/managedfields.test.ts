// managedFields are ordered as the apiserver orders them: operation, then time in whole seconds, then manager,
// apiVersion and subresource (sortEncodedManagedFields in k8s.io/apiserver's fieldmanager).
import test from 'ava';
import { decodeManagedFields, encodeManagedFields } from './managedfields.js';

const entry = (manager: string, operation: 'Apply' | 'Update', time: string, subresource?: string) => ({
  manager,
  operation,
  apiVersion: 'app.example.com/v1',
  time,
  fieldsType: 'FieldsV1' as const,
  fieldsV1: { 'f:spec': { 'f:image': {} } },
  ...(subresource ? { subresource } : {}),
});

const order = (entries: ReturnType<typeof entry>[]): string[] =>
  encodeManagedFields(decodeManagedFields(entries))!.map(
    (e) => `${e.operation} ${e.manager}${e.subresource ? `/${e.subresource}` : ''} ${e.time}`,
  );

test('within one second, the main entry of a manager comes before its status entry', (t) => {
  t.deepEqual(order([entry('unknown', 'Update', '2026-11-30T10:00:00Z', 'status'), entry('unknown', 'Update', '2026-11-30T10:00:00Z')]), [
    'Update unknown 2026-11-30T10:00:00Z',
    'Update unknown/status 2026-11-30T10:00:00Z',
  ]);
});

test('an earlier second comes first, whatever the manager or subresource', (t) => {
  t.deepEqual(
    order([
      entry('unknown', 'Update', '2026-11-30T10:00:01Z'),
      entry('unknown', 'Update', '2026-11-30T10:00:00Z', 'status'),
      entry('a-manager', 'Update', '2026-11-30T10:00:02Z'),
    ]),
    ['Update unknown/status 2026-11-30T10:00:00Z', 'Update unknown 2026-11-30T10:00:01Z', 'Update a-manager 2026-11-30T10:00:02Z'],
  );
});

test('Apply entries come before Update entries, even later ones', (t) => {
  t.deepEqual(order([entry('kubectl', 'Update', '2026-11-30T10:00:00Z'), entry('kubectl', 'Apply', '2026-11-30T10:00:05Z')]), [
    'Apply kubectl 2026-11-30T10:00:05Z',
    'Update kubectl 2026-11-30T10:00:00Z',
  ]);
});
