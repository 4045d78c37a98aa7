// Our DependencySource: the reconcile's per-owner use/release, mapped onto DependencyRegistry subscriptions.
import { Subject, type Observable, type Subscription } from 'rxjs';
import { type Logger, silentLogger } from '../log.js';
import type { DependencyRegistry } from './registry.js';
import { sameState } from './key-digests.js';
import { refKey, type DependencyRef, type DependencySource, type DependencyState, useKey } from './source.js';

/**
 * Implements {@link DependencySource} on a {@link DependencyRegistry}: each owner (a CustomApp key) acquires one
 * registry subscription per ref it uses, so the registry's reference count is the number of owners of a ref.
 *
 * - `use(owner, refs)` subscribes the refs the owner had not acquired and unsubscribes the ones it no longer lists
 *   (a handoff passes old and new together, then the new alone);
 * - `release(owner)` unsubscribes everything the owner has acquired (the finalizer's cleanup);
 * - `changes` carries each ref's emissions once, however many owners have acquired it (a new owner joining a synced ref
 *   re-receives the same state, which is not forwarded again); a ref with keys is its own entry, whose emissions
 *   are its keys' hash;
 * - `state(ref)` answers the registry's current state at once (wrapped in a promise for the interface).
 *
 * `close()` unsubscribes everything and completes `changes`. Calls after `close` are ignored.
 */
export class RegistryDependencySource implements DependencySource {
  /**
   * owner → what it has acquired: the one ref of an owner that has one (most workloads), else useKey → each. A Map of one
   * entry costs about 160 bytes more per owner: 1.6 MB at 10k workloads.
   */
  private readonly acquired = new Map<string, Acquired | Map<string, Acquired>>();
  /** useKey → how many owners have acquired it. */
  private readonly ownerCounts = new Map<string, number>();
  /** useKey → the last state forwarded to `changes`. */
  private readonly forwarded = new Map<string, DependencyState>();
  private readonly changeSubject = new Subject<DependencyState>();
  private readonly log: Logger;
  private closed = false;

  readonly changes: Observable<DependencyState> = this.changeSubject.asObservable();

  constructor(
    private readonly registry: DependencyRegistry,
    deps: { logger?: Logger } = {},
  ) {
    this.log = (deps.logger ?? silentLogger()).child({ component: 'dependency-source' });
  }

  use(owner: string, refs: readonly DependencyRef[]): void {
    if (this.closed) return;
    const wanted = new Map(refs.map((ref) => [useKey(ref), ref]));
    const before = acquiredBy(this.acquired.get(owner));
    const mine = new Map<string, Acquired>();
    for (const acquired of before) {
      if (wanted.has(acquired.key)) mine.set(acquired.key, acquired);
      else this.drop(owner, acquired);
    }
    for (const [key, ref] of wanted) {
      if (mine.has(key)) continue;
      this.ownerCounts.set(key, (this.ownerCounts.get(key) ?? 0) + 1);
      mine.set(key, { key, ref, subscription: this.registry.acquire(ref).subscribe((state) => this.forward(key, state)) });
      this.log.debug({ owner, ref: key }, 'use');
    }
    if (mine.size === 0) this.acquired.delete(owner);
    else if (mine.size === 1) this.acquired.set(owner, mine.values().next().value!);
    else this.acquired.set(owner, mine);
  }

  batch(useAll: () => void): void {
    this.registry.batch(useAll);
  }

  release(owner: string): void {
    const mine = this.acquired.get(owner);
    if (!mine) return;
    for (const acquired of acquiredBy(mine)) this.drop(owner, acquired);
    this.acquired.delete(owner);
    this.log.debug({ owner }, 'released');
  }

  state(ref: DependencyRef): Promise<DependencyState | undefined> {
    return Promise.resolve(this.registry.current(ref));
  }

  watched(): DependencyRef[] {
    return this.registry.watched();
  }

  /** By object ({@link refKey}): an owner that acquired some keys of an object owns the object. A copy. */
  owners(): ReadonlyMap<string, ReadonlySet<string>> {
    const owners = new Map<string, Set<string>>();
    for (const [owner, mine] of this.acquired) {
      for (const { ref } of acquiredBy(mine)) owners.set(refKey(ref), (owners.get(refKey(ref)) ?? new Set()).add(owner));
    }
    return owners;
  }

  close(): void {
    if (this.closed) return;
    for (const owner of [...this.acquired.keys()]) this.release(owner);
    this.closed = true;
    this.changeSubject.complete();
  }

  /** Forwards a state that says something new: a new owner joining a synced ref re-receives what was forwarded. */
  private forward(key: string, state: DependencyState): void {
    const last = this.forwarded.get(key);
    if (last && (last === state || sameState(last, state))) return;
    this.forwarded.set(key, state);
    this.changeSubject.next(state);
  }

  /** Releases one ref of `owner` (its caller updates {@link acquired}). */
  private drop(owner: string, { key, subscription }: Acquired): void {
    const remaining = (this.ownerCounts.get(key) ?? 1) - 1;
    if (remaining > 0) this.ownerCounts.set(key, remaining);
    else {
      this.ownerCounts.delete(key);
      this.forwarded.delete(key);
    }
    subscription.unsubscribe();
    this.log.debug({ owner, ref: key }, 'drop');
  }
}

/** One ref an owner has acquired: its useKey, the ref, and the registry subscription that keeps it acquired. */
interface Acquired {
  readonly key: string;
  readonly ref: DependencyRef;
  readonly subscription: Subscription;
}

/** What an owner has acquired, as a list (a copy: safe to drop from while iterating). */
function acquiredBy(mine: Acquired | Map<string, Acquired> | undefined): Acquired[] {
  return mine === undefined ? [] : mine instanceof Map ? [...mine.values()] : [mine];
}
