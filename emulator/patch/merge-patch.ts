// JSON Merge Patch (RFC 7386): objects merge recursively, null deletes, everything else replaces.
import { deepCopy, isObject } from '../object.js';

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return deepCopy(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}
