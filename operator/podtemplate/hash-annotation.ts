// The content hashes a pod template runs with, per referenced object, as one annotation value (compact, sorted JSON).
import type { DependencyKind } from '../dependencies/source.js';

/**
 * What the pods run with, by object: `ConfigMap/<name>` or `Secret/<name>` (the workload's own namespace) → the content
 * hash (a Secret's keyed, `dependencies/keyed-hash.ts`), or `null` for an object that was missing.
 */
export type RunningHashes = ReadonlyMap<string, string | null>;

/** `ConfigMap/app-config`: an object's key in {@link RunningHashes}. */
export function hashKey(kind: DependencyKind, name: string): string {
  return `${kind}/${name}`;
}

/** The kind and name a {@link hashKey} names, or undefined when it names neither a ConfigMap nor a Secret. */
export function parseHashKey(key: string): { readonly kind: DependencyKind; readonly name: string } | undefined {
  const slash = key.indexOf('/');
  const kind = key.slice(0, slash);
  const name = key.slice(slash + 1);
  return slash > 0 && name.length > 0 && (kind === 'ConfigMap' || kind === 'Secret') ? { kind, name } : undefined;
}

/** The annotation value: a JSON object with its keys sorted, so that the same hashes always write the same bytes. */
export function encodeHashes(hashes: RunningHashes): string {
  const sorted = [...hashes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(Object.fromEntries(sorted));
}

/**
 * The hashes an annotation value holds, or undefined when it does not parse as such (absent, or edited by hand into
 * something else): a caller then treats the content as seen for the first time, never as changed.
 */
export function decodeHashes(value: string | undefined): RunningHashes | undefined {
  const parsed = parseJsonObject(value);
  if (!parsed) return undefined;
  const hashes = new Map<string, string | null>();
  for (const [key, hash] of Object.entries(parsed)) {
    if (!parseHashKey(key) || (hash !== null && typeof hash !== 'string')) return undefined;
    hashes.set(key, hash);
  }
  return hashes;
}

/** An annotation value parsed as a JSON object, or undefined when it is absent or anything else (edited by hand). */
export function parseJsonObject(value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
}
