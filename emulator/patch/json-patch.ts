// JSON Patch (RFC 6902: add, remove, replace, move, copy, test) with the apiserver's error answers.
import { ApiError, badRequest } from '../errors.js';
import { deepCopy, deepEqual, isObject } from '../object.js';

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/** 422 for a patch that decodes but cannot be applied (what the apiserver answers). */
function rejected(): ApiError {
  return new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
}

function pointer(path: unknown): string[] {
  if (typeof path !== 'string') throw rejected();
  if (path === '') return [];
  if (!path.startsWith('/')) throw rejected();
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function parseJsonPatch(body: string): Operation[] {
  let ops: unknown;
  try {
    ops = JSON.parse(body);
  } catch (e) {
    throw badRequest(
      `error decoding patch: ${(e as Error).message.includes('end of JSON') ? 'unexpected end of JSON input' : (e as Error).message}`,
    );
  }
  if (!Array.isArray(ops)) throw badRequest('error decoding patch: json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  return ops as Operation[];
}

function parentOf(doc: unknown, tokens: string[]): { parent: unknown; key: string } {
  let node = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(node)) {
      const i = Number(t);
      if (!/^\d+$/.test(t) || i >= node.length) throw rejected();
      node = node[i];
    } else if (isObject(node)) {
      if (!Object.hasOwn(node, t)) throw rejected();
      node = node[t];
    } else throw rejected();
  }
  return { parent: node, key: tokens[tokens.length - 1] };
}

function get(doc: unknown, tokens: string[]): unknown {
  if (tokens.length === 0) return doc;
  const { parent, key } = parentOf(doc, tokens);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!/^\d+$/.test(key) || i >= parent.length) throw rejected();
    return parent[i];
  }
  if (isObject(parent) && Object.hasOwn(parent, key)) return parent[key];
  throw rejected();
}

function add(doc: unknown, tokens: string[], value: unknown): unknown {
  if (tokens.length === 0) return value;
  const { parent, key } = parentOf(doc, tokens);
  if (Array.isArray(parent)) {
    const i = key === '-' ? parent.length : Number(key);
    if (key !== '-' && (!/^\d+$/.test(key) || i > parent.length)) throw rejected();
    parent.splice(i, 0, value);
  } else if (isObject(parent)) {
    parent[key] = value;
  } else throw rejected();
  return doc;
}

function remove(doc: unknown, tokens: string[]): unknown {
  if (tokens.length === 0) throw rejected();
  const { parent, key } = parentOf(doc, tokens);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!/^\d+$/.test(key) || i >= parent.length) throw rejected();
    parent.splice(i, 1);
  } else if (isObject(parent)) {
    if (!Object.hasOwn(parent, key)) throw rejected();
    delete parent[key];
  } else throw rejected();
  return doc;
}

/** Applies the operations to a copy of `doc`. */
export function applyJsonPatch(doc: unknown, ops: readonly Operation[]): unknown {
  let out = deepCopy(doc);
  for (const op of ops) {
    if (!isObject(op)) throw rejected();
    const path = pointer(op.path);
    switch (op.op) {
      case 'add':
        if (!Object.hasOwn(op, 'value')) throw rejected();
        out = add(out, path, deepCopy(op.value));
        break;
      case 'remove':
        out = remove(out, path);
        break;
      case 'replace':
        if (!Object.hasOwn(op, 'value')) throw rejected();
        get(out, path);
        out = path.length === 0 ? deepCopy(op.value) : add(remove(out, path), path, deepCopy(op.value));
        break;
      case 'move': {
        const from = pointer(op.from);
        const value = get(out, from);
        out = add(remove(out, from), path, value);
        break;
      }
      case 'copy':
        out = add(out, path, deepCopy(get(out, pointer(op.from))));
        break;
      case 'test': {
        let actual: unknown;
        try {
          actual = get(out, path);
        } catch {
          actual = undefined;
        }
        if (!deepEqual(actual ?? null, op.value ?? null) || (actual === undefined && op.value !== null)) throw rejected();
        break;
      }
      default:
        throw rejected();
    }
  }
  return out;
}
