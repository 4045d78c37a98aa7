// The shape of a kind's fields (objects, maps, lists and their merge semantics), read by patches, apply and field validation.

export type TypeNode = ObjectNode | MapNode | ListNode | ScalarNode | AnyNode;

export interface ObjectNode {
  readonly kind: 'object';
  /** The declared field, or undefined when the object does not declare it. */
  field(name: string): TypeNode | undefined;
  fieldNames(): readonly string[];
  /** Unknown fields are kept (x-kubernetes-preserve-unknown-fields); otherwise they are unknown. */
  readonly preserveUnknown: boolean;
  /** "atomic" structs are replaced whole by apply and merge; "granular" (default) are merged field by field. */
  readonly mapType: 'atomic' | 'granular';
  /** A strategic merge patch strategy on the object, e.g. "retainKeys". */
  readonly patchStrategy?: string;
}

export interface MapNode {
  readonly kind: 'map';
  readonly elem: TypeNode;
  readonly mapType: 'atomic' | 'granular';
  readonly patchStrategy?: string;
}

export interface ListNode {
  readonly kind: 'list';
  readonly elem: TypeNode;
  /** Server-side apply semantics: atomic (replaced), set (union of scalars) or map (merged by listMapKeys). */
  readonly listType: 'atomic' | 'set' | 'map';
  readonly listMapKeys: readonly string[];
  /** Defaults of map keys (ContainerPort.protocol is "TCP"): a key field missing from an item takes its default. */
  readonly listMapKeyDefaults?: Readonly<Record<string, unknown>>;
  /** Strategic merge patch semantics: "merge" (by patchMergeKey, or a set of scalars), "replace" or undefined. */
  readonly patchStrategy?: string;
  readonly patchMergeKey?: string;
}

export interface ScalarNode {
  readonly kind: 'scalar';
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'int-or-string' | 'number-or-string';
}

/** Anything goes (RawExtension, FieldsV1, a preserve-unknown-fields value without a type). */
export interface AnyNode {
  readonly kind: 'any';
}

export const anyNode: AnyNode = { kind: 'any' };

/**
 * An object node's `field` over its schema's properties: each declared field's node is built on first access and
 * kept, so that a recursive schema (JSONSchemaProps) terminates and a node is built once.
 */
export function declaredFields<S>(properties: Readonly<Record<string, S>>, nodeOf: (schema: S) => TypeNode): ObjectNode['field'] {
  const fields = new Map<string, TypeNode>();
  return (name) => {
    if (!Object.hasOwn(properties, name)) return undefined;
    let node = fields.get(name);
    if (node === undefined) {
      node = nodeOf(properties[name]!);
      fields.set(name, node);
    }
    return node;
  };
}

/** The node of a child value: a declared field, or, for maps and unknown-preserving objects, the value type. */
export function childNode(node: TypeNode | undefined, key: string): TypeNode | undefined {
  if (node === undefined) return undefined;
  switch (node.kind) {
    case 'object':
      return node.field(key) ?? (node.preserveUnknown ? anyNode : undefined);
    case 'map':
      return node.elem;
    case 'any':
      return anyNode;
    default:
      return undefined;
  }
}

/** The strategic-merge behaviour of a list: merge by a key, merge as a set of scalars, or replace. */
export function listMergeKey(node: TypeNode | undefined): { merge: boolean; key?: string } {
  if (node === undefined || node.kind !== 'list') return { merge: false };
  const strategies = (node.patchStrategy ?? '').split(',');
  if (!strategies.includes('merge')) return { merge: false };
  return node.patchMergeKey === undefined ? { merge: true } : { merge: true, key: node.patchMergeKey };
}
