// Kubernetes' protobuf encoding of the built-in kinds the operator lists and watches in bulk (ConfigMaps, Secrets),
// decoded into the very objects their JSON parses to, so that nothing past the client knows which one was read.
import { ApiError } from './errors.js';

/** The media type kube-apiserver serves built-in kinds in (never custom resources). */
export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** What a read of a decodable kind asks for: protobuf, else JSON (an emulator, a proxy that only speaks JSON). */
export const PROTOBUF_ACCEPT = `${PROTOBUF}, application/json`;
/** The bytes every protobuf-encoded object starts with, before its `runtime.Unknown` envelope. */
const MAGIC = Buffer.from('k8s\0', 'latin1');
/**
 * The largest watch frame read: an object of at most 1.5 MiB (etcd's request limit) with its envelope, with room.
 * A frame announcing more is a broken stream, refused before any of it is buffered.
 */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Whether `contentType` (a response's header) is protobuf, a watch stream's included. */
export function isProtobuf(contentType: string | undefined): boolean {
  return contentType?.startsWith(PROTOBUF) === true;
}

/** The kinds {@link decodeObject} reads: the core group's ConfigMaps and Secrets, their lists, and Status. */
export function decodesKind(group: string, kind: string): boolean {
  return group === '' && (kind === 'ConfigMap' || kind === 'Secret');
}

function malformed(what: string): ApiError {
  return new ApiError(`malformed protobuf: ${what}`, 0);
}

/** A cursor over one message's bytes: `end` is the end of the message being read, narrowed for nested ones. */
class Reader {
  pos: number;
  end: number;

  constructor(
    readonly buf: Buffer,
    start: number,
    end: number,
  ) {
    this.pos = start;
    this.end = end;
  }

  more(): boolean {
    return this.pos < this.end;
  }

  varint(): number {
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      if (this.pos >= this.end) throw malformed('truncated varint');
      if (shift > 63) throw malformed('varint longer than 10 bytes');
      byte = this.buf[this.pos++]!;
      // Bitwise while the value fits 31 bits; past that, arithmetic (exact up to 2^53, as JSON's numbers are).
      result = shift < 28 ? result | ((byte & 0x7f) << shift) : result + (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return result;
  }

  /** The byte length of the length-delimited field at the cursor, checked against the message's end. */
  length(): number {
    const length = this.varint();
    if (length > this.end - this.pos) throw malformed('field longer than its message');
    return length;
  }

  string(): string {
    const length = this.length();
    const value = this.buf.toString('utf8', this.pos, this.pos + length);
    this.pos += length;
    return value;
  }

  /** Bytes as JSON carries them: base64. */
  base64(): string {
    const length = this.length();
    const value = this.buf.toString('base64', this.pos, this.pos + length);
    this.pos += length;
    return value;
  }

  bytes(): Buffer {
    const length = this.length();
    const value = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return value;
  }

  /** A nested message, read by `decode` within its own length. */
  message<T>(decode: (reader: Reader) => T): T {
    const length = this.length();
    const outer = this.end;
    this.end = this.pos + length;
    const value = decode(this);
    this.pos = this.end;
    this.end = outer;
    return value;
  }

  skip(wire: number): void {
    switch (wire) {
      case 0:
        this.varint();
        return;
      case 1:
        this.advance(8);
        return;
      case 2:
        this.advance(this.length());
        return;
      case 5:
        this.advance(4);
        return;
      default:
        throw malformed(`wire type ${wire}`);
    }
  }

  private advance(bytes: number): void {
    if (bytes > this.end - this.pos) throw malformed('field longer than its message');
    this.pos += bytes;
  }
}

type Json = Record<string, unknown>;

/** A map entry (`key` = 1, `value` = 2) into `into`; `base64` for `map<string, bytes>`. */
function mapEntry(reader: Reader, into: Record<string, string>, base64: boolean): void {
  reader.message((entry) => {
    let key = '';
    let value = '';
    while (entry.more()) {
      const tag = entry.varint();
      if (tag === 0x0a) key = entry.string();
      else if (tag === 0x12) value = base64 ? entry.base64() : entry.string();
      else entry.skip(tag & 7);
    }
    into[key] = value;
  });
}

/** metav1.Time: seconds and nanos, as JSON writes it (RFC 3339 to the second); undefined for the zero time. */
function time(reader: Reader): string | undefined {
  return reader.message((message) => {
    let seconds = 0;
    let nanos = 0;
    while (message.more()) {
      const tag = message.varint();
      if (tag === 0x08) seconds = message.varint();
      else if (tag === 0x10) nanos = message.varint();
      else message.skip(tag & 7);
    }
    if (seconds === 0 && nanos === 0) return undefined;
    return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
  });
}

function ownerReference(reader: Reader): Json {
  let kind = '';
  let name = '';
  let uid = '';
  let apiVersion = '';
  let controller: boolean | undefined;
  let blockOwnerDeletion: boolean | undefined;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === 0x0a) kind = reader.string();
    else if (tag === 0x1a) name = reader.string();
    else if (tag === 0x22) uid = reader.string();
    else if (tag === 0x2a) apiVersion = reader.string();
    else if (tag === 0x30) controller = reader.varint() !== 0;
    else if (tag === 0x38) blockOwnerDeletion = reader.varint() !== 0;
    else reader.skip(tag & 7);
  }
  const reference: Json = { apiVersion, kind, name, uid };
  if (controller !== undefined) reference.controller = controller;
  if (blockOwnerDeletion !== undefined) reference.blockOwnerDeletion = blockOwnerDeletion;
  return reference;
}

/**
 * Reads a message's fields into `into`: the string fields `names` names by field number, an empty one left out as
 * JSON leaves it; every other tag to `other`, which answers whether it read the field (else it is skipped).
 */
function fields(reader: Reader, names: Readonly<Record<number, string>>, into: Json, other?: (tag: number) => boolean): Json {
  while (reader.more()) {
    const tag = reader.varint();
    const name = (tag & 7) === 2 ? names[tag >>> 3] : undefined;
    if (name !== undefined) {
      const value = reader.string();
      if (value !== '') into[name] = value;
    } else if (!other?.(tag)) reader.skip(tag & 7);
  }
  return into;
}

const META_STRINGS = { 1: 'name', 2: 'generateName', 3: 'namespace', 4: 'selfLink', 5: 'uid', 6: 'resourceVersion' };

/**
 * metav1.ObjectMeta, with JSON's omissions (empty strings, zero generation, empty maps and lists). `managedFields`
 * is not decoded: every cache drops it, and it is most of a small object's bytes.
 */
function objectMeta(reader: Reader): Json {
  let labels: Record<string, string> | undefined;
  let annotations: Record<string, string> | undefined;
  let ownerReferences: Json[] | undefined;
  let finalizers: string[] | undefined;
  const meta: Json = {};
  fields(reader, META_STRINGS, meta, (tag) => {
    if (tag === 0x38) {
      const generation = reader.varint();
      if (generation !== 0) meta.generation = generation;
    } else if (tag === 0x42 || tag === 0x4a) {
      // kube-apiserver 1.34 leaves a zero creationTimestamp out of JSON (a bookmark's); earlier ones wrote null.
      const value = time(reader);
      if (value !== undefined) meta[tag === 0x42 ? 'creationTimestamp' : 'deletionTimestamp'] = value;
    } else if (tag === 0x50) meta.deletionGracePeriodSeconds = reader.varint();
    else if (tag === 0x5a) mapEntry(reader, (labels ??= {}), false);
    else if (tag === 0x62) mapEntry(reader, (annotations ??= {}), false);
    else if (tag === 0x6a) (ownerReferences ??= []).push(reader.message(ownerReference));
    else if (tag === 0x72) (finalizers ??= []).push(reader.string());
    else return false;
    return true;
  });
  if (labels) meta.labels = labels;
  if (annotations) meta.annotations = annotations;
  if (ownerReferences) meta.ownerReferences = ownerReferences;
  if (finalizers) meta.finalizers = finalizers;
  return meta;
}

function listMeta(reader: Reader): Json {
  const meta: Json = {};
  return fields(reader, { 1: 'selfLink', 2: 'resourceVersion', 3: 'continue' }, meta, (tag) => {
    if (tag !== 0x20) return false;
    meta.remainingItemCount = reader.varint();
    return true;
  });
}

/** core/v1 ConfigMap: metadata 1, data 2, binaryData 3 (bytes, base64 in JSON), immutable 4. */
function configMap(reader: Reader): Json {
  let metadata: Json = {};
  let data: Record<string, string> | undefined;
  let binaryData: Record<string, string> | undefined;
  let immutable: boolean | undefined;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === 0x0a) metadata = reader.message(objectMeta);
    else if (tag === 0x12) mapEntry(reader, (data ??= {}), false);
    else if (tag === 0x1a) mapEntry(reader, (binaryData ??= {}), true);
    else if (tag === 0x20) immutable = reader.varint() !== 0;
    else reader.skip(tag & 7);
  }
  const object: Json = { metadata };
  if (immutable !== undefined) object.immutable = immutable;
  if (data) object.data = data;
  if (binaryData) object.binaryData = binaryData;
  return object;
}

/** core/v1 Secret: metadata 1, data 2 (bytes, base64 in JSON), type 3, stringData 4 (write-only), immutable 5. */
function secret(reader: Reader): Json {
  let metadata: Json = {};
  let data: Record<string, string> | undefined;
  let type = '';
  let immutable: boolean | undefined;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === 0x0a) metadata = reader.message(objectMeta);
    else if (tag === 0x12) mapEntry(reader, (data ??= {}), true);
    else if (tag === 0x1a) type = reader.string();
    else if (tag === 0x28) immutable = reader.varint() !== 0;
    else reader.skip(tag & 7);
  }
  const object: Json = { metadata };
  if (immutable !== undefined) object.immutable = immutable;
  if (data) object.data = data;
  if (type !== '') object.type = type;
  return object;
}

function statusCause(reader: Reader): Json {
  return fields(reader, { 1: 'reason', 2: 'message', 3: 'field' }, {});
}

function statusDetails(reader: Reader): Json {
  let causes: Json[] | undefined;
  const details: Json = {};
  fields(reader, { 1: 'name', 2: 'group', 3: 'kind', 6: 'uid' }, details, (tag) => {
    if (tag === 0x22) (causes ??= []).push(reader.message(statusCause));
    else if (tag === 0x28) {
      const seconds = reader.varint();
      if (seconds !== 0) details.retryAfterSeconds = seconds;
    } else return false;
    return true;
  });
  if (causes) details.causes = causes;
  return details;
}

/** metav1.Status: metadata 1, status 2, message 3, reason 4, details 5, code 6. */
function status(reader: Reader): Json {
  const object: Json = { metadata: {} };
  return fields(reader, { 2: 'status', 3: 'message', 4: 'reason' }, object, (tag) => {
    if (tag === 0x0a) object.metadata = reader.message(listMeta);
    else if (tag === 0x2a) object.details = reader.message(statusDetails);
    else if (tag === 0x30) {
      const code = reader.varint();
      if (code !== 0) object.code = code;
    } else return false;
    return true;
  });
}

/** A list: metadata 1 (ListMeta), items 2. */
function list(item: (reader: Reader) => Json): (reader: Reader) => Json {
  return (reader) => {
    let metadata: Json = {};
    const items: Json[] = [];
    while (reader.more()) {
      const tag = reader.varint();
      if (tag === 0x0a) metadata = reader.message(listMeta);
      else if (tag === 0x12) items.push(reader.message(item));
      else reader.skip(tag & 7);
    }
    return { metadata, items };
  };
}

/** What each decodable kind's message is read with; a list's items carry no apiVersion or kind, as in JSON. */
const DECODERS: Readonly<Record<string, (reader: Reader) => Json>> = {
  ConfigMap: configMap,
  Secret: secret,
  ConfigMapList: list(configMap),
  SecretList: list(secret),
  Status: status,
};

/**
 * One protobuf-encoded object (the bytes `k8s\0`, then a `runtime.Unknown` holding its apiVersion, kind and message)
 * as the object its JSON would parse to, `apiVersion` and `kind` first. Throws an {@link ApiError} on malformed bytes
 * or a kind it cannot read (never quoting the bytes: they may be a Secret's).
 */
export function decodeObject(bytes: Buffer, start = 0, end = bytes.length): unknown {
  if (end - start < MAGIC.length || MAGIC.compare(bytes, start, start + MAGIC.length) !== 0) throw malformed('no k8s envelope');
  const reader = new Reader(bytes, start + MAGIC.length, end);
  let apiVersion = '';
  let kind = '';
  let rawStart = -1;
  let rawEnd = -1;
  let encoding = '';
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === 0x0a) {
      reader.message((typeMeta) => {
        while (typeMeta.more()) {
          const field = typeMeta.varint();
          if (field === 0x0a) apiVersion = typeMeta.string();
          else if (field === 0x12) kind = typeMeta.string();
          else typeMeta.skip(field & 7);
        }
      });
    } else if (tag === 0x12) {
      const raw = reader.bytes();
      rawStart = raw.byteOffset - bytes.byteOffset;
      rawEnd = rawStart + raw.length;
    } else if (tag === 0x1a) encoding = reader.string();
    else reader.skip(tag & 7);
  }
  if (encoding !== '') throw malformed(`content encoding ${encoding}`);
  const decode = DECODERS[kind];
  if (decode === undefined) throw malformed(`kind ${kind || '(none)'} is not one the client reads`);
  if (rawStart < 0) throw malformed(`${kind} without a body`);
  return { apiVersion, kind, ...decode(new Reader(bytes, rawStart, rawEnd)) };
}

/** One frame of a protobuf watch stream: a metav1.WatchEvent (type 1, object 2 holding the encoded object as raw 1). */
export function decodeWatchEvent(frame: Buffer): { type: string; object: unknown } {
  const reader = new Reader(frame, 0, frame.length);
  let type = '';
  let object: unknown;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === 0x0a) type = reader.string();
    else if (tag === 0x12) {
      object = reader.message((extension) => {
        let decoded: unknown;
        while (extension.more()) {
          const field = extension.varint();
          if (field === 0x0a) {
            const length = extension.length();
            decoded = decodeObject(frame, extension.pos, extension.pos + length);
            extension.pos += length;
          } else extension.skip(field & 7);
        }
        return decoded;
      });
    } else reader.skip(tag & 7);
  }
  if (type === '' || object === undefined) throw malformed('watch event without type or object');
  return { type, object };
}

/**
 * Cuts a protobuf watch stream into frames (each a 4-byte big-endian length, then that many bytes) as chunks arrive.
 * A frame longer than {@link MAX_FRAME_BYTES} throws before it is buffered.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  /** The next whole frame, or undefined until more bytes come. */
  next(): Buffer | undefined {
    if (this.buffered < 4) return undefined;
    if (this.chunks[0]!.length < 4) this.merge();
    const length = this.chunks[0]!.readUInt32BE(0);
    if (length > MAX_FRAME_BYTES) throw malformed(`watch frame of ${length} bytes`);
    if (this.buffered < 4 + length) return undefined;
    if (this.chunks[0]!.length < 4 + length) this.merge();
    const head = this.chunks[0]!;
    const frame = head.subarray(4, 4 + length);
    const rest = head.subarray(4 + length);
    if (rest.length > 0) this.chunks[0] = rest;
    else this.chunks.shift();
    this.buffered -= 4 + length;
    return frame;
  }

  /** Bytes left that make no whole frame (a stream that ends with some was cut). */
  get pending(): number {
    return this.buffered;
  }

  private merge(): void {
    this.chunks = [Buffer.concat(this.chunks)];
  }
}
