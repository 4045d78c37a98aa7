// The SHA-256 of a ConfigMap's or Secret's content (data and binaryData), blind to metadata and key order.
import { createHash } from 'node:crypto';

/** The content a hash covers: a ConfigMap's or a Secret's `data` and `binaryData` (base64 strings for Secrets). */
export interface HashableContent {
  readonly data?: Readonly<Record<string, string>> | null;
  readonly binaryData?: Readonly<Record<string, string>> | null;
}

function sortedEntries(map: Readonly<Record<string, string>> | null | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Hex SHA-256 over a canonical form of `data` and `binaryData`: each as an array of `[key, value]` pairs sorted
 * by key (code-unit order), in a fixed envelope `{"d":[…],"b":[…]}`. So:
 * - metadata (labels, annotations, resourceVersion…) never changes the hash: a metadata-only edit does not roll;
 * - key order does not matter, and numeric-looking keys (`"1"`) sort like any other (a plain `JSON.stringify`
 *   of an object would move them first);
 * - an absent map and an empty one hash the same (`envFrom` sees no difference);
 * - moving a key from `data` to `binaryData` changes the hash.
 *
 * This is the hash of a ConfigMap's content: the reconcile writes it into the pod template, the dependency registry
 * emits it, and the benchmark strategies use it too. A Secret's content gets a keyed hash instead
 * (`keyed-hash.ts`): this plain one would let a reader of pods confirm guesses of it. Operators before keyed hashes
 * wrote this one for Secrets too; it is still computed for Secrets on arrival, in memory only, to recognise those
 * annotations during the upgrade.
 */
export function contentHash(content: HashableContent): string {
  return createHash('sha256').update(canonicalContent(content), 'utf8').digest('hex');
}

/** The canonical form {@link contentHash} hashes: `{"d":[[key,value]…],"b":[[key,value]…]}`, each sorted by key. */
export function canonicalContent(content: HashableContent): string {
  return JSON.stringify({ d: sortedEntries(content.data), b: sortedEntries(content.binaryData) });
}
