// A Secret's content hash, keyed with the Secret's uid (HMAC-SHA-256), so that a reader of pods cannot test guesses of it.
import { createHmac } from 'node:crypto';
import { canonicalContent, contentHash, type HashableContent } from './content-hash.js';
import { keyDigests } from './key-digests.js';
import type { DependencyKind } from './source.js';

/**
 * Hex digits of a keyed hash: 128 bits of the HMAC. Shorter than the 64 of a plain SHA-256, so that an unkeyed hash
 * written by an older operator is told apart by its length alone (see {@link isUnkeyedHash}).
 */
export const KEYED_HASH_HEX_DIGITS = 32;

/** Binds the HMAC to this use: the same uid keys nothing else of ours. */
const CONTEXT = 'app.example.com/secret-hash\n';

/**
 * HMAC-SHA-256 of a Secret's canonical content (the form {@link contentHash} hashes), keyed with the Secret's
 * `metadata.uid`, truncated to {@link KEYED_HASH_HEX_DIGITS} hex digits.
 *
 * Why the uid: it is a random UUID (122 random bits) that the API server gives the object at creation and never
 * changes, so every replica and every restart of the operator computes the same hash (a restart rolls nothing), and
 * no key needs to be stored, shipped in dist/, or granted. Who knows it: whoever can get, list or watch the Secret,
 * who can read its values anyway. A reader of pods, ReplicaSets, Deployments, CustomApps or Events sees the hash but
 * not the key, so testing a guess of the content offline needs 2^122 guesses of the key first.
 *
 * What it costs: a Secret deleted and created again (same name, same content) has a new uid, so a new hash, and its
 * apps roll once. A truncated 128-bit HMAC keeps the argument: without the key each bit is unpredictable, and an
 * accidental collision (a change that rolls nothing) has probability 2^-128 per change.
 *
 * Throws when `uid` is empty (the API server always sets it; hashing without a key would be the plain hash again).
 */
export function keyedContentHash(uid: string | undefined, content: HashableContent): string {
  if (!uid) throw new Error(`cannot key a content hash with the uid "${uid ?? ''}": every stored object has one`);
  return createHmac('sha256', uid)
    .update(CONTEXT, 'utf8')
    .update(canonicalContent(content), 'utf8')
    .digest('hex')
    .slice(0, KEYED_HASH_HEX_DIGITS);
}

/** The hashes of a referenced object, computed on arrival before its payload is dropped. */
export interface DependencyHashes {
  /** What is written: plain SHA-256 for a ConfigMap, {@link keyedContentHash} for a Secret. */
  readonly hash: string;
  /**
   * For a Secret only: the plain SHA-256 ({@link contentHash}) that operators before keyed hashes wrote into the pod
   * template. Kept in memory to recognise such an annotation (so that an upgrade rolls nothing); never written.
   */
  readonly unkeyedHash?: string;
  /** One digest per key (`key-digests.ts`), from which the hash of any keys alone is derived. */
  readonly keyDigests: ReadonlyMap<string, string>;
}

/** A referenced object as it arrives: its content and the uid that keys a Secret's hash. */
export interface HashableObject extends HashableContent {
  readonly metadata: { readonly uid?: string; readonly namespace?: string; readonly name?: string };
}

/** The hashes of one referenced object of `kind`; throws, naming the object, when a Secret has no uid. */
export function dependencyHashes(kind: DependencyKind, object: HashableObject): DependencyHashes {
  if (kind === 'ConfigMap') return { hash: contentHash(object), keyDigests: keyDigests(kind, undefined, object) };
  try {
    return {
      hash: keyedContentHash(object.metadata.uid, object),
      unkeyedHash: contentHash(object),
      keyDigests: keyDigests(kind, object.metadata.uid, object),
    };
  } catch (error) {
    throw new Error(`Secret ${object.metadata.namespace}/${object.metadata.name}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * True for a secret-hash annotation written by an operator before keyed hashes: 64 hex digits (a plain SHA-256),
 * where a keyed hash has {@link KEYED_HASH_HEX_DIGITS}.
 */
export function isUnkeyedHash(value: string | undefined): boolean {
  return value !== undefined && /^[0-9a-f]{64}$/.test(value);
}
