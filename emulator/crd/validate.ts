// Validation of custom resources against their CRD's OpenAPI v3 schema, with kube-openapi's messages and field paths.
import { type FieldError, duplicateValue, invalidValue, notSupported, renderValue, requiredValue } from '../errors.js';
import { deepEqual, isObject } from '../object.js';
import type { JsonSchema } from './schema.js';

const int64Limit = 2 ** 63;

/** The JSON type name kube-openapi reports for a value ("integer" for whole numbers within int64). */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) < int64Limit ? 'integer' : 'number';
  return typeof value;
}

function typeError(path: string, value: unknown, expected: string): FieldError {
  const actual = jsonType(value);
  return {
    type: 'FieldValueTypeInvalid',
    field: path,
    detail: `Invalid value: ${JSON.stringify(actual)}: ${path} in body must be of type ${expected}: ${JSON.stringify(actual)}`,
  };
}

function formatError(path: string, value: string, format: string): FieldError {
  return {
    type: 'FieldValueTypeInvalid',
    field: path,
    detail: `Invalid value: ${JSON.stringify(value)}: ${path} in body must be of type ${format}: ${JSON.stringify(value)}`,
  };
}

function typeMatches(value: unknown, type: string): boolean {
  const actual = jsonType(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

const formats: Readonly<Record<string, (v: string) => boolean>> = {
  'date-time': (v) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))),
  datetime: (v) => formats['date-time'](v),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)),
  byte: (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v),
  uuid: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  ipv4: (v) => /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(v),
  ipv6: (v) => v.includes(':') && /^[0-9a-fA-F:.]+$/.test(v),
  cidr: (v) => /^[0-9a-fA-F:.]+\/\d{1,3}$/.test(v),
  hostname: (v) => v.length <= 253 && /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*$/.test(v),
  email: (v) => /^[^@\s]+@[^@\s]+$/.test(v),
  mac: (v) => /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(v),
  duration: (v) => /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$/.test(v.replace(/\s/g, '')),
};

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Every schema violation of `value` at `path` (e.g. "spec"), as field errors. */
export function validateAgainstSchema(value: unknown, schema: JsonSchema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  validate(value, schema, path, errors);
  return errors;
}

function validate(value: unknown, schema: JsonSchema, path: string, errors: FieldError[]): void {
  if (value === null) {
    if (schema.nullable === true) return;
    if (schema.type !== undefined) errors.push(typeError(path, value, schema.type));
    return;
  }
  if (schema['x-kubernetes-int-or-string'] === true) {
    const t = jsonType(value);
    if (t !== 'integer' && t !== 'string') {
      errors.push(typeError(path, value, 'integer,string'));
      return;
    }
  } else if (schema.type !== undefined && !typeMatches(value, schema.type)) {
    errors.push(typeError(path, value, schema.type));
    if (!(schema.type === 'integer' && typeof value === 'number')) return;
  }
  if (typeof value === 'string') validateString(value, schema, path, errors);
  if (typeof value === 'number') validateNumber(value, schema, path, errors);
  if (Array.isArray(schema.enum) && !schema.enum.some((e: unknown) => deepEqual(e, value))) {
    errors.push(
      notSupported(
        path,
        value,
        schema.enum.map((e: unknown) => (typeof e === 'string' ? e : renderValue(e))),
      ),
    );
  }
  if (Array.isArray(value)) validateArray(value, schema, path, errors);
  else if (isObject(value)) validateObject(value, schema, path, errors);
}

function validateString(value: string, schema: JsonSchema, path: string, errors: FieldError[]): void {
  if (typeof schema.format === 'string' && Object.hasOwn(formats, schema.format) && !formats[schema.format](value)) {
    errors.push(formatError(path, value, schema.format));
  }
  const length = [...value].length;
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) {
    errors.push({ type: 'FieldValueTooLong', field: path, detail: `Too long: may not be more than ${schema.maxLength} bytes` });
  }
  if (typeof schema.minLength === 'number' && length < schema.minLength) {
    errors.push(invalidValue(path, value, `${path} in body should be at least ${schema.minLength} chars long`));
  }
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) {
    errors.push(invalidValue(path, value, `${path} in body should match '${schema.pattern}'`));
  }
}

function validateNumber(value: number, schema: JsonSchema, path: string, errors: FieldError[]): void {
  if (typeof schema.multipleOf === 'number' && schema.multipleOf !== 0) {
    const q = value / schema.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9)
      errors.push(invalidValue(path, value, `${path} in body should be a multiple of ${schema.multipleOf}`));
  }
  if (typeof schema.maximum === 'number') {
    if (schema.exclusiveMaximum === true ? value >= schema.maximum : value > schema.maximum) {
      const bound = schema.exclusiveMaximum === true ? 'less than' : 'less than or equal to';
      errors.push(invalidValue(path, value, `${path} in body should be ${bound} ${schema.maximum}`));
    }
  }
  if (typeof schema.minimum === 'number') {
    if (schema.exclusiveMinimum === true ? value <= schema.minimum : value < schema.minimum) {
      const bound = schema.exclusiveMinimum === true ? 'greater than' : 'greater than or equal to';
      errors.push(invalidValue(path, value, `${path} in body should be ${bound} ${schema.minimum}`));
    }
  }
}

function validateArray(value: unknown[], schema: JsonSchema, path: string, errors: FieldError[]): void {
  if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
    errors.push(invalidValue(path, value.length, `${path} in body should have at least ${schema.minItems} items`));
  }
  if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
    errors.push({
      type: 'FieldValueTooMany',
      field: path,
      detail: `Too many: ${value.length}: must have at most ${schema.maxItems} items`,
    });
  }
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set' || schema.uniqueItems === true) {
    value.forEach((item, i) => {
      if (value.slice(0, i).some((earlier) => deepEqual(earlier, item))) errors.push(duplicateValue(`${path}[${i}]`, item));
    });
  } else if (listType === 'map') {
    const keys: string[] = schema['x-kubernetes-list-map-keys'] ?? [];
    const seen: unknown[] = [];
    value.forEach((item, i) => {
      if (!isObject(item)) return;
      const key = Object.fromEntries(keys.filter((k) => item[k] !== undefined).map((k) => [k, item[k]]));
      if (seen.some((s) => deepEqual(s, key))) errors.push(duplicateValue(`${path}[${i}]`, key));
      seen.push(key);
    });
  }
  if (isObject(schema.items))
    value.forEach((item, i) => {
      validate(item, schema.items, `${path}[${i}]`, errors);
    });
}

function validateObject(value: Record<string, unknown>, schema: JsonSchema, path: string, errors: FieldError[]): void {
  for (const name of Array.isArray(schema.required) ? schema.required : []) {
    if (value[name] === undefined) errors.push(requiredValue(join(path, name)));
  }
  const count = Object.keys(value).length;
  if (typeof schema.maxProperties === 'number' && count > schema.maxProperties) {
    errors.push({
      type: 'FieldValueTooMany',
      field: path,
      detail: `Too many: ${count}: must have at most ${schema.maxProperties} item${schema.maxProperties === 1 ? '' : 's'}`,
    });
  }
  if (typeof schema.minProperties === 'number' && count < schema.minProperties) {
    errors.push(invalidValue(path, count, `${path} in body should have at least ${schema.minProperties} properties`));
  }
  const properties: Record<string, JsonSchema> = schema.properties ?? {};
  for (const [key, child] of Object.entries(value)) {
    if (child === undefined) continue;
    if (path === '' && key === 'metadata') continue;
    if (Object.hasOwn(properties, key)) validate(child, properties[key], join(path, key), errors);
    else if (isObject(schema.additionalProperties)) validate(child, schema.additionalProperties, join(path, key), errors);
  }
}
