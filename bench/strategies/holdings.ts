// Which owner (CustomApp) holds which dependency refs: the bookkeeping every benchmark strategy shares.
import { refKey, type DependencyRef } from '../../operator/deps/source.js';

/** What one `use` or `release` changed, from the owner's side and from the ref's side. */
export interface HoldingsChange {
  /** Refs this owner did not hold before. */
  readonly ownerAdded: DependencyRef[];
  /** Refs this owner held and no longer does. */
  readonly ownerRemoved: DependencyRef[];
  /** Refs that had no holder before (the first holder arrived). */
  readonly firstHeld: DependencyRef[];
  /** Refs that have no holder left (the last holder went). */
  readonly lastReleased: DependencyRef[];
}

/** Owners and the refs they hold, both ways, keyed by {@link refKey}. */
export class Holdings {
  private readonly byOwner = new Map<string, Map<string, DependencyRef>>();
  private readonly byRef = new Map<string, Set<string>>();
  private readonly refs = new Map<string, DependencyRef>();

  /** Makes `owner` hold exactly `refs`, and answers the difference. */
  use(owner: string, refs: readonly DependencyRef[]): HoldingsChange {
    const wanted = new Map(refs.map((ref) => [refKey(ref), ref] as const));
    const held = this.byOwner.get(owner) ?? new Map<string, DependencyRef>();
    const change: HoldingsChange = { ownerAdded: [], ownerRemoved: [], firstHeld: [], lastReleased: [] };
    for (const [key, ref] of wanted) {
      if (held.has(key)) continue;
      change.ownerAdded.push(ref);
      let holders = this.byRef.get(key);
      if (!holders) {
        this.byRef.set(key, (holders = new Set()));
        this.refs.set(key, ref);
        change.firstHeld.push(ref);
      }
      holders.add(owner);
    }
    for (const [key, ref] of held) {
      if (wanted.has(key)) continue;
      change.ownerRemoved.push(ref);
      const holders = this.byRef.get(key)!;
      holders.delete(owner);
      if (holders.size === 0) {
        this.byRef.delete(key);
        this.refs.delete(key);
        change.lastReleased.push(ref);
      }
    }
    if (wanted.size === 0) this.byOwner.delete(owner);
    else this.byOwner.set(owner, wanted);
    return change;
  }

  /** Whether anyone holds the ref with this key. */
  isHeld(key: string): boolean {
    return this.byRef.has(key);
  }

  /** Every held ref, once. */
  heldRefs(): DependencyRef[] {
    return [...this.refs.values()];
  }

  /** The owners of each held ref, keyed by {@link refKey}. */
  holders(): ReadonlyMap<string, ReadonlySet<string>> {
    return new Map([...this.byRef].map(([key, owners]) => [key, new Set(owners)] as const));
  }
}
