// The references of a pod template, one test per form, and how several uses of one object merge.
import test from 'ava';
import type { PodTemplate } from '../kube/objects.js';
import { decodeHashes, encodeHashes } from './hash-annotation.js';
import { templateReferences } from './references.js';

const template = (spec: Partial<PodTemplate['spec']>): PodTemplate => ({ spec: { containers: [], ...spec } }) as PodTemplate;

test('envFrom of a container and of an init container: the whole object', (t) => {
  const refs = templateReferences(
    template({
      initContainers: [{ name: 'init', envFrom: [{ secretRef: { name: 'init-secret' } }] }],
      containers: [{ name: 'app', envFrom: [{ configMapRef: { name: 'app-config' } }, { secretRef: { name: 'db', optional: true } }] }],
    }),
  );
  t.deepEqual(refs, [
    { kind: 'Secret', name: 'init-secret', optional: false },
    { kind: 'ConfigMap', name: 'app-config', optional: false },
    { kind: 'Secret', name: 'db', optional: true },
  ]);
});

test('env valueFrom configMapKeyRef and secretKeyRef: the keys read', (t) => {
  const refs = templateReferences(
    template({
      containers: [
        {
          name: 'app',
          env: [
            { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'a' } } },
            { name: 'B', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'b', optional: true } } },
            { name: 'P', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
            { name: 'PLAIN', value: 'x' },
            { name: 'FIELD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
        },
      ],
    }),
  );
  t.deepEqual(refs, [
    { kind: 'ConfigMap', name: 'cfg', optional: false, keys: ['a', 'b'] },
    { kind: 'Secret', name: 'creds', optional: false, keys: ['password'] },
  ]);
});

test('volumes: configMap, secret (secretName), projected sources; items name keys, no items is the whole object', (t) => {
  const refs = templateReferences(
    template({
      volumes: [
        { name: 'v1', configMap: { name: 'files', items: [{ key: 'app.yaml', path: 'app.yaml' }] } },
        { name: 'v2', secret: { secretName: 'tls', optional: true } },
        {
          name: 'v3',
          projected: {
            sources: [
              { configMap: { name: 'more' } },
              { secret: { name: 'token', items: [{ key: 'token', path: 't' }] } },
              { downwardAPI: { items: [] } },
            ],
          },
        },
        { name: 'v4', emptyDir: {} },
      ],
    }),
  );
  t.deepEqual(refs, [
    { kind: 'ConfigMap', name: 'files', optional: false, keys: ['app.yaml'] },
    { kind: 'Secret', name: 'tls', optional: true },
    { kind: 'ConfigMap', name: 'more', optional: false },
    { kind: 'Secret', name: 'token', optional: false, keys: ['token'] },
  ]);
});

test('one object used several ways: optional only if every use is, keys only if every use names them', (t) => {
  const refs = templateReferences(
    template({
      containers: [
        {
          name: 'app',
          envFrom: [{ configMapRef: { name: 'cfg', optional: true } }],
          env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'a', optional: true } } }],
        },
      ],
      volumes: [
        { name: 'v', secret: { secretName: 's', optional: true } },
        { name: 'w', projected: { sources: [{ secret: { name: 's' } }] } },
      ],
    }),
  );
  t.deepEqual(refs, [
    { kind: 'ConfigMap', name: 'cfg', optional: true },
    { kind: 'Secret', name: 's', optional: false },
  ]);
});

test('a use without a name is left out; a template without references has none', (t) => {
  t.deepEqual(
    templateReferences(template({ containers: [{ name: 'app', envFrom: [{ configMapRef: { name: '' } }, { secretRef: {} }] }] })),
    [],
  );
  t.deepEqual(templateReferences(template({ containers: [{ name: 'app', image: 'x' }] })), []);
});

test('the hash annotation: sorted keys, round trip with null for missing objects; anything else does not parse', (t) => {
  const value = encodeHashes(
    new Map([
      ['Secret/db', 'b'.repeat(32)],
      ['ConfigMap/app', 'a'.repeat(64)],
      ['ConfigMap/gone', null],
    ]),
  );
  t.is(value, `{"ConfigMap/app":"${'a'.repeat(64)}","ConfigMap/gone":null,"Secret/db":"${'b'.repeat(32)}"}`);
  t.deepEqual(
    [...decodeHashes(value)!],
    [
      ['ConfigMap/app', 'a'.repeat(64)],
      ['ConfigMap/gone', null],
      ['Secret/db', 'b'.repeat(32)],
    ],
  );
  for (const bad of [undefined, '', 'not json', '[]', 'null', '{"Service/x":"h"}', '{"ConfigMap/":"h"}', '{"ConfigMap/a":3}']) {
    t.is(decodeHashes(bad), undefined, String(bad));
  }
});
