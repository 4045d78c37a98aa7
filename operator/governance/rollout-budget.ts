// The cluster-wide rollout budget: at most N dependency-triggered rollouts in progress, the rest in a first-in, first-out queue.
import { type Observable, Subject } from 'rxjs';

/** What {@link RolloutBudget.admit} answers. */
export type Admission =
  | { readonly granted: true }
  | {
      readonly granted: false;
      /** 1-based place in the queue, counting only the queued keys ahead that could take a slot now. */
      readonly position: number;
      /** Keys in the queue. */
      readonly queued: number;
      /** Keys occupying a slot. */
      readonly inProgress: number;
      /** When the key joined the queue (the clock's ms). */
      readonly since: number;
    };

/** Where a key stands after a reconcile, for {@link RolloutBudget.settle}. */
export interface Standing {
  /** Its Deployment is in a dependency-triggered rollout (by the Deployment's status): it occupies a slot. */
  readonly rolling: boolean;
  /** It still waits in the queue for a slot. */
  readonly waiting: boolean;
}

/** A snapshot of the budget, for logs, metrics and tests. */
export interface BudgetSnapshot {
  readonly limit: number;
  readonly inProgress: readonly string[];
  readonly queue: readonly { readonly key: string; readonly since: number }[];
}

/**
 * Which keys may start a dependency-triggered rollout. It keeps two sets in memory, both rebuilt from the cluster after
 * a restart ({@link rebuild}): the keys occupying a slot (rolling, or granted and not yet written) and the queue in
 * arrival order. With a limit of 0 every request is granted (no queue), and the slots are still counted.
 *
 * A key is granted when fewer of the queued keys ahead of it could use a slot than there are free slots, so the queue
 * is first in, first out; a queued key that is itself still rolling (its previous rollout not done) keeps its place
 * but does not block the keys behind it. Whenever a slot frees, or a key leaves the queue, the keys that can now go are
 * emitted once on {@link eligible}, for the controller to reconcile them (no polling). Not thread-safe, and need not
 * be: every call runs to completion on the event loop.
 */
export class RolloutBudget {
  /** Keys occupying a slot: granted and not yet seen rolling (`reserved`), or seen rolling by a settle (`rolling`). */
  private readonly slots = new Map<string, 'reserved' | 'rolling'>();
  /** key → when it joined; a Map keeps insertion order, which is the queue's order. */
  private queue = new Map<string, number>();
  /** The last place given (it may have left since): every key queued is at or before it. */
  private tail: Place | undefined;
  /** Queued keys already emitted on `eligible` and not yet granted or gone. */
  private readonly notified = new Set<string>();
  private readonly eligibleKeys = new Subject<string>();
  /** This process's part of the limit, when several processes share it ({@link setShare}). */
  private share: number | undefined;

  /** Keys that a free slot now lets go; each emitted once per turn at the head of the queue. */
  readonly eligible: Observable<string> = this.eligibleKeys.asObservable();

  /** @param limit at most this many keys occupy a slot at once; 0 = unlimited. */
  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 0) throw new Error(`rollout budget: limit ${JSON.stringify(limit)} is not an integer ≥ 0`);
  }

  /**
   * Limits this process to `share` of the limit's slots (a shard's part of the cluster-wide budget), or to the whole
   * limit again with undefined; 0 grants nothing new. Slots occupied already stay occupied. Emits the keys a larger share lets
   * go. An unlimited budget (limit 0) stays unlimited.
   */
  setShare(share: number | undefined): void {
    if (share === this.share) return;
    this.share = share;
    this.announce();
  }

  /** The slots this process may fill: the limit, or its share of it. */
  private get capacity(): number {
    return this.share === undefined ? this.limit : Math.min(this.limit, this.share);
  }

  get inProgress(): number {
    return this.slots.size;
  }

  get queued(): number {
    return this.queue.size;
  }

  /**
   * Asks for a slot for `key`, whose Deployment is not rolling: granted (the key now occupies a slot, kept until a
   * {@link settle} says it is not rolling), or queued (joining the back of the queue, or keeping its place). A key
   * granted a slot that no settle confirmed yet (its Deployment update failed, say) keeps it; one whose rollout was
   * seen and is now over gives its slot back first, and asks like anyone else.
   */
  admit(key: string, now: number): Admission {
    if (this.limit === 0 || this.slots.get(key) === 'reserved') {
      this.take(key);
      return { granted: true };
    }
    this.slots.delete(key);
    const ahead = this.ahead(key);
    if (ahead < this.capacity - this.slots.size) {
      this.take(key);
      return { granted: true };
    }
    return this.wait(key, now);
  }

  /**
   * Queues `key` (its Deployment still rolling, or no slot for it), keeping its place when it is queued already. The
   * queue is ordered by the time each key joined, then by key: the order a {@link rebuild} finds in status, where two
   * keys that joined in the same millisecond are told apart by name only.
   */
  wait(key: string, now: number): Admission & { granted: false } {
    if (!this.queue.has(key)) this.enqueue(key, now);
    // Told a slot was free and refused now (a resumed rollout took it first): its next turn is told again.
    this.notified.delete(key);
    return {
      granted: false,
      position: this.ahead(key) + 1,
      queued: this.queue.size,
      inProgress: this.slots.size,
      since: this.queue.get(key)!,
    };
  }

  /** When `key` joined the queue, if it is queued. */
  since(key: string): number | undefined {
    return this.queue.get(key);
  }

  /**
   * Records where `key` stands after its reconcile: whether it occupies a slot (its Deployment rolls) and whether it
   * still waits. Frees its slot or its place otherwise, and emits the keys that can go now.
   */
  settle(key: string, standing: Standing): void {
    if (standing.rolling) this.slots.set(key, 'rolling');
    else this.slots.delete(key);
    if (!standing.waiting) {
      this.queue.delete(key);
      this.notified.delete(key);
    }
    this.announce();
  }

  /**
   * Records what `key`'s Deployment alone says when its reconcile failed before it could {@link settle}: a slot occupied
   * for a rollout that is over frees (and the keys that can go are emitted); a grant not yet written stays for the
   * retry, and a place in the queue is kept.
   */
  settleSlot(key: string, rolling: boolean): void {
    if (rolling) this.slots.set(key, 'rolling');
    else if (this.slots.get(key) === 'rolling') this.slots.delete(key);
    this.announce();
  }

  /** Forgets `key` (deleted, or gone from the cache): its slot and its place free. */
  forget(key: string): void {
    this.settle(key, { rolling: false, waiting: false });
  }

  /**
   * Replaces the state with what the cluster says after a restart or a failover: the keys whose Deployment is in a
   * dependency-triggered rollout, and the queued keys with the time each joined (ordered by that time, then key).
   * Emits the keys that can go at once.
   */
  rebuild(rolling: Iterable<string>, queued: Iterable<{ readonly key: string; readonly since: number }>): void {
    this.slots.clear();
    for (const key of rolling) this.slots.set(key, 'rolling');
    this.queue = ordered(new Map([...queued].map((entry) => [entry.key, entry.since])));
    const last = [...this.queue].at(-1);
    this.tail = last ? { key: last[0], since: last[1] } : undefined;
    this.notified.clear();
    this.announce();
  }

  snapshot(): BudgetSnapshot {
    return {
      limit: this.limit,
      inProgress: [...this.slots.keys()],
      queue: [...this.queue].map(([key, since]) => ({ key, since })),
    };
  }

  /** Ends {@link eligible}. */
  close(): void {
    this.eligibleKeys.complete();
  }

  /**
   * Adds `key` at the back of the queue. Its time is the clock's, made no earlier than the last key's, and one
   * millisecond later when the same time would sort it before the last key by name: arrival order is then always
   * (since, key) order, which is what status records and a rebuild restores.
   */
  private enqueue(key: string, now: number): void {
    const last = this.tail;
    let since = now;
    if (last && since <= last.since) since = key < last.key ? last.since + 1 : last.since;
    this.queue.set(key, since);
    this.tail = { key, since };
  }

  private take(key: string): void {
    this.slots.set(key, 'reserved');
    this.queue.delete(key);
    this.notified.delete(key);
  }

  /** Queued keys ahead of `key` (all of them when it is not queued) that could use a slot now: those not rolling. */
  private ahead(key: string): number {
    let count = 0;
    for (const queued of this.queue.keys()) {
      if (queued === key) break;
      if (!this.slots.has(queued)) count += 1;
    }
    return count;
  }

  /** Emits, once each, the queued keys within the free slots. */
  private announce(): void {
    if (this.limit === 0) return;
    let free = this.capacity - this.slots.size;
    if (free <= 0) return;
    const ready: string[] = [];
    for (const key of this.queue.keys()) {
      if (free <= 0) break;
      if (this.slots.has(key)) continue;
      free -= 1;
      if (!this.notified.has(key)) {
        this.notified.add(key);
        ready.push(key);
      }
    }
    for (const key of ready) this.eligibleKeys.next(key);
  }
}

type Place = { readonly key: string; readonly since: number };

/** The queue's order: by the time a key joined, then by key. */
function byPlace(a: Place, b: Place): number {
  return a.since - b.since || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** `queue` in the queue's order (a Map iterates in insertion order). */
function ordered(queue: ReadonlyMap<string, number>): Map<string, number> {
  const places = [...queue].map(([key, since]) => ({ key, since })).sort(byPlace);
  return new Map(places.map((place) => [place.key, place.since]));
}
