// Which owner (CustomApp) has acquired which dependency refs: the bookkeeping every benchmark strategy shares.
import { refKey, type DependencyRef } from '../../operator/dependencies/source.js';

/** What one `use` or `release` changed, from the owner's side and from the ref's side. */
export interface AcquisitionsChange {
  /** Refs this owner had not acquired before. */
  readonly ownerAdded: DependencyRef[];
  /** Refs this owner had acquired and no longer has. */
  readonly ownerRemoved: DependencyRef[];
  /** Refs that had no owner before (the first owner acquired them). */
  readonly firstAcquired: DependencyRef[];
  /** Refs that have no owner left (the last owner released them). */
  readonly lastReleased: DependencyRef[];
}

/** Owners and the refs they have acquired, both ways, keyed by {@link refKey}. */
export class Acquisitions {
  private readonly byOwner = new Map<string, Map<string, DependencyRef>>();
  private readonly byRef = new Map<string, Set<string>>();
  private readonly refs = new Map<string, DependencyRef>();

  /** Makes `owner` acquire exactly `refs`, and answers the difference. */
  use(owner: string, refs: readonly DependencyRef[]): AcquisitionsChange {
    const wanted = new Map(refs.map((ref) => [refKey(ref), ref] as const));
    const acquired = this.byOwner.get(owner) ?? new Map<string, DependencyRef>();
    const change: AcquisitionsChange = { ownerAdded: [], ownerRemoved: [], firstAcquired: [], lastReleased: [] };
    for (const [key, ref] of wanted) {
      if (acquired.has(key)) continue;
      change.ownerAdded.push(ref);
      let owners = this.byRef.get(key);
      if (!owners) {
        this.byRef.set(key, (owners = new Set()));
        this.refs.set(key, ref);
        change.firstAcquired.push(ref);
      }
      owners.add(owner);
    }
    for (const [key, ref] of acquired) {
      if (wanted.has(key)) continue;
      change.ownerRemoved.push(ref);
      const owners = this.byRef.get(key)!;
      owners.delete(owner);
      if (owners.size === 0) {
        this.byRef.delete(key);
        this.refs.delete(key);
        change.lastReleased.push(ref);
      }
    }
    if (wanted.size === 0) this.byOwner.delete(owner);
    else this.byOwner.set(owner, wanted);
    return change;
  }

  /** Whether any owner has acquired the ref with this key. */
  isAcquired(key: string): boolean {
    return this.byRef.has(key);
  }

  /** Every acquired ref, once. */
  acquiredRefs(): DependencyRef[] {
    return [...this.refs.values()];
  }

  /** The owners of each acquired ref, keyed by {@link refKey}. */
  owners(): ReadonlyMap<string, ReadonlySet<string>> {
    return new Map([...this.byRef].map(([key, owners]) => [key, new Set(owners)] as const));
  }
}
