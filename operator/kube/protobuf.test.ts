// The protobuf decoder on bytes built here field by field: what it reads, what it skips, how it fails.
import test from 'ava';
import fc from 'fast-check';
import { ApiError } from './errors.js';
import { decodeObject, decodeWatchEvent, FrameReader, MAX_FRAME_BYTES } from './protobuf.js';

const varint = (value: number): number[] => {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return bytes;
};
const field = (number: number, wire: number): number[] => varint(number * 8 + wire);
const bytesField = (number: number, value: Buffer | number[]): number[] => [...field(number, 2), ...varint(value.length), ...value];
const stringField = (number: number, value: string): number[] => bytesField(number, Buffer.from(value, 'utf8'));
const varintField = (number: number, value: number): number[] => [...field(number, 0), ...varint(value)];
const entry = (number: number, key: string, value: string | Buffer): number[] =>
  bytesField(number, [...stringField(1, key), ...bytesField(2, typeof value === 'string' ? Buffer.from(value, 'utf8') : value)]);
/** Fields of every wire type a newer server may add, with numbers no decoded message uses. */
const unknownFields = (): number[] => [
  ...varintField(900, 300),
  ...field(901, 1),
  ...[1, 2, 3, 4, 5, 6, 7, 8],
  ...stringField(902, 'later'),
  ...field(903, 5),
  ...[1, 2, 3, 4],
];
/** The `k8s\0` envelope: runtime.Unknown with its TypeMeta and the message as raw bytes. */
const envelope = (apiVersion: string, kind: string, raw: number[]): Buffer =>
  Buffer.from([
    ...Buffer.from('k8s\0', 'latin1'),
    ...bytesField(1, [...stringField(1, apiVersion), ...stringField(2, kind)]),
    ...bytesField(2, raw),
    ...stringField(3, ''),
    ...stringField(4, ''),
  ]);

const SECRET_VALUE = 'do-not-print-me';
const meta = (): number[] => [
  ...stringField(1, 'app-config'),
  ...stringField(2, ''),
  ...stringField(3, 'default'),
  ...stringField(4, ''),
  ...stringField(5, 'uid-1'),
  ...stringField(6, '42'),
  ...varintField(7, 0),
  ...bytesField(8, [...varintField(1, 1_764_800_000), ...varintField(2, 0)]),
  ...entry(11, 'app', 'web'),
  ...entry(12, 'note', 'é ✓'),
  ...bytesField(13, [
    ...stringField(1, 'CustomApp'),
    ...stringField(3, 'web'),
    ...stringField(4, 'uid-0'),
    ...stringField(5, 'app.example.com/v1'),
    ...varintField(6, 1),
  ]),
  ...stringField(14, 'example.com/hold'),
  // managedFields: skipped whole.
  ...bytesField(17, [...stringField(1, 'kubectl'), ...stringField(2, 'Update')]),
  ...unknownFields(),
];

test('a ConfigMap decodes to what its JSON parses to, skipping managedFields and fields it does not know', (t) => {
  const raw = [
    ...bytesField(1, meta()),
    ...entry(2, 'b', 'two'),
    ...entry(2, 'empty', ''),
    ...entry(3, 'bin', Buffer.from([0, 255, 128])),
    ...varintField(4, 1),
    ...unknownFields(),
  ];
  t.deepEqual(decodeObject(envelope('v1', 'ConfigMap', raw)), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'app-config',
      namespace: 'default',
      uid: 'uid-1',
      resourceVersion: '42',
      creationTimestamp: '2025-12-03T22:13:20Z',
      labels: { app: 'web' },
      annotations: { note: 'é ✓' },
      ownerReferences: [{ apiVersion: 'app.example.com/v1', kind: 'CustomApp', name: 'web', uid: 'uid-0', controller: true }],
      finalizers: ['example.com/hold'],
    },
    immutable: true,
    data: { b: 'two', empty: '' },
    binaryData: { bin: Buffer.from([0, 255, 128]).toString('base64') },
  });
});

test('a Secret list decodes its items without apiVersion or kind, data as base64, and the list metadata', (t) => {
  const secret = [
    ...bytesField(1, [...stringField(1, 's'), ...stringField(3, 'default')]),
    ...entry(2, 'k', Buffer.from(SECRET_VALUE)),
    ...stringField(3, 'Opaque'),
  ];
  const raw = [...bytesField(1, [...stringField(2, '77'), ...stringField(3, 'next-page'), ...varintField(4, 3)]), ...bytesField(2, secret)];
  t.deepEqual(decodeObject(envelope('v1', 'SecretList', raw)), {
    apiVersion: 'v1',
    kind: 'SecretList',
    metadata: { resourceVersion: '77', continue: 'next-page', remainingItemCount: 3 },
    items: [{ metadata: { name: 's', namespace: 'default' }, data: { k: Buffer.from(SECRET_VALUE).toString('base64') }, type: 'Opaque' }],
  });
});

test('a Status decodes with its details and causes, as an error answer or an ERROR event carries it', (t) => {
  const details = [
    ...stringField(1, 'zz'),
    ...stringField(3, 'configmaps'),
    ...bytesField(4, [...stringField(1, 'FieldValueInvalid'), ...stringField(3, 'data')]),
    ...varintField(5, 2),
  ];
  const raw = [
    ...bytesField(1, []),
    ...stringField(2, 'Failure'),
    ...stringField(3, 'too old'),
    ...stringField(4, 'Expired'),
    ...bytesField(5, details),
    ...varintField(6, 410),
  ];
  const status = envelope('v1', 'Status', raw);
  const expected = {
    apiVersion: 'v1',
    kind: 'Status',
    metadata: {},
    status: 'Failure',
    message: 'too old',
    reason: 'Expired',
    details: { name: 'zz', kind: 'configmaps', causes: [{ reason: 'FieldValueInvalid', field: 'data' }], retryAfterSeconds: 2 },
    code: 410,
  };
  t.deepEqual(decodeObject(status), expected);
  const event = Buffer.from([...stringField(1, 'ERROR'), ...bytesField(2, bytesField(1, status))]);
  t.deepEqual(decodeWatchEvent(event), { type: 'ERROR', object: expected });
});

test('every cut of an object fails with an ApiError that quotes none of its bytes', (t) => {
  const whole = envelope('v1', 'Secret', [...bytesField(1, meta()), ...entry(2, 'k', Buffer.from(SECRET_VALUE))]);
  // The envelope's last 4 bytes are its two empty optional strings: a cut among them leaves a whole object.
  for (let length = 0; length < whole.length - 4; length += 1) {
    const error = t.throws(() => decodeObject(whole.subarray(0, length)), { instanceOf: ApiError }, `cut at ${length}`);
    t.false(error?.message.includes(SECRET_VALUE));
    t.false(error?.message.includes(Buffer.from(SECRET_VALUE).toString('base64')));
  }
  t.notThrows(() => decodeObject(whole));
});

test('a kind it does not read, an encoded body and a group wire type are refused', (t) => {
  t.throws(() => decodeObject(envelope('apps/v1', 'Deployment', [])), { message: /kind Deployment is not one the client reads/ });
  const encoded = Buffer.concat([envelope('v1', 'ConfigMap', []).subarray(0, -2), Buffer.from(stringField(3, 'gzip'))]);
  t.throws(() => decodeObject(encoded), { message: /content encoding gzip/ });
  t.throws(() => decodeObject(envelope('v1', 'ConfigMap', [...field(5, 3)])), { message: /wire type 3/ });
  t.throws(() => decodeObject(Buffer.from('{"kind":"ConfigMap"}')), { message: /no k8s envelope/ });
});

test('frames cut anywhere across chunks come out whole and in order', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 8 }),
      fc.array(fc.nat(2000), { maxLength: 12 }),
      (frames, cuts) => {
        const stream = Buffer.concat(
          frames.map((frame) => {
            const head = Buffer.alloc(4);
            head.writeUInt32BE(frame.length);
            return Buffer.concat([head, frame]);
          }),
        );
        const points = [...new Set(cuts.map((cut) => cut % (stream.length + 1)))].sort((a, b) => a - b);
        const reader = new FrameReader();
        const out: Buffer[] = [];
        let from = 0;
        for (const point of [...points, stream.length]) {
          reader.push(stream.subarray(from, point));
          from = point;
          for (let frame = reader.next(); frame !== undefined; frame = reader.next()) out.push(Buffer.from(frame));
        }
        t.deepEqual(
          out.map((frame) => frame.toString('hex')),
          frames.map((frame) => Buffer.from(frame).toString('hex')),
        );
        t.is(reader.pending, 0);
      },
    ),
    { numRuns: 200 },
  );
});

test('a frame announcing more than the limit is refused before it is buffered', (t) => {
  const reader = new FrameReader();
  const head = Buffer.alloc(4);
  head.writeUInt32BE(MAX_FRAME_BYTES + 1);
  reader.push(head);
  t.throws(() => reader.next(), { instanceOf: ApiError, message: /watch frame of \d+ bytes/ });
});
