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
  /** owner → useKey → the ref and its subscription. */
  private readonly held = new Map<string, Map<string, { readonly ref: DependencyRef; readonly subscription: Subscription }>>();
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
    let mine = this.held.get(owner);
    for (const [key, { subscription }] of [...(mine ?? [])]) {
      if (!wanted.has(key)) this.drop(owner, key, subscription);
    }
    for (const [key, ref] of wanted) {
      if (mine?.has(key)) continue;
      if (!mine) this.held.set(owner, (mine = new Map()));
      this.holds.set(key, (this.holds.get(key) ?? 0) + 1);
      mine.set(key, { ref, subscription: this.registry.acquire(ref).subscribe((state) => this.forward(key, state)) });
      this.log.debug({ owner, ref: key }, 'use');
    }
    if (mine?.size === 0) this.held.delete(owner);
  }

  batch(useAll: () => void): void {
    this.registry.batch(useAll);
  }

  release(owner: string): void {
    const mine = this.held.get(owner);
    if (!mine) return;
    for (const [key, { subscription }] of [...mine]) this.drop(owner, key, subscription);
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
      for (const { ref } of mine.values()) holders.set(refKey(ref), (holders.get(refKey(ref)) ?? new Set()).add(owner));
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

  private drop(owner: string, key: string, subscription: Subscription): void {
    this.held.get(owner)?.delete(key);
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
