// The contract between the reconcile and whatever tells it about ConfigMaps and Secrets (ours, or a benchmark strategy).
import type { Observable } from 'rxjs';

/** The kinds a CustomApp references. */
export type DependencyKind = 'ConfigMap' | 'Secret';

/** One referenced object, always in its owner's own namespace. */
export interface DependencyRef {
  readonly kind: DependencyKind;
  readonly namespace: string;
  readonly name: string;
  /**
   * The keys the owner reads, when it reads only some (env `configMapKeyRef`, volume `items`): its state is then the
   * hash over these keys alone, so a change of another key emits nothing. Undefined (or empty): the whole object.
   */
  readonly keys?: readonly string[];
}

/**
 * What the reconcile may know of a referenced object: whether it exists and the hash of its content (data and
 * binaryData): SHA-256 for a ConfigMap, keyed with the uid for a Secret (`keyed-hash.ts`). Never the content itself:
 * a Secret's values are hashed on arrival and dropped. `unkeyedHash` (Secrets only) is the plain SHA-256 that
 * operators before keyed hashes wrote, to recognise their annotations; it is never written anywhere.
 *
 * For a ref with `keys`, `hash` covers those keys alone (`key-digests.ts`), and `missingKeys` names the listed keys
 * the object does not have (the kubelet refuses to start a pod whose required `configMapKeyRef` key is missing, as
 * it does for a missing object). For a whole-object state, `keyDigests` has one digest per key (keyed with the uid
 * for a Secret), from which the state of any ref with keys is derived.
 */
export type DependencyState =
  | {
      readonly ref: DependencyRef;
      readonly exists: true;
      readonly hash: string;
      readonly unkeyedHash?: string;
      readonly keyDigests?: ReadonlyMap<string, string>;
      readonly missingKeys?: readonly string[];
      readonly resourceVersion: string;
    }
  | { readonly ref: DependencyRef; readonly exists: false };

/**
 * How the controller learns about referenced objects. The reconcile never sees an event payload: it calls `use`
 * with the references it needs (level-based, idempotent), reads `state`, and is re-triggered through `changes`.
 *
 * - `use(owner, refs)` makes `owner` (a CustomApp key, `namespace/name`) acquire exactly `refs`: it subscribes to the
 *   new ones and releases the ones no longer listed. During a reference handoff the reconcile passes both the old
 *   and the new reference, and drops the old one only after the rollout and status write.
 * - `release(owner)` releases everything the owner has acquired (the finalizer calls it before removing the finalizer).
 * - `state(ref)` answers from the source's cache (a strategy without a cache may do a GET). `undefined` means the
 *   ref is not synced yet: the reconcile waits for a `changes` emission instead of guessing. A ref with `keys` is
 *   answered the hash of those keys (`key-digests.ts`).
 * - `changes` emits a ref's state when it first syncs, and then whenever its existence or content hash changes; for
 *   a ref acquired only with `keys`, only when the hash of those keys changes (another key's change emits nothing). A
 *   change of metadata only does not emit.
 */
export interface DependencySource {
  use(owner: string, refs: readonly DependencyRef[]): void;
  release(owner: string): void;
  state(ref: DependencyRef): Promise<DependencyState | undefined>;
  readonly changes: Observable<DependencyState>;
  /** The refs watched right now (each once), for invariants and metrics. */
  watched(): DependencyRef[];
  /** The owners that acquired each watched ref, keyed by {@link refKey}, for invariants. */
  owners(): ReadonlyMap<string, ReadonlySet<string>>;
  /** Stops every watch. */
  close(): void;
  /**
   * Optional: runs `useAll` (calls of `use`) as one batch, so that the source sets up its watches once for all of
   * them (the registry: a namespace past the collapse threshold starts its namespace watch alone).
   */
  batch?(useAll: () => void): void;
}

/** `ConfigMap/namespace/name`: the identity of the object a ref names (its keys aside). */
export function refKey(ref: DependencyRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

/** A ref's keys sorted and each once; undefined for the whole object (no keys, or an empty list). */
export function refKeys(ref: DependencyRef): readonly string[] | undefined {
  return ref.keys && ref.keys.length > 0 ? [...new Set(ref.keys)].sort() : undefined;
}

/** `ConfigMap/namespace/name` for the whole object, `ConfigMap/namespace/name["a","b"]` for some keys of it. */
export function useKey(ref: DependencyRef): string {
  const keys = refKeys(ref);
  return keys ? `${refKey(ref)}${JSON.stringify(keys)}` : refKey(ref);
}
