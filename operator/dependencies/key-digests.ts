// Per-key digests of a ConfigMap's or Secret's content, and the hash of some keys alone (key-level triggers).
import { createHash, createHmac } from 'node:crypto';
import type { HashableContent } from './content-hash.js';
import { type DependencyKind, type DependencyRef, type DependencyState, refKeys } from './source.js';

/** Hex digits of one key's digest, and of a Secret's keys hash: 128 bits, as `keyed-hash.ts`'s KEYED_HASH_HEX_DIGITS. */
const KEY_DIGEST_HEX_DIGITS = 32;

/** Binds a Secret key's HMAC to this use (the uid keys the whole-content hash under another context). */
const SECRET_KEY_CONTEXT = 'app.example.com/secret-key-hash\n';

/**
 * One digest per key of `data` and `binaryData` (`d:` or `b:` inside the digest, so that moving a key between them
 * changes it): SHA-256 of the key and value for a ConfigMap; for a Secret, HMAC-SHA-256 keyed with the Secret's uid,
 * as its whole-content hash is (`keyed-hash.ts`), so that no plain digest of a secret value exists anywhere.
 *
 * What it costs: the registry keeps these for every referenced object, about 120 bytes per key (the key, a
 * 32-character digest, a Map entry); a ConfigMap of 20 keys, about 2.4 KB. A namespace list in flight keeps them
 * for every object it has read until it ends, as it keeps their content hashes. Keeping them only for objects read
 * by keys would need a fresh list of an object whenever its first owner reading by keys arrives.
 *
 * Throws for a Secret without a uid, as `keyedContentHash` does.
 */
export function keyDigests(kind: DependencyKind, uid: string | undefined, content: HashableContent): Map<string, string> {
  if (kind === 'Secret' && !uid) throw new Error('cannot key the digests of a Secret without a uid');
  const digest = (map: 'd' | 'b', key: string, value: string): string => {
    const hash = kind === 'Secret' ? createHmac('sha256', uid!).update(SECRET_KEY_CONTEXT, 'utf8') : createHash('sha256');
    return hash
      .update(JSON.stringify([map, key, value]), 'utf8')
      .digest('hex')
      .slice(0, KEY_DIGEST_HEX_DIGITS);
  };
  const digests = new Map<string, string>();
  for (const [key, value] of Object.entries(content.data ?? {})) digests.set(key, digest('d', key, value));
  // A key in both maps is invalid (the API server refuses it); binaryData's would be the one a pod sees last.
  for (const [key, value] of Object.entries(content.binaryData ?? {})) digests.set(key, digest('b', key, value));
  return digests;
}

/**
 * The hash of `keys` alone (sorted, each once): SHA-256 over each key with its digest, or `null` when the object does
 * not have it, so that a missing key and an empty value differ. A Secret's is cut to the length of a keyed content
 * hash, 32 hex digits: never the 64 that mark a plain SHA-256 written by operators before keyed hashes.
 */
export function keysHash(kind: DependencyKind, digests: ReadonlyMap<string, string>, keys: readonly string[]): string {
  const entries = [...new Set(keys)].sort().map((key) => [key, digests.get(key) ?? null]);
  const hash = createHash('sha256')
    .update(`keys\n${JSON.stringify(entries)}`, 'utf8')
    .digest('hex');
  return kind === 'Secret' ? hash.slice(0, KEY_DIGEST_HEX_DIGITS) : hash;
}

/**
 * The state a ref sees of its object's whole-object `state`: the same, for a ref without keys; for a ref with keys,
 * the hash of those keys and the ones missing. A state without digests (from a source that keeps none) is taken as
 * it is: the whole object's hash, which rolls on any key.
 */
export function stateForRef(state: DependencyState, ref: DependencyRef): DependencyState {
  const keys = refKeys(ref);
  if (!keys) return state;
  if (!state.exists) return { ref, exists: false };
  if (!state.keyDigests) return { ...state, ref };
  const digests = state.keyDigests;
  const missingKeys = keys.filter((key) => !digests.has(key));
  return {
    ref,
    exists: true,
    hash: keysHash(ref.kind, digests, keys),
    ...(missingKeys.length > 0 ? { missingKeys } : {}),
    resourceVersion: state.resourceVersion,
  };
}

/** Whether two states of a ref say the same: existence, the hash, the keys missing. */
export function sameState(a: DependencyState, b: DependencyState): boolean {
  if (!a.exists || !b.exists) return a.exists === b.exists;
  return a.hash === b.hash && JSON.stringify(a.missingKeys ?? []) === JSON.stringify(b.missingKeys ?? []);
}
