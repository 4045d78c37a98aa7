// The built-in kinds' OpenAPI v3 schemas (captured from kube-apiserver) and their TypeNodes.
import { readFileSync } from 'node:fs';
import { anyNode, declaredFields, type ListNode, type ObjectNode, type TypeNode } from '../typeschema.js';

export type OpenApiSchema = Record<string, any>;

let captured: { capturedFrom: string; schemas: Record<string, OpenApiSchema> } | undefined;

/** Every captured schema by its OpenAPI name ("io.k8s.api.core.v1.ConfigMap"); read on first use. */
export function builtinSchemas(): Record<string, OpenApiSchema> {
  captured ??= JSON.parse(readFileSync(new URL('./builtin-schemas.json', import.meta.url), 'utf8'));
  return captured!.schemas;
}

const refPrefix = '#/components/schemas/';
const nodes = new Map<string, TypeNode>();

/** The TypeNode of a named built-in schema, e.g. "io.k8s.api.apps.v1.Deployment". */
export function builtinType(name: string): TypeNode {
  let node = nodes.get(name);
  if (node === undefined) {
    const schema = builtinSchemas()[name];
    if (schema === undefined) throw new Error(`no built-in schema ${JSON.stringify(name)}`);
    node = nodeOf(schema);
    nodes.set(name, node);
  }
  return node;
}

/** The schema name a property refers to through `$ref` or a first `allOf` entry, if any. */
export function refName(schema: OpenApiSchema | undefined): string | undefined {
  if (schema === undefined) return undefined;
  if (typeof schema.$ref === 'string') return schema.$ref.slice(refPrefix.length);
  if (Array.isArray(schema.allOf) && typeof schema.allOf[0]?.$ref === 'string') return schema.allOf[0].$ref.slice(refPrefix.length);
  return undefined;
}

/** Follows `$ref` and `allOf: [{$ref}]` to the schema they name, keeping the outer list/map extensions. */
function refOf(schema: OpenApiSchema): string | undefined {
  if (typeof schema.$ref === 'string') return schema.$ref.slice(refPrefix.length);
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && typeof schema.allOf[0].$ref === 'string') {
    return schema.allOf[0].$ref.slice(refPrefix.length);
  }
  return undefined;
}

function nodeOf(schema: OpenApiSchema): TypeNode {
  const ref = refOf(schema);
  if (ref !== undefined) return lazyNode(ref);
  if (schema.format === 'int-or-string') return { kind: 'scalar', type: 'int-or-string' };
  if (Array.isArray(schema.oneOf)) return { kind: 'scalar', type: 'number-or-string' };
  switch (schema.type) {
    case 'array': {
      const listMapKeys: string[] =
        schema['x-kubernetes-list-map-keys'] ?? (schema['x-kubernetes-patch-merge-key'] ? [schema['x-kubernetes-patch-merge-key']] : []);
      const itemRef = refOf(schema.items ?? {});
      const itemProperties: Record<string, OpenApiSchema> =
        itemRef === undefined ? (schema.items?.properties ?? {}) : (builtinSchemas()[itemRef]?.properties ?? {});
      const keyDefaults: Record<string, unknown> = {};
      for (const key of listMapKeys)
        if (itemProperties[key]?.default !== undefined && itemProperties[key].default !== '' && itemProperties[key].default !== 0)
          keyDefaults[key] = itemProperties[key].default;
      const list: ListNode = {
        kind: 'list',
        elem: nodeOf(schema.items ?? {}),
        listType: schema['x-kubernetes-list-type'] ?? (schema['x-kubernetes-patch-merge-key'] ? 'map' : 'atomic'),
        listMapKeys,
        listMapKeyDefaults: keyDefaults,
        patchStrategy: schema['x-kubernetes-patch-strategy'],
        patchMergeKey: schema['x-kubernetes-patch-merge-key'],
      };
      return list;
    }
    case 'object':
      if (schema.properties !== undefined) return objectNode(schema);
      if (schema.additionalProperties !== undefined) {
        return {
          kind: 'map',
          elem: nodeOf(schema.additionalProperties === true ? {} : schema.additionalProperties),
          mapType: schema['x-kubernetes-map-type'] ?? 'granular',
          patchStrategy: schema['x-kubernetes-patch-strategy'],
        };
      }
      return anyNode;
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
      return { kind: 'scalar', type: schema.type };
    default:
      return anyNode;
  }
}

function objectNode(schema: OpenApiSchema): ObjectNode {
  const properties: Record<string, OpenApiSchema> = schema.properties;
  return {
    kind: 'object',
    field: declaredFields(properties, nodeOf),
    fieldNames: () => Object.keys(properties),
    preserveUnknown: schema['x-kubernetes-preserve-unknown-fields'] === true,
    mapType: schema['x-kubernetes-map-type'] ?? 'granular',
    patchStrategy: schema['x-kubernetes-patch-strategy'],
  };
}

/** A named schema resolved on first access, so recursive schemas (JSONSchemaProps) terminate. */
function lazyNode(name: string): TypeNode {
  const cached = nodes.get(name);
  if (cached !== undefined) return cached;
  const schema = builtinSchemas()[name];
  if (schema === undefined) return anyNode;
  if (schema.type === 'object' && schema.properties !== undefined) {
    const node = objectNode(schema);
    nodes.set(name, node);
    return node;
  }
  const node = nodeOf(schema);
  nodes.set(name, node);
  return node;
}

export const objectMetaSchemaName = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

const zeroValues = new Map<string, Record<string, unknown>>();

/**
 * The JSON of a built-in type's Go zero value: value-struct fields (marked `default: {}`) and non-omitempty scalars
 * (marked with their zero `default`). Server-side apply and managedFields compare a created object against it.
 */
export function zeroValue(name: string): Record<string, unknown> {
  let zero = zeroValues.get(name);
  if (zero !== undefined) return zero;
  zero = {};
  zeroValues.set(name, zero);
  const schema = builtinSchemas()[name];
  const required: string[] = schema?.required ?? [];
  for (const [field, property] of Object.entries<OpenApiSchema>(schema?.properties ?? {})) {
    if (property.default === undefined) {
      // A required list is a non-omitempty slice in Go: its zero value serialises as null.
      if (required.includes(field) && property.type === 'array') zero[field] = null;
      continue;
    }
    const ref = refOf(property);
    if (ref !== undefined && builtinSchemas()[ref]?.type === 'object' && builtinSchemas()[ref]?.properties !== undefined) {
      zero[field] = { ...(property.default as object), ...zeroValue(ref) };
    } else {
      zero[field] = property.default;
    }
  }
  return zero;
}
