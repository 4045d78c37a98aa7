// Structural schemas of CRDs: the TypeNode view, pruning of unknown fields, dropping of non-nullable nulls, and defaulting.
import { builtinType, objectMetaSchemaName } from '../openapi/builtin.js';
import { objectMetaFields } from '../metadata.js';
import { deepCopy, isObject } from '../object.js';
import { anyNode, declaredFields, type ObjectNode, type TypeNode } from '../typeschema.js';

/** A CRD's openAPIV3Schema (JSONSchemaProps), as plain JSON. */
export type JsonSchema = Record<string, any>;

/** The TypeNode of a structural schema. At the root, metadata is ObjectMeta and apiVersion/kind are strings. */
export function structuralNode(schema: JsonSchema, root = false): TypeNode {
  if (schema['x-kubernetes-int-or-string'] === true) return { kind: 'scalar', type: 'int-or-string' };
  const type = schema.type;
  if (type === 'array') {
    const listType = schema['x-kubernetes-list-type'] ?? 'atomic';
    return {
      kind: 'list',
      elem: structuralNode(schema.items ?? {}),
      listType,
      listMapKeys: schema['x-kubernetes-list-map-keys'] ?? [],
    };
  }
  if (type === 'object' || root || schema.properties !== undefined) {
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false && schema.properties === undefined) {
      return {
        kind: 'map',
        elem: schema.additionalProperties === true ? anyNode : structuralNode(schema.additionalProperties),
        mapType: schema['x-kubernetes-map-type'] ?? 'granular',
      };
    }
    const properties: Record<string, JsonSchema> = schema.properties ?? {};
    const declared = declaredFields(properties, (property) => structuralNode(property));
    const embedded = root || schema['x-kubernetes-embedded-resource'] === true;
    const node: ObjectNode = {
      kind: 'object',
      field(name) {
        if (embedded && name === 'metadata') return builtinType(objectMetaSchemaName);
        if (embedded && (name === 'apiVersion' || name === 'kind')) return { kind: 'scalar', type: 'string' };
        return declared(name);
      },
      fieldNames: () => (embedded ? [...new Set(['apiVersion', 'kind', 'metadata', ...Object.keys(properties)])] : Object.keys(properties)),
      preserveUnknown: schema['x-kubernetes-preserve-unknown-fields'] === true,
      mapType: schema['x-kubernetes-map-type'] ?? 'granular',
    };
    return node;
  }
  if (type === 'string' || type === 'integer' || type === 'number' || type === 'boolean') return { kind: 'scalar', type };
  return anyNode;
}

const objectMetaFieldSet = new Set(objectMetaFields);

/**
 * Removes, in place, the fields a structural schema does not declare (unless x-kubernetes-preserve-unknown-fields),
 * and unknown fields of embedded metadata. Returns the pruned paths (for fieldValidation warnings).
 */
export function pruneUnknown(value: unknown, schema: JsonSchema, root = true): string[] {
  const pruned: string[] = [];
  const walk = (v: unknown, s: JsonSchema, path: string, isRoot: boolean) => {
    if (Array.isArray(v)) {
      if (s.items !== undefined)
        v.forEach((item, i) => {
          walk(item, s.items, `${path}[${i}]`, false);
        });
      return;
    }
    if (!isObject(v)) return;
    const embedded = isRoot || s['x-kubernetes-embedded-resource'] === true;
    if (embedded && isObject(v.metadata)) {
      for (const key of Object.keys(v.metadata)) {
        if (!objectMetaFieldSet.has(key)) {
          delete v.metadata[key];
          pruned.push(`${path === '' ? '' : `${path}.`}metadata.${key}`);
        }
      }
    }
    const properties: Record<string, JsonSchema> | undefined = s.properties;
    const additional = s.additionalProperties;
    for (const key of Object.keys(v)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      if (embedded && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
      if (properties !== undefined && Object.hasOwn(properties, key)) {
        walk(v[key], properties[key], childPath, false);
      } else if (isObject(additional)) {
        walk(v[key], additional, childPath, false);
      } else if (additional !== true && s['x-kubernetes-preserve-unknown-fields'] !== true) {
        delete v[key];
        pruned.push(childPath);
      }
    }
  };
  walk(value, schema, '', root);
  return pruned;
}

/** Applies `default:` values in place (and drops nulls of non-nullable fields first), like structural defaulting. */
export function applyDefaults(value: unknown, schema: JsonSchema): void {
  if (Array.isArray(value)) {
    if (schema.items !== undefined) for (const item of value) applyDefaults(item, schema.items);
    return;
  }
  if (!isObject(value)) return;
  const properties: Record<string, JsonSchema> | undefined = schema.properties;
  if (properties !== undefined) {
    for (const [key, property] of Object.entries(properties)) {
      if (value[key] === null && property.nullable !== true) delete value[key];
      if (value[key] === undefined && property.default !== undefined) value[key] = deepCopy(property.default);
      if (value[key] !== undefined) applyDefaults(value[key], property);
    }
  }
  if (isObject(schema.additionalProperties)) {
    const additional = schema.additionalProperties;
    for (const key of Object.keys(value)) {
      if (value[key] === null && additional.nullable !== true) {
        if (additional.default !== undefined) value[key] = deepCopy(additional.default);
        else delete value[key];
      }
      if (value[key] !== undefined) applyDefaults(value[key], additional);
    }
  }
}
