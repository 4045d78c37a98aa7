// Compares JSON objects: a desired object with the live one field by field (and writes the desired fields over the live
// object), two values up to the order of their keys.

type Json = unknown;

export function isPlainObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The dotted paths where `actual` differs from `desired`, looking only at the fields `desired` sets: the server's
 * defaults (imagePullPolicy, terminationMessagePath, strategy…) and other writers' extra labels are not drift.
 * Arrays must match element by element and in length. `owned` lists map paths (for example the pod template's
 * annotations) whose keys in `ownedKeys` must also be absent when `desired` lacks them.
 */
export function driftPaths(
  actual: Json,
  desired: Json,
  ownedKeys: ReadonlyMap<string, readonly string[]> = new Map(),
  path = '',
): string[] {
  const drift: string[] = [];
  collectDrift(actual, desired, ownedKeys, path, drift);
  return drift;
}

/**
 * {@link driftPaths} into one array: every reconcile compares each owned object, and most find no drift at all. A
 * scalar's path is spelled only when it differs (most fields are scalars, and equal).
 */
function collectDrift(actual: Json, desired: Json, ownedKeys: ReadonlyMap<string, readonly string[]>, path: string, drift: string[]): void {
  if (isPlainObject(desired)) {
    if (!isPlainObject(actual) && actual !== undefined) {
      drift.push(path || '.');
      return;
    }
    const live: Record<string, Json> = actual ?? {};
    for (const key of Object.keys(desired)) {
      const value = desired[key];
      if (value === undefined) continue;
      if (typeof value !== 'object' || value === null) {
        if (live[key] !== value) drift.push(path ? `${path}.${key}` : key);
      } else {
        collectDrift(live[key], value, ownedKeys, path ? `${path}.${key}` : key, drift);
      }
    }
    for (const key of ownedKeys.get(path) ?? []) {
      if (desired[key] === undefined && live[key] !== undefined) drift.push(`${path}.${key}`);
    }
    return;
  }
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual) || actual.length !== desired.length) {
      drift.push(path);
      return;
    }
    for (let index = 0; index < desired.length; index++) {
      if (!(index in desired)) continue;
      const value = desired[index];
      if (typeof value !== 'object' || value === null) {
        if (actual[index] !== value) drift.push(`${path}[${index}]`);
      } else {
        collectDrift(actual[index], value, ownedKeys, `${path}[${index}]`, drift);
      }
    }
    return;
  }
  if (actual !== desired) drift.push(path);
}

/**
 * `actual` with every field of `desired` written over it: objects merge key by key, arrays and scalars replace.
 * Keys listed in `ownedKeys` for a path are removed when `desired` lacks them. Nothing else of `actual` changes
 * (its resourceVersion guards the update, its server-set fields stay).
 */
export function withDesired<T>(actual: T, desired: T, ownedKeys: ReadonlyMap<string, readonly string[]> = new Map(), path = ''): T {
  // A scalar is its own copy: only objects and arrays are copied, so that the result shares nothing with `desired`.
  if (typeof desired !== 'object' || desired === null) return desired;
  if (!isPlainObject(desired) || !isPlainObject(actual)) return structuredClone(desired);
  const merged: Record<string, Json> = { ...actual };
  for (const [key, value] of Object.entries(desired)) {
    if (value === undefined) continue;
    merged[key] = withDesired(actual[key], value, ownedKeys, path ? `${path}.${key}` : key);
  }
  for (const key of ownedKeys.get(path) ?? []) {
    if (desired[key] === undefined) delete merged[key];
  }
  return merged as T;
}

/**
 * Equality of JSON values up to the order of object keys, as JSON sees them: a field set to undefined is absent, an
 * undefined array element is null. Compared in place, because every reconcile compares its status: serializing both
 * with sorted keys cost 6% of a restart's CPU.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!sameJson(a[index] ?? null, b[index] ?? null)) return false;
    return true;
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  let fields = 0;
  for (const key of Object.keys(a)) {
    const value = a[key];
    if (value === undefined) continue;
    fields++;
    if (!Object.hasOwn(b, key) || !sameJson(value, b[key])) return false;
  }
  for (const key of Object.keys(b)) if (b[key] !== undefined) fields--;
  return fields === 0;
}
