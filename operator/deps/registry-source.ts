// Our DependencySource: the reconcile's per-owner use/release, mapped onto DependencyRegistry subscriptions.
import { Subject, type Observable, type Subscription } from 'rxjs';
import { type Logger, silentLogger } from '../log.js';
import type { DependencyRegistry } from './registry.js';
import { refKey, type DependencyRef, type DependencySource, type DependencyState } from './source.js';

/**
 * Implements {@link DependencySource} on a {@link DependencyRegistry}: each owner (a CustomApp key) holds one
 * registry subscription per ref it uses, so the registry's reference count is the number of owners of a ref.
 *
 * - `use(owner, refs)` subscribes the refs the owner did not hold and unsubscribes the ones it no longer lists
 *   (a handoff passes old and new together, then the new alone);
 * - `release(owner)` unsubscribes everything the owner holds (the finalizer's cleanup);
 * - `changes` carries each ref's emissions once, however many owners hold it (a new owner joining a synced ref
 *   re-receives the same state object, which is not forwarded again);
 * - `state(ref)` answers the registry's current state at once (wrapped in a promise for the interface).
 *
 * `close()` unsubscribes everything and completes `changes`. Calls after `close` are ignored.
 */
export class RegistryDependencySource implements DependencySource {
  /** owner → refKey → subscription. */
  private readonly held = new Map<string, Map<string, Subscription>>();
  /** refKey → owners. */
  private readonly owners = new Map<string, Set<string>>();
  /** refKey → the last state forwarded to `changes` (by identity). */
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
    const wanted = new Map(refs.map((ref) => [refKey(ref), ref]));
    let mine = this.held.get(owner);
    for (const [key, subscription] of [...(mine ?? [])]) {
      if (!wanted.has(key)) this.drop(owner, key, subscription);
    }
    for (const [key, ref] of wanted) {
      if (mine?.has(key)) continue;
      if (!mine) this.held.set(owner, (mine = new Map()));
      const owners = this.owners.get(key) ?? new Set<string>();
      this.owners.set(key, owners.add(owner));
      mine.set(
        key,
        this.registry.acquire(ref).subscribe((state) => this.forward(key, state)),
      );
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
    for (const [key, subscription] of [...mine]) this.drop(owner, key, subscription);
    this.held.delete(owner);
    this.log.debug({ owner }, 'released');
  }

  state(ref: DependencyRef): Promise<DependencyState | undefined> {
    return Promise.resolve(this.registry.current(ref));
  }

  watched(): DependencyRef[] {
    return this.registry.watched();
  }

  /** A copy: safe to keep while the source moves on. */
  holders(): ReadonlyMap<string, ReadonlySet<string>> {
    return new Map([...this.owners].map(([key, owners]) => [key, new Set(owners)]));
  }

  close(): void {
    if (this.closed) return;
    for (const owner of [...this.held.keys()]) this.release(owner);
    this.closed = true;
    this.changeSubject.complete();
  }

  private forward(key: string, state: DependencyState): void {
    if (this.forwarded.get(key) === state) return;
    this.forwarded.set(key, state);
    this.changeSubject.next(state);
  }

  private drop(owner: string, key: string, subscription: Subscription): void {
    this.held.get(owner)?.delete(key);
    const owners = this.owners.get(key);
    owners?.delete(owner);
    if (owners?.size === 0) {
      this.owners.delete(key);
      this.forwarded.delete(key);
    }
    subscription.unsubscribe();
    this.log.debug({ owner, ref: key }, 'drop');
  }
}
