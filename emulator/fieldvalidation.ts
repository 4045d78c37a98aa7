// Server-side field validation (fieldValidation=Strict|Warn|Ignore): finds unknown fields and reports them like the apiserver.
import { badRequest } from './errors.js';
import { isObject } from './object.js';
import { refName } from './openapi/builtin.js';
import { childNode, type TypeNode } from './typeschema.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export function parseFieldValidation(value: string | null): FieldValidation {
  if (value === null || value === '') return 'Warn';
  if (value === 'Strict' || value === 'Warn' || value === 'Ignore') return value;
  throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got ${JSON.stringify(value)}`);
}

/**
 * Removes, in place, the fields the schema does not declare (what decoding a built-in kind drops), and returns their
 * dotted paths, metadata first, then in document order.
 */
export function pruneUnknownFields(obj: unknown, schema: TypeNode): string[] {
  const out: string[] = [];
  const walk = (value: unknown, node: TypeNode | undefined, path: string) => {
    if (node === undefined) return;
    if (Array.isArray(value)) {
      if (node.kind === 'list')
        value.forEach((item, i) => {
          walk(item, node.elem, `${path}[${i}]`);
        });
      return;
    }
    if (!isObject(value)) return;
    if (node.kind === 'map') {
      for (const [k, v] of Object.entries(value)) walk(v, node.elem, `${path}[${k}]`);
      return;
    }
    if (node.kind !== 'object') return;
    const keys = Object.keys(value);
    if (path === '' && keys.includes('metadata')) {
      const meta = childNode(node, 'metadata');
      if (meta !== undefined) walk(value.metadata, meta, 'metadata');
    }
    const ordered = path === '' ? keys.filter((k) => k !== 'metadata') : keys;
    const nested: [unknown, TypeNode, string][] = [];
    for (const key of ordered) {
      const child = childNode(node, key);
      const childPath = path === '' ? key : `${path}.${key}`;
      if (child === undefined) {
        out.push(childPath);
        delete value[key];
      } else nested.push([value[key], child, childPath]);
    }
    for (const [v, n, p] of nested) walk(v, n, p);
  };
  walk(obj, schema, '');
  return out;
}

/** What a request's unknown fields turn into: an error (Strict), warnings (Warn), or nothing (Ignore). */
export function unknownFieldOutcome(mode: FieldValidation, kind: string, version: string, unknown: readonly string[]): string[] {
  if (unknown.length === 0 || mode === 'Ignore') return [];
  const messages = unknown.map((p) => `unknown field ${JSON.stringify(p)}`);
  if (mode === 'Strict') {
    throw badRequest(
      `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: strict decoding error: ${messages.join(', ')}`,
    );
  }
  return messages;
}

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return `number ${value}`;
  return typeof value;
}

function goType(schema: Record<string, any>): string {
  if (schema.type === 'integer') return schema.format === 'int32' ? 'int32' : 'int64';
  if (schema.type === 'number') return 'float64';
  if (schema.type === 'boolean') return 'bool';
  return 'string';
}

const timeSchema = 'io.k8s.apimachinery.pkg.apis.meta.v1.Time';
const microTimeSchema = 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime';
const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const rfc3339Micro = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;

/**
 * metav1.Time and MicroTime as Go decodes them: Time takes RFC 3339 and keeps whole seconds in UTC; MicroTime takes
 * exactly six fractional digits. Returns the normalised value, or the parse error text.
 */
function decodeTime(value: string, micro: boolean): { value: string } | { error: string } {
  if (micro) {
    if (!rfc3339Micro.test(value)) {
      const rest = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(value) ? value.slice(19) : value;
      return {
        error: `parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05.000000Z07:00": cannot parse ${JSON.stringify(rest)} as ".000000"`,
      };
    }
    const ms = Date.parse(value);
    const micros = value.slice(20, 26).slice(3);
    return { value: new Date(ms).toISOString().replace(/Z$/, `${micros}Z`) };
  }
  if (!rfc3339.test(value))
    return {
      error: `parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(value)} as "2006"`,
    };
  return { value: new Date(Date.parse(value)).toISOString().replace(/\.\d{3}Z$/, 'Z') };
}

/** encoding/json's message for a value its Go field cannot take. */
function unmarshalError(value: unknown, struct: string, path: readonly string[], goTypeName: string): string {
  return `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path.join('.')} of type ${goTypeName}`;
}

/**
 * The first value of a built-in object whose JSON type its Go field cannot take, worded as encoding/json does
 * ("json: cannot unmarshal bool into Go struct field ConfigMap.data of type string"), or undefined. Time values are
 * normalised in place (whole seconds, UTC), as the decoding round trip does.
 */
export function builtinTypeError(obj: unknown, schemaName: string, schemas: Record<string, Record<string, any>>): string | undefined {
  const walk = (
    value: unknown,
    schema: Record<string, any> | undefined,
    struct: string,
    path: string[],
    set: (v: unknown) => void = () => undefined,
  ): string | undefined => {
    if (schema === undefined || value === null || value === undefined) return undefined;
    const ref = refName(schema);
    if (ref === timeSchema || ref === microTimeSchema) {
      if (typeof value !== 'string') return unmarshalError(value, struct, path, 'string');
      const decoded = decodeTime(value, ref === microTimeSchema);
      if ('error' in decoded) return decoded.error;
      set(decoded.value);
      return undefined;
    }
    if (ref !== undefined) {
      const target = schemas[ref];
      if (target === undefined) return undefined;
      if (target.properties !== undefined) {
        if (!isObject(value)) return unmarshalError(value, struct, path, ref.split('.').pop()!);
        return fields(value, target, ref.split('.').pop()!, path);
      }
      return walk(value, target, struct, path);
    }
    if (schema.format === 'int-or-string' || Array.isArray(schema.oneOf)) {
      return typeof value === 'string' || typeof value === 'number' ? undefined : unmarshalError(value, struct, path, 'string');
    }
    switch (schema.type) {
      case 'string':
        return typeof value === 'string' ? undefined : unmarshalError(value, struct, path, 'string');
      case 'boolean':
        return typeof value === 'boolean' ? undefined : unmarshalError(value, struct, path, 'bool');
      case 'integer':
        return typeof value === 'number' && Number.isInteger(value) ? undefined : unmarshalError(value, struct, path, goType(schema));
      case 'number':
        return typeof value === 'number' ? undefined : unmarshalError(value, struct, path, 'float64');
      case 'array':
        if (!Array.isArray(value))
          return unmarshalError(
            value,
            struct,
            path,
            `[]${schema.items ? (refName(schema.items) ?? goType(schema.items)).split('.').pop() : 'interface {}'}`,
          );
        for (let i = 0; i < value.length; i++) {
          const e = walk(value[i], schema.items, struct, path, (v) => (value[i] = v));
          if (e !== undefined) return e;
        }
        return undefined;
      case 'object':
        if (schema.additionalProperties !== undefined && schema.properties === undefined) {
          if (!isObject(value)) return unmarshalError(value, struct, path, `map[string]${goType(schema.additionalProperties)}`);
          for (const [k, v] of Object.entries(value)) {
            const e = walk(v, schema.additionalProperties, struct, path, (next) => (value[k] = next));
            if (e !== undefined) return e;
          }
        }
        return undefined;
      default:
        return undefined;
    }
  };
  const fields = (value: Record<string, unknown>, schema: Record<string, any>, struct: string, path: string[]): string | undefined => {
    for (const [key, child] of Object.entries(value)) {
      const property = schema.properties?.[key];
      if (property === undefined) continue;
      const e = walk(child, property, struct, [...path, key], (next) => (value[key] = next));
      if (e !== undefined) return e;
    }
    return undefined;
  };
  if (!isObject(obj)) return undefined;
  return fields(obj, schemas[schemaName] ?? {}, schemaName.split('.').pop()!, []);
}
