// Rendezvous (highest-random-weight) hashing of object keys over the members of a view, and the view's digest.
import { createHash } from 'node:crypto';

/** A set of live members, as one shard sees it: identities sorted, so that equal sets compare equal. */
export type View = readonly string[];

/** The view of `members`: each identity once, sorted. */
export function viewOf(members: Iterable<string>): View {
  return [...new Set(members)].sort();
}

/** Whether two views hold the same members. */
export function sameView(a: View | undefined, b: View | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((member, index) => member === b[index]);
}

/** 12 hex digits of the SHA-256 of a view: short enough for a log line, long enough that two views never meet. */
export function viewDigest(view: View): string {
  return createHash('sha256').update(view.join('\n')).digest('hex').slice(0, 12);
}

/**
 * The weight of `member` for `key`: FNV-1a over both, then murmur3's finalizer, so that every bit of the input
 * moves every bit of the weight. Pure arithmetic (no digest object per call): a view change weighs every cached key
 * against every member.
 */
function weight(member: string, key: string): number {
  let hash = 0x811c9dc5;
  const mix = (text: string): void => {
    for (let index = 0; index < text.length; index += 1) {
      hash ^= text.charCodeAt(index);
      hash = Math.imul(hash, 0x01000193);
    }
  };
  // A separator no identity or key contains: ("ab", "c") and ("a", "bc") weigh differently.
  mix(`${member}\u0000${key}`);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/**
 * The member that owns `key` in `view`: the one with the highest weight for it (ties, vanishingly rare, to the
 * identity that sorts last). A member that joins takes from each other member only the keys it outweighs them on,
 * about 1/N of all; a member that leaves gives each of its keys to the runner-up: nothing else moves.
 * Undefined for an empty view.
 */
export function ownerOf(key: string, view: View): string | undefined {
  let owner: string | undefined;
  let best = -1;
  for (const member of view) {
    const candidate = weight(member, key);
    if (candidate > best || (candidate === best && owner !== undefined && member > owner)) {
      best = candidate;
      owner = member;
    }
  }
  return owner;
}

/**
 * `member`'s part of `limit` slots shared by the members of `view`: an even split, the first `limit mod n` members by
 * name getting one more, so that the parts add up to `limit`; 0 for a member not in the view.
 */
export function shareOf(member: string, view: View, limit: number): number {
  const rank = view.indexOf(member);
  if (rank < 0) return 0;
  return Math.floor(limit / view.length) + (rank < limit % view.length ? 1 : 0);
}
