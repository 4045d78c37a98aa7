// Decoding of the Kubernetes protobuf envelope for the few kinds kubectl's typed commands send as protobuf
// (auth can-i, create token, auth whoami, create configmap/secret/namespace); answers are always JSON.
import { unsupportedMediaType } from './errors.js';

type FieldType = 'string' | 'int' | 'bool' | 'bytes' | 'time' | 'intOrString' | MessageSchema | MapSchema;
interface Field {
  readonly name: string;
  readonly type: FieldType;
  readonly repeated?: boolean;
  /** A Go pointer field: present means set, so a zero value is kept (other zero scalars are dropped, as omitempty does). */
  readonly pointer?: boolean;
}
type MessageSchema = { readonly [field: number]: Field };
interface MapSchema {
  readonly map: 'string' | 'bytes' | 'quantity';
}

const time: FieldType = 'time';
const ownerReference: MessageSchema = {
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool' },
  7: { name: 'blockOwnerDeletion', type: 'bool' },
};
const objectMeta: MessageSchema = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'generation', type: 'int' },
  8: { name: 'creationTimestamp', type: time },
  11: { name: 'labels', type: { map: 'string' } },
  12: { name: 'annotations', type: { map: 'string' } },
  13: { name: 'ownerReferences', type: ownerReference, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
};
const resourceAttributes: MessageSchema = {
  1: { name: 'namespace', type: 'string' },
  2: { name: 'verb', type: 'string' },
  3: { name: 'group', type: 'string' },
  4: { name: 'version', type: 'string' },
  5: { name: 'resource', type: 'string' },
  6: { name: 'subresource', type: 'string' },
  7: { name: 'name', type: 'string' },
};
const nonResourceAttributes: MessageSchema = { 1: { name: 'path', type: 'string' }, 2: { name: 'verb', type: 'string' } };

const intOrString: MessageSchema = {
  1: { name: 'type', type: 'int' },
  2: { name: 'intVal', type: 'int' },
  3: { name: 'strVal', type: 'string' },
};
const containerPort: MessageSchema = {
  1: { name: 'name', type: 'string' },
  2: { name: 'hostPort', type: 'int' },
  3: { name: 'containerPort', type: 'int' },
  4: { name: 'protocol', type: 'string' },
  5: { name: 'hostIP', type: 'string' },
};
const container: MessageSchema = {
  1: { name: 'name', type: 'string' },
  2: { name: 'image', type: 'string' },
  3: { name: 'command', type: 'string', repeated: true },
  4: { name: 'args', type: 'string', repeated: true },
  5: { name: 'workingDir', type: 'string' },
  6: { name: 'ports', type: containerPort, repeated: true },
  7: { name: 'env', type: { 1: { name: 'name', type: 'string' }, 2: { name: 'value', type: 'string' } }, repeated: true },
  8: { name: 'resources', type: { 1: { name: 'limits', type: { map: 'quantity' } }, 2: { name: 'requests', type: { map: 'quantity' } } } },
  13: { name: 'terminationMessagePath', type: 'string' },
  14: { name: 'imagePullPolicy', type: 'string' },
  20: { name: 'terminationMessagePolicy', type: 'string' },
};
const podTemplate: MessageSchema = {
  1: { name: 'metadata', type: objectMeta },
  2: {
    name: 'spec',
    type: {
      2: { name: 'containers', type: container, repeated: true },
      3: { name: 'restartPolicy', type: 'string' },
      4: { name: 'terminationGracePeriodSeconds', type: 'int', pointer: true },
      6: { name: 'dnsPolicy', type: 'string' },
      8: { name: 'serviceAccountName', type: 'string' },
      19: { name: 'schedulerName', type: 'string' },
      20: { name: 'initContainers', type: container, repeated: true },
    },
  },
};
const labelSelector: MessageSchema = { 1: { name: 'matchLabels', type: { map: 'string' } } };
const policyRule: MessageSchema = {
  1: { name: 'verbs', type: 'string', repeated: true },
  2: { name: 'apiGroups', type: 'string', repeated: true },
  3: { name: 'resources', type: 'string', repeated: true },
  4: { name: 'resourceNames', type: 'string', repeated: true },
  5: { name: 'nonResourceURLs', type: 'string', repeated: true },
};
const subject: MessageSchema = {
  1: { name: 'kind', type: 'string' },
  2: { name: 'apiGroup', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'namespace', type: 'string' },
};
const roleRef: MessageSchema = {
  1: { name: 'apiGroup', type: 'string' },
  2: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
};
const role: MessageSchema = { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'rules', type: policyRule, repeated: true } };
const binding: MessageSchema = {
  1: { name: 'metadata', type: objectMeta },
  2: { name: 'subjects', type: subject, repeated: true },
  3: { name: 'roleRef', type: roleRef },
};

/** The messages kubectl's typed clients send (create, auth), by Kind; fields outside these schemas are skipped. */
const kinds: Readonly<Record<string, MessageSchema>> = {
  ServiceAccount: { 1: { name: 'metadata', type: objectMeta } },
  Role: role,
  ClusterRole: role,
  RoleBinding: binding,
  ClusterRoleBinding: binding,
  Deployment: {
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: {
        1: { name: 'replicas', type: 'int', pointer: true },
        2: { name: 'selector', type: labelSelector },
        3: { name: 'template', type: podTemplate },
        4: { name: 'strategy', type: { 1: { name: 'type', type: 'string' } } },
        5: { name: 'minReadySeconds', type: 'int' },
        6: { name: 'revisionHistoryLimit', type: 'int', pointer: true },
        9: { name: 'progressDeadlineSeconds', type: 'int', pointer: true },
      },
    },
  },
  Service: {
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: {
        1: {
          name: 'ports',
          type: {
            1: { name: 'name', type: 'string' },
            2: { name: 'protocol', type: 'string' },
            3: { name: 'port', type: 'int' },
            4: { name: 'targetPort', type: 'intOrString' },
            5: { name: 'nodePort', type: 'int' },
          },
          repeated: true,
        },
        2: { name: 'selector', type: { map: 'string' } },
        3: { name: 'clusterIP', type: 'string' },
        4: { name: 'type', type: 'string' },
        6: { name: 'sessionAffinity', type: 'string' },
        10: { name: 'externalName', type: 'string' },
      },
    },
  },
  SelfSubjectAccessReview: {
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: {
        1: { name: 'resourceAttributes', type: resourceAttributes },
        2: { name: 'nonResourceAttributes', type: nonResourceAttributes },
      },
    },
  },
  SelfSubjectRulesReview: {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'spec', type: { 1: { name: 'namespace', type: 'string' } } },
  },
  SelfSubjectReview: { 1: { name: 'metadata', type: objectMeta } },
  TokenRequest: {
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: {
        1: { name: 'audiences', type: 'string', repeated: true },
        3: {
          name: 'boundObjectRef',
          type: {
            1: { name: 'kind', type: 'string' },
            2: { name: 'apiVersion', type: 'string' },
            3: { name: 'name', type: 'string' },
            4: { name: 'uid', type: 'string' },
          },
        },
        4: { name: 'expirationSeconds', type: 'int' },
      },
    },
  },
  ConfigMap: {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'data', type: { map: 'string' } },
    3: { name: 'binaryData', type: { map: 'bytes' } },
    4: { name: 'immutable', type: 'bool' },
  },
  Secret: {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'data', type: { map: 'bytes' } },
    3: { name: 'type', type: 'string' },
    4: { name: 'stringData', type: { map: 'string' } },
    5: { name: 'immutable', type: 'bool' },
  },
  Namespace: {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'spec', type: { 1: { name: 'finalizers', type: 'string', repeated: true } } },
  },
};

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  }

  bytes(): Buffer {
    const n = Number(this.varint());
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

function decodeMessage(buf: Buffer, schema: MessageSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const r = new Reader(buf);
  while (!r.done) {
    const key = Number(r.varint());
    const field = schema[key >> 3];
    const wire = key & 7;
    if (field === undefined) {
      r.skip(wire);
      continue;
    }
    const value = decodeValue(r, field.type, wire);
    if (!field.repeated && !field.pointer && (value === '' || value === 0 || value === false || value === undefined)) continue;
    if (typeof field.type === 'object' && 'map' in field.type) {
      const entry = value as [string, unknown];
      const map = (out[field.name] ??= {}) as Record<string, unknown>;
      map[entry[0]] = entry[1];
    } else if (field.repeated) {
      ((out[field.name] ??= []) as unknown[]).push(value);
    } else {
      out[field.name] = value;
    }
  }
  return out;
}

function decodeValue(r: Reader, type: FieldType, wire: number): unknown {
  if (type === 'int') return Number(BigInt.asIntN(64, r.varint()));
  if (type === 'bool') return r.varint() !== 0n;
  if (type === 'string') return r.bytes().toString('utf8');
  if (type === 'bytes') return r.bytes().toString('base64');
  if (type === 'time') {
    const t = decodeMessage(r.bytes(), { 1: { name: 'seconds', type: 'int' }, 2: { name: 'nanos', type: 'int' } });
    return t.seconds === undefined ? undefined : new Date(Number(t.seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  if (type === 'intOrString') {
    const v = decodeMessage(r.bytes(), intOrString);
    return v.type === 1 ? (v.strVal ?? '') : (v.intVal ?? 0);
  }
  if ('map' in type) {
    if (type.map === 'quantity') {
      const entry = decodeMessage(r.bytes(), {
        1: { name: 'key', type: 'string' },
        2: { name: 'value', type: { 1: { name: 'string', type: 'string' } } },
      });
      return [entry.key ?? '', (entry.value as { string?: string } | undefined)?.string ?? '0'];
    }
    const entry = decodeMessage(r.bytes(), { 1: { name: 'key', type: 'string' }, 2: { name: 'value', type: type.map } });
    return [entry.key ?? '', entry.value ?? ''];
  }
  if (wire !== 2) throw new Error('expected a length-delimited message');
  return decodeMessage(r.bytes(), type);
}

const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Decodes a `application/vnd.kubernetes.protobuf` body into the JSON shape, or 415 for kinds it does not know. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (!body.subarray(0, 4).equals(magic)) throw unsupportedMediaType(['application/json', 'application/yaml']);
  const unknown = decodeMessage(body.subarray(4), {
    1: { name: 'typeMeta', type: { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } } },
    2: { name: 'raw', type: 'bytes' },
  });
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const schema = kinds[typeMeta.kind ?? ''];
  if (schema === undefined) throw unsupportedMediaType(['application/json', 'application/yaml']);
  const object = decodeMessage(Buffer.from(String(unknown.raw ?? ''), 'base64'), schema);
  return { apiVersion: typeMeta.apiVersion, kind: typeMeta.kind, ...object, metadata: object.metadata ?? {} };
}
