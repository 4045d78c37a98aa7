// Upgrading from unkeyed Secret hashes without a rollout: a pod-template annotation that an older operator wrote
// stays as long as it still describes the Secret's content; the next content change writes the keyed hash.
import { SECRET_HASH_ANNOTATION } from '../../api/customapp.js';
import { isUnkeyedHash } from '../dependencies/keyed-hash.js';
import type { Deployment } from '../kube/objects.js';

/** A present Secret as the reconcile sees it: its keyed hash, and the plain one an older operator would have written. */
export interface SecretHashes {
  readonly hash: string;
  readonly unkeyedHash?: string;
}

/**
 * The `secret-hash` pod-template annotation to write: the live one when an operator before keyed hashes wrote it
 * and the Secret's content has not changed since (it equals the plain SHA-256 of the current content), so an
 * upgrade changes no pod template and rolls nothing; the keyed hash otherwise (a new Deployment, a changed Secret,
 * or an annotation already keyed).
 *
 * The trade-off: until its Secret next changes, such a Deployment (and its ReplicaSets and pods, which the operator
 * cannot edit without rolling them) keeps the plain hash that was already visible before the upgrade. Nothing new is
 * revealed, and the CustomApp's `status.secretHash` and every Event switch to the keyed hash at once. The Deployment
 * step (`planUpdate` in deployment-step.ts) keeps it only while the pod template changes for no other reason: a
 * rollout for another cause (an image edit, a ConfigMap change…) takes the keyed hash along, so the plain hash leaves
 * with that rollout instead of being copied into a new ReplicaSet.
 */
export function secretHashAnnotation(secret: SecretHashes, live: Deployment | undefined): string {
  const current = live?.spec.template.metadata?.annotations?.[SECRET_HASH_ANNOTATION];
  return current !== undefined && current === secret.unkeyedHash ? current : secret.hash;
}

/**
 * The `status.secretHash` for a hash read back from our Deployment or the last status (a rollout waiting for a reference writes
 * nothing new): an unkeyed one becomes the keyed hash when it still describes the Secret (`secret` present with the
 * same unkeyed hash), and is left out otherwise: the status never carries a plain hash, even one it had before.
 */
export function keyedForStatus(
  hash: string | undefined,
  secret: { readonly phase: string; readonly hash?: string; readonly unkeyedHash?: string },
): string | undefined {
  if (!isUnkeyedHash(hash)) return hash;
  return secret.phase === 'present' && secret.unkeyedHash === hash ? secret.hash : undefined;
}

/**
 * A pod-template annotation's value as an Event shows it: the first 12 hex digits, `none` when absent, and
 * `unkeyed` for an unkeyed Secret hash (an older operator's), whose digits would let a reader of Events test
 * guesses of the Secret.
 */
export function annotationForEvent(annotation: string, value: string | undefined): string {
  if (value === undefined || value === '') return 'none';
  if (annotation === SECRET_HASH_ANNOTATION && isUnkeyedHash(value)) return 'unkeyed';
  return value.slice(0, 12);
}
