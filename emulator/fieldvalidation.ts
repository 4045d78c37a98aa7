// Server-side field validation (fieldValidation=Strict|Warn|Ignore): finds unknown fields and reports them like the apiserver.
import { badRequest } from './errors.js';
import { isObject } from './object.js';
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
      if (node.kind === 'list') value.forEach((item, i) => walk(item, node.elem, `${path}[${i}]`));
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
export function unknownFieldOutcome(
  mode: FieldValidation,
  kind: string,
  version: string,
  unknown: readonly string[],
): string[] {
  if (unknown.length === 0 || mode === 'Ignore') return [];
  const messages = unknown.map((p) => `unknown field ${JSON.stringify(p)}`);
  if (mode === 'Strict') {
    throw badRequest(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: strict decoding error: ${messages.join(', ')}`);
  }
  return messages;
}

const refPrefix = '#/components/schemas/';

function refName(schema: Record<string, any> | undefined): string | undefined {
  if (schema === undefined) return undefined;
  if (typeof schema.$ref === 'string') return schema.$ref.slice(refPrefix.length);
  if (Array.isArray(schema.allOf) && typeof schema.allOf[0]?.$ref === 'string') return schema.allOf[0].$ref.slice(refPrefix.length);
  return undefined;
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

/**
 * The first value of a built-in object whose JSON type its Go field cannot take, worded as encoding/json does
 * ("json: cannot unmarshal bool into Go struct field ConfigMap.data of type string"), or undefined.
 */
export function builtinTypeError(obj: unknown, schemaName: string, schemas: Record<string, Record<string, any>>): string | undefined {
  const walk = (value: unknown, schema: Record<string, any> | undefined, struct: string, path: string[]): string | undefined => {
    if (schema === undefined || value === null || value === undefined) return undefined;
    const ref = refName(schema);
    if (ref !== undefined) {
      const target = schemas[ref];
      if (target === undefined) return undefined;
      if (target.properties !== undefined) {
        if (!isObject(value)) return `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path.join('.')} of type ${ref.split('.').pop()}`;
        return fields(value, target, ref.split('.').pop()!, path);
      }
      return walk(value, target, struct, path);
    }
    if (schema.format === 'int-or-string' || Array.isArray(schema.oneOf)) {
      return typeof value === 'string' || typeof value === 'number' ? undefined : `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path.join('.')} of type string`;
    }
    switch (schema.type) {
      case 'string':
        return typeof value === 'string' ? undefined : `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path.join('.')} of type string`;
      case 'boolean':
        return typeof value === 'boolean' ? undefined : `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path.join('.')} of type bool`;
      case 'integer':
        return typeof value === 'number' && Number.isInteger(value) ? undefined : `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path.join('.')} of type ${goType(schema)}`;
      case 'number':
        return typeof value === 'number' ? undefined : `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path.join('.')} of type float64`;
      case 'array':
        if (!Array.isArray(value)) return `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path.join('.')} of type []${schema.items ? (refName(schema.items) ?? goType(schema.items)).split('.').pop() : 'interface {}'}`;
        for (const item of value) {
          const e = walk(item, schema.items, struct, path);
          if (e !== undefined) return e;
        }
        return undefined;
      case 'object':
        if (schema.additionalProperties !== undefined && schema.properties === undefined) {
          if (!isObject(value)) return `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path.join('.')} of type map[string]${goType(schema.additionalProperties)}`;
          for (const v of Object.values(value)) {
            const e = walk(v, schema.additionalProperties, struct, path);
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
      const e = walk(child, property, struct, [...path, key]);
      if (e !== undefined) return e;
    }
    return undefined;
  };
  if (!isObject(obj)) return undefined;
  return fields(obj, schemas[schemaName] ?? {}, schemaName.split('.').pop()!, []);
}
