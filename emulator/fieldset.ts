// Field sets (the FieldsV1 tries of managedFields): building them from objects, comparing objects, and set algebra.
import { deepEqual, isObject, type JsonObject } from './object.js';
import { childNode, type ListNode, type TypeNode } from './typeschema.js';

/** A trie of path elements ("f:name", "k:{\"name\":\"x\"}", "v:\"a\"", "i:0"); `member` marks the path itself. */
export class FieldSet {
  member = false;
  readonly children = new Map<string, FieldSet>();

  static fromFieldsV1(json: unknown): FieldSet {
    const set = new FieldSet();
    if (!isObject(json)) return set;
    for (const [key, value] of Object.entries(json)) {
      if (key === '.') set.member = true;
      else {
        const child = FieldSet.fromFieldsV1(value);
        if (!isObject(value) || Object.keys(value).length === 0) child.member = true;
        set.children.set(key, child);
      }
    }
    return set;
  }

  get empty(): boolean {
    if (this.member) return false;
    for (const child of this.children.values()) if (!child.empty) return false;
    return true;
  }

  child(pe: string): FieldSet {
    let c = this.children.get(pe);
    if (c === undefined) {
      c = new FieldSet();
      this.children.set(pe, c);
    }
    return c;
  }

  insert(path: readonly string[]): void {
    let node: FieldSet = this;
    for (const pe of path) node = node.child(pe);
    node.member = true;
  }

  has(path: readonly string[]): boolean {
    let node: FieldSet | undefined = this;
    for (const pe of path) {
      node = node.children.get(pe);
      if (node === undefined) return false;
    }
    return node.member;
  }

  /** The subtree at a path, if any. */
  at(path: readonly string[]): FieldSet | undefined {
    let node: FieldSet | undefined = this;
    for (const pe of path) {
      node = node?.children.get(pe);
      if (node === undefined) return undefined;
    }
    return node;
  }

  copy(): FieldSet {
    const out = new FieldSet();
    out.member = this.member;
    for (const [k, v] of this.children) out.children.set(k, v.copy());
    return out;
  }

  union(other: FieldSet): FieldSet {
    const out = this.copy();
    const merge = (into: FieldSet, from: FieldSet) => {
      if (from.member) into.member = true;
      for (const [k, v] of from.children) merge(into.child(k), v);
    };
    merge(out, other);
    return out;
  }

  /** Members of this set that are not members of `other` (children compared path by path). */
  difference(other: FieldSet): FieldSet {
    return this.childwise(other, this.member && !other.member, (v, o) => nonEmpty(o === undefined ? v.copy() : v.difference(o)));
  }

  intersection(other: FieldSet): FieldSet {
    return this.childwise(other, this.member && other.member, (v, o) => (o === undefined ? undefined : nonEmpty(v.intersection(o))));
  }

  /** Removes every path of `other` together with everything below it. */
  recursiveDifference(other: FieldSet): FieldSet {
    return this.childwise(other, this.member && !other.member, (v, o) => {
      if (o === undefined) return v.copy();
      return o.member ? undefined : nonEmpty(v.recursiveDifference(o));
    });
  }

  /**
   * The set algebra's walk: a new set whose root is a member as `member` says, and whose children are what `child`
   * makes of each child of this set and its counterpart in `other` (undefined when `other` has none); a child that
   * `child` answers undefined is left out.
   */
  private childwise(other: FieldSet, member: boolean, child: (v: FieldSet, o: FieldSet | undefined) => FieldSet | undefined): FieldSet {
    const out = new FieldSet();
    out.member = member;
    for (const [k, v] of this.children) {
      const c = child(v, other.children.get(k));
      if (c !== undefined) out.children.set(k, c);
    }
    return out;
  }

  /** Every member path, depth first. */
  paths(prefix: string[] = []): string[][] {
    const out: string[][] = [];
    if (this.member) out.push(prefix);
    for (const [k, v] of this.children) out.push(...v.paths([...prefix, k]));
    return out;
  }

  /** The FieldsV1 JSON form, with children sorted as the apiserver writes them. */
  toFieldsV1(): JsonObject {
    const out: JsonObject = {};
    const keys = [...this.children.keys()].filter((k) => !this.children.get(k)!.empty).sort();
    if (this.member && keys.length > 0) out['.'] = {};
    for (const k of keys) out[k] = this.children.get(k)!.toFieldsV1();
    return out;
  }
}

/** The path element of a list item: by its map keys, as a set value, or by index. */
export function itemPathElement(list: ListNode, item: unknown, index: number): string {
  if (list.listType === 'map' && isObject(item)) {
    const keys = [...list.listMapKeys].sort();
    const key: Record<string, unknown> = {};
    for (const k of keys) {
      const value = item[k] ?? list.listMapKeyDefaults?.[k];
      if (value !== undefined) key[k] = value;
    }
    return `k:${JSON.stringify(key)}`;
  }
  if (list.listType === 'set') return `v:${JSON.stringify(item)}`;
  return `i:${index}`;
}

export function fieldElement(name: string): string {
  return `f:${name}`;
}

function isAtomic(node: TypeNode | undefined): boolean {
  if (node === undefined || node.kind === 'scalar' || node.kind === 'any') return true;
  if (node.kind === 'list') return node.listType === 'atomic';
  return node.mapType === 'atomic';
}

function isDeclaredField(node: TypeNode | undefined, key: string): boolean {
  return node !== undefined && node.kind === 'object' && node.field(key) !== undefined;
}

/** The set of fields an object sets (ToFieldSet): leaves, list items, map entries, and empty or null values. */
export function toFieldSet(value: unknown, node: TypeNode | undefined): FieldSet {
  const set = new FieldSet();
  const walk = (v: unknown, n: TypeNode | undefined, path: string[]) => {
    if (isAtomic(n) || v === null || (!Array.isArray(v) && !isObject(v))) {
      set.insert(path);
      return;
    }
    if (Array.isArray(v)) {
      if (n!.kind !== 'list') {
        set.insert(path);
        return;
      }
      const list = n as ListNode;
      v.forEach((item, i) => {
        const itemPath = [...path, itemPathElement(list, item, i)];
        walk(item, list.elem, itemPath);
        set.insert(itemPath);
      });
      return;
    }
    for (const [key, child] of Object.entries(v)) {
      if (child === undefined) continue;
      const childPath = [...path, fieldElement(key)];
      const childType = childNode(n, key);
      walk(child, childType, childPath);
      if (child === null || (isObject(child) && Object.keys(child).length === 0) || !isDeclaredField(n, key)) set.insert(childPath);
    }
  };
  if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (child === undefined) continue;
      const childPath = [fieldElement(key)];
      walk(child, childNode(node, key), childPath);
      if (child === null || (isObject(child) && Object.keys(child).length === 0) || !isDeclaredField(node, key)) set.insert(childPath);
    }
  }
  return set;
}

export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

function listItems(list: ListNode, value: unknown): Map<string, unknown> {
  const items = new Map<string, unknown>();
  if (Array.isArray(value))
    value.forEach((item, i) => {
      items.set(itemPathElement(list, item, i), item);
    });
  return items;
}

/** What changed from `before` to `after` (typed.Compare): added, modified and removed paths, containers included. */
export function compareObjects(before: unknown, after: unknown, node: TypeNode | undefined): Comparison {
  const added = new FieldSet();
  const modified = new FieldSet();
  const removed = new FieldSet();
  const leaf = (l: unknown, r: unknown, path: string[]) => {
    if ((l === undefined || l === null) && (r === undefined || r === null)) return;
    if (l === undefined) added.insert(path);
    else if (r === undefined) removed.insert(path);
    else if (!deepEqual(l, r)) modified.insert(path);
  };
  const itemHook = (l: unknown, r: unknown, path: string[]) => {
    if ((l === undefined || l === null) && (r === undefined || r === null)) return;
    if (l === undefined) added.insert(path);
    else if (r === undefined) removed.insert(path);
  };
  const isEmptyContainer = (v: unknown) =>
    v === undefined || v === null || (isObject(v) && Object.keys(v).length === 0) || (Array.isArray(v) && v.length === 0);
  const walk = (l: unknown, r: unknown, n: TypeNode | undefined, path: string[]) => {
    const lIsMap = isObject(l);
    const rIsMap = isObject(r);
    const lIsList = Array.isArray(l);
    const rIsList = Array.isArray(r);
    if (isAtomic(n) || (!lIsMap && !rIsMap && !lIsList && !rIsList) || (isEmptyContainer(l) && isEmptyContainer(r))) {
      leaf(l, r, path);
      return;
    }
    if ((lIsMap || l === undefined || l === null) && (rIsMap || r === undefined || r === null) && n!.kind !== 'list') {
      const lm = lIsMap ? (l as Record<string, unknown>) : {};
      const rm = rIsMap ? (r as Record<string, unknown>) : {};
      if ((l !== undefined && !lIsMap) || (r !== undefined && !rIsMap)) modified.insert(path);
      for (const key of new Set([...Object.keys(lm), ...Object.keys(rm)])) {
        const childPath = [...path, fieldElement(key)];
        walk(lm[key], rm[key], childNode(n, key), childPath);
        itemHook(lm[key], rm[key], childPath);
      }
      return;
    }
    if ((lIsList || l === undefined || l === null) && (rIsList || r === undefined || r === null) && n!.kind === 'list') {
      const list = n as ListNode;
      const li = listItems(list, l);
      const ri = listItems(list, r);
      for (const pe of new Set([...li.keys(), ...ri.keys()])) {
        const childPath = [...path, pe];
        walk(li.get(pe), ri.get(pe), list.elem, childPath);
        itemHook(li.get(pe), ri.get(pe), childPath);
      }
      return;
    }
    leaf(l, r, path);
  };
  const lm = isObject(before) ? before : {};
  const rm = isObject(after) ? after : {};
  for (const key of new Set([...Object.keys(lm), ...Object.keys(rm)])) {
    const childPath = [fieldElement(key)];
    walk(lm[key], rm[key], childNode(node, key), childPath);
    itemHook(lm[key], rm[key], childPath);
  }
  return { added, modified, removed };
}

/** Adds, for each path, its named-field ancestors as members (fieldpath.Set.EnsureNamedFieldsAreMembers). */
export function withNamedFieldsAsMembers(set: FieldSet, node: TypeNode | undefined): FieldSet {
  const out = set.copy();
  const walk = (s: FieldSet, n: TypeNode | undefined) => {
    for (const [pe, child] of s.children) {
      if (pe.startsWith('f:') && n !== undefined && n.kind === 'object' && n.field(pe.slice(2)) !== undefined) child.member = true;
      walk(child, pe.startsWith('f:') ? childNode(n, pe.slice(2)) : n !== undefined && n.kind === 'list' ? n.elem : undefined);
    }
  };
  walk(out, node);
  return out;
}

/** Removes from a value every path in `set` (and what lies below), as typed.RemoveItems does. */
export function removePaths(value: unknown, set: FieldSet, node: TypeNode | undefined): unknown {
  if (set.empty) return value;
  if (Array.isArray(value) && node !== undefined && node.kind === 'list') {
    const out: unknown[] = [];
    value.forEach((item, i) => {
      const pe = itemPathElement(node, item, i);
      const sub = set.children.get(pe);
      if (sub === undefined) out.push(item);
      else if (sub.member) return;
      else out.push(removePaths(item, sub, node.elem));
    });
    return out;
  }
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const sub = set.children.get(fieldElement(key));
      if (sub === undefined) out[key] = child;
      else if (sub.member) continue;
      else out[key] = removePaths(child, sub, childNode(node, key));
    }
    return out;
  }
  return value;
}

/** The set, or undefined when it has no member (a child that would add nothing). */
function nonEmpty(set: FieldSet): FieldSet | undefined {
  return set.empty ? undefined : set;
}
