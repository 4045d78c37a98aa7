// The logical state of one referenced object: what its subscribers see, whichever physical watch feeds it.
import { Observable, Subject } from 'rxjs';
import { compareResourceVersions } from '../kube/resource-version.js';
import type { DependencyRef, DependencyState } from './source.js';

/** What a source observed about an object: its content hash, or that it does not exist. */
export type Observation =
  | {
      readonly exists: true;
      readonly hash: string;
      readonly unkeyedHash?: string;
      readonly keyDigests?: ReadonlyMap<string, string>;
      readonly resourceVersion: string;
    }
  | { readonly exists: false };

/**
 * One referenced object as its subscribers see it. Physical sources (a per-object watch, a namespace watch, a
 * one-shot list) `offer` what they observed, each with the resourceVersion it is true as of; the entry keeps the
 * newest and emits only when existence or the content hash changes.
 *
 * Several sources may feed one entry at once (that is how a switch between watch granularities loses nothing):
 * an offer older than what the entry already knows is dropped, so an overlap never replays an intermediate state
 * (see `compareResourceVersions` for when versions cannot be ordered).
 */
export class DependencyEntry {
  /** How many logical subscriptions have acquired this entry. */
  subscribers = 0;
  private state: DependencyState | undefined;
  private asOf: string | undefined;
  private readonly changes = new Subject<DependencyState>();

  constructor(readonly ref: DependencyRef) {}

  /** The state last emitted, or undefined before the first sync. */
  get current(): DependencyState | undefined {
    return this.state;
  }

  /** The current state (when synced), then every change; completes when the entry is closed. */
  states(): Observable<DependencyState> {
    return new Observable<DependencyState>((subscriber) => {
      if (this.state) subscriber.next(this.state);
      return this.changes.subscribe(subscriber);
    });
  }

  /**
   * Takes an observation made as of `asOf` (the list's resourceVersion for a snapshot, the object's for an event).
   * Answers true when it emitted: at the first sync, and when existence or the hash changed.
   */
  offer(observation: Observation, asOf: string): boolean {
    if (this.asOf !== undefined && (compareResourceVersions(asOf, this.asOf) ?? 0) < 0) return false;
    this.asOf = asOf;
    if (this.state && sameContent(this.state, observation)) return false;
    this.state = observation.exists
      ? {
          ref: this.ref,
          exists: true,
          hash: observation.hash,
          ...(observation.unkeyedHash === undefined ? {} : { unkeyedHash: observation.unkeyedHash }),
          ...(observation.keyDigests === undefined ? {} : { keyDigests: observation.keyDigests }),
          resourceVersion: observation.resourceVersion,
        }
      : { ref: this.ref, exists: false };
    this.changes.next(this.state);
    return true;
  }

  /** Completes every subscriber (the registry is closing). */
  close(): void {
    this.changes.complete();
  }
}

function sameContent(state: DependencyState, observation: Observation): boolean {
  if (!state.exists || !observation.exists) return state.exists === observation.exists;
  return state.hash === observation.hash;
}
