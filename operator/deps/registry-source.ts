// Our DependencySource: the reconcile's per-owner use/release, mapped onto DependencyRegistry subscriptions.
import { Subject, type Observable, type Subscription } from 'rxjs';
import { type Logger, silentLogger } from '../log.js';
import type { DependencyRegistry } from './registry.js';
import { sameState } from './key-digests.js';
import { refKey, type DependencyRef, type DependencySource, type DependencyState, useKey } from './source.js';

/**
 * Implements {@link DependencySource} on a {@link DependencyRegistry}: each owner (a CustomApp key) holds one
 * registry subscription per ref it uses, so the registry's reference count is the number of owners of a ref.
 *
 * - `use(owner, refs)` subscribes the refs the owner did not hold and unsubscribes the ones it no longer lists
 *   (a handoff passes old and new together, then the new alone);
 * - `release(owner)` unsubscribes everything the owner holds (the finalizer's cleanup);
 * - `changes` carries each ref's emissions once, however many owners hold it (a new owner joining a synced ref
 *   re-receives the same state, which is not forwarded again); a ref with keys is its own entry, whose emissions
 *   are its keys' hash;
 * - `state(ref)` answers the registry's current state at once (wrapped in a promise for the interface).
 *
 * `close()` unsubscribes everything and completes `changes`. Calls after `close` are ignored.
 */
export class RegistryDependencySource implements DependencySource {
  /**
   * owner → what it holds: the one ref of an owner that holds one (most workloads), else useKey → each. A Map of one
   * entry costs about 160 bytes more per owner: 1.6 MB at 10k workloads.
   */
  private readonly held = new Map<string, Held | Map<string, Held>>();
  /** useKey → how many owners hold it. */
  private readonly holds = new Map<string, number>();
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
    const before = heldBy(this.held.get(owner));
    const mine = new Map<string, Held>();
    for (const held of before) {
      if (wanted.has(held.key)) mine.set(held.key, held);
      else this.drop(owner, held);
    }
    for (const [key, ref] of wanted) {
      if (mine.has(key)) continue;
      this.holds.set(key, (this.holds.get(key) ?? 0) + 1);
      mine.set(key, { key, ref, subscription: this.registry.acquire(ref).subscribe((state) => this.forward(key, state)) });
      this.log.debug({ owner, ref: key }, 'use');
    }
    if (mine.size === 0) this.held.delete(owner);
    else if (mine.size === 1) this.held.set(owner, mine.values().next().value!);
    else this.held.set(owner, mine);
  }

  batch(useAll: () => void): void {
    this.registry.batch(useAll);
  }

  release(owner: string): void {
    const mine = this.held.get(owner);
    if (!mine) return;
    for (const held of heldBy(mine)) this.drop(owner, held);
    this.held.delete(owner);
    this.log.debug({ owner }, 'released');
  }

  state(ref: DependencyRef): Promise<DependencyState | undefined> {
    return Promise.resolve(this.registry.current(ref));
  }

  watched(): DependencyRef[] {
    return this.registry.watched();
  }

  /** By object ({@link refKey}): an owner holding some keys of an object holds the object. A copy. */
  holders(): ReadonlyMap<string, ReadonlySet<string>> {
    const holders = new Map<string, Set<string>>();
    for (const [owner, mine] of this.held) {
      for (const { ref } of heldBy(mine)) holders.set(refKey(ref), (holders.get(refKey(ref)) ?? new Set()).add(owner));
    }
    return holders;
  }

  close(): void {
    if (this.closed) return;
    for (const owner of [...this.held.keys()]) this.release(owner);
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

  /** Ends one hold of `owner` (its caller updates {@link held}). */
  private drop(owner: string, { key, subscription }: Held): void {
    const holds = (this.holds.get(key) ?? 1) - 1;
    if (holds > 0) this.holds.set(key, holds);
    else {
      this.holds.delete(key);
      this.forwarded.delete(key);
    }
    subscription.unsubscribe();
    this.log.debug({ owner, ref: key }, 'drop');
  }
}

/** One ref an owner holds: its useKey, the ref, and the registry subscription that holds it. */
interface Held {
  readonly key: string;
  readonly ref: DependencyRef;
  readonly subscription: Subscription;
}

/** What an owner holds, as a list (a copy: safe to drop from while iterating). */
function heldBy(mine: Held | Map<string, Held> | undefined): Held[] {
  return mine === undefined ? [] : mine instanceof Map ? [...mine.values()] : [mine];
}
