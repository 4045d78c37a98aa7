// The `changes` stream of a benchmark strategy: emits a ref's state only when its existence or content hash changes.
import { Subject, type Observable } from 'rxjs';
import type { DependencyObject } from '../../operator/dependencies/dependency-watch.js';
import { dependencyHashes } from '../../operator/dependencies/keyed-hash.js';
import { refKey, type DependencyRef, type DependencyState } from '../../operator/dependencies/source.js';

/** A ref's state from the object as the API answered it (undefined: it does not exist); hashed as the operator does. */
export function stateOf(ref: DependencyRef, object: DependencyObject | undefined): DependencyState {
  if (!object) return { ref, exists: false };
  return { ref, exists: true, ...dependencyHashes(ref.kind, object), resourceVersion: object.metadata.resourceVersion ?? '' };
}

function sameState(a: DependencyState, b: DependencyState): boolean {
  return a.exists === b.exists && (!a.exists || (b.exists && a.hash === b.hash));
}

/**
 * The last state emitted per ref, and the stream of changes. `offer` emits the first state of a ref (its sync)
 * and then only a change of existence or hash, as {@link DependencySource.changes} promises.
 */
export class StateChanges {
  private readonly subject = new Subject<DependencyState>();
  private readonly last = new Map<string, DependencyState>();
  readonly changes: Observable<DependencyState> = this.subject.asObservable();

  offer(state: DependencyState): void {
    const key = refKey(state.ref);
    const previous = this.last.get(key);
    if (previous && sameState(previous, state)) return;
    this.last.set(key, state);
    this.subject.next(state);
  }

  /** Records a state as known without emitting it (the reconcile just read it), so that only a change emits. */
  remember(state: DependencyState): void {
    this.last.set(refKey(state.ref), state);
  }

  /** The last state emitted (or remembered) for the ref, if any. */
  current(ref: DependencyRef): DependencyState | undefined {
    return this.last.get(refKey(ref));
  }

  /** Forgets a ref (no owner has it acquired any more): its next offer emits again. */
  forget(ref: DependencyRef): void {
    this.last.delete(refKey(ref));
  }

  complete(): void {
    this.subject.complete();
  }
}
