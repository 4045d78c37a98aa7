// One replica's share of the work: the live members seen in the ring's Leases, the keys it owns, and the drain handshake.
import { BehaviorSubject, type Observable, type SchedulerLike, Subject, type Subscription } from 'rxjs';
import type { Lease } from '../kube/objects.js';
import type { Logger } from '../log.js';
import { ownerOf, sameView, shareOf, type View, viewDigest, viewOf } from './ring.js';

/** The label every shard's Lease carries: its value names the ring (the operator), so one ring's shards find each other. */
export const RING_LABEL = 'app.example.com/ring';
/**
 * The annotation in which a shard publishes the view it has drained to, as a JSON array of member names: "I act only
 * on keys I own in this view, and nothing else of mine is in flight". Empty before its first acknowledgement.
 */
export const RING_VIEW_ANNOTATION = 'app.example.com/ring-view';
/**
 * The annotation in which a shard publishes, with each acknowledgement and renewal, how many rollouts it counts in
 * progress: its own, and those it handed to a member whose acknowledgement does not show them yet.
 */
export const RING_ROLLOUTS_ANNOTATION = 'app.example.com/ring-rollouts';

/** How long a shard waits before it prepares a view again after its caches failed to list (leader election's default retry period). */
export const PREPARE_RETRY_MS = 2_000;

/**
 * After how many of its durations with no change of its record a ring Lease is stale: its holder crashed and never came
 * back (or released it and never came back), so that the first member of the view deletes it. Ten, as no clock skew
 * nor freeze that leader election tolerates comes near it.
 */
export const STALE_LEASE_DURATIONS = 10;

/** The shard's own Lease, as the {@link Shard} needs it (a `LeaderElector` on the shard's Lease has all of it). */
export interface ShardLease {
  /** True while this process holds its Lease. */
  readonly isLeader: boolean;
  /** The monotonic time until which this process may still act (the renew deadline of its last renewal). */
  readonly validUntil: number;
  /** Writes the Lease now, with the annotations {@link Shard.annotations} answers. */
  renewNow(): void;
}

/** Options of {@link Shard}. */
export interface ShardOptions {
  /** This shard's member name: the name of its own Lease (member names are Lease names, stable across restarts). */
  readonly member: string;
  /**
   * The ring's Leases as this process sees them, a whole snapshot at each change, in the order the API server made
   * them (one list and watch). The first emission is the first list.
   */
  readonly leases$: Observable<readonly Lease[]>;
  /** The clock of every observation and deadline, monotonic (as the leader elector's). */
  readonly monotonicNow: () => number;
  /** The timers that notice a member's Lease expire. */
  readonly scheduler: SchedulerLike;
  /** A Lease's duration when it states none. */
  readonly defaultLeaseDurationMs: number;
  readonly logger: Logger;
  /** The keys in the caches, to count what an ownership change acquired and released. @default none */
  readonly cachedKeys?: () => Iterable<string>;
  /**
   * Deletes a stale ring Lease (see {@link STALE_LEASE_DURATIONS}) if it is still at `resourceVersion` (a precondition:
   * never one renewed meanwhile); rejects to be asked again at a later change of the ring. @default none are deleted
   */
  readonly collect?: (lease: string, resourceVersion: string) => Promise<void>;
}

/** One member of the ring, as this shard last saw its Lease. */
interface Member {
  readonly holder: string;
  /** The Lease's record (holder and times); a change means its holder is alive. */
  readonly record: string;
  /** When (monotonic) this shard saw the record change: expiry runs from here, never from the holder's clock. */
  readonly observedAt: number;
  readonly durationMs: number;
  /** The view the member acknowledged, or undefined (none yet, or not readable). */
  readonly ack: View | undefined;
  /** The rollouts in progress it counts (0 when it publishes none). */
  readonly rollouts: number;
  /** The Lease's resourceVersion, the precondition of its deletion when stale. */
  readonly resourceVersion: string;
}

/** The rollouts a Lease's annotation says its holder counts: a whole number, else 0. */
function publishedRollouts(lease: Lease): number {
  const count = Number(lease.metadata.annotations?.[RING_ROLLOUTS_ANNOTATION] ?? 0);
  return Number.isSafeInteger(count) && count >= 0 ? count : 0;
}

/** A Lease's record (holder, duration, times): a change means its holder is alive; an annotation alone is no change. */
export function leaseRecord(spec: NonNullable<Lease['spec']>): string {
  return JSON.stringify([spec.holderIdentity, spec.leaseDurationSeconds, spec.acquireTime, spec.renewTime, spec.leaseTransitions]);
}

/** The view a Lease's annotation acknowledges: undefined when it has none or it does not read as a list of names. */
export function acknowledgedView(lease: Lease): View | undefined {
  const text = lease.metadata.annotations?.[RING_VIEW_ANNOTATION];
  if (!text) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed) && parsed.every((name) => typeof name === 'string')) return viewOf(parsed);
  } catch {
    // Not JSON: read as no acknowledgement, below.
  }
  return undefined;
}

/**
 * A shard: this replica's member of the ring. From the ring's Leases it knows the live members (a Lease whose
 * record changed within its duration, on this process's monotonic clock, as leader election judges expiry) and so
 * its **view**; a key belongs to the member that rendezvous hashing gives it in a view (`ring.ts`).
 *
 * **Acting.** It acts on a key (a reconcile may start: {@link enter}) only if it owns the key in its current view and
 * in the view it has acknowledged, and no other live member claims the key in the view that member acknowledged.
 * An acknowledgement counts once this shard has seen it in its own Lease through the watch: every Lease write the
 * server applied before it has then been seen too. So of two shards that claim one key, the second to write its
 * claim sees the first's and holds back until the first gives the key up (or its Lease expires: it stops acting at
 * its renew deadline, before the others' lease duration from their observation, as a leader does).
 *
 * **A view change.** It stops starting keys it no longer owns, waits for its reconciles in flight on them, lets the
 * caches list with the new scope ({@link ShardOptions.prepare}), then acknowledges the new view in its Lease. The
 * new owners start on those keys when they see that (a watch: at once), or when its Lease expired.
 *
 * **Caches.** {@link inScope} is what its caches keep: the keys it owns in its view or in the view it acknowledged
 * (still draining); {@link scope$} emits a new version whenever that changes.
 */
export class Shard {
  private readonly members = new Map<string, Member>();
  private view: View = [];
  /** The view this shard asks its Lease to carry. */
  private publishing: View | undefined;
  /** The view its own Lease carries, as seen through the watch: what its claims are. */
  private acknowledged: View | undefined;
  private readonly inFlight = new Set<string>();
  /** Keys refused while in scope, to queue again once they may go. */
  private readonly blocked = new Set<string>();
  private readonly scopeVersion = new BehaviorSubject(0);
  private readonly readyKeys = new Subject<string>();
  private readonly settledInFlight = new Subject<void>();
  private readonly viewsChanged = new Subject<void>();
  /** Rollouts in progress handed off: key → the member that takes it, counted here until its acknowledgement shows it. */
  private readonly handedOff = new Map<string, string>();
  /** Stale Leases asked to be deleted, as `name@resourceVersion`: each version is asked once while it succeeds. */
  private readonly collecting = new Set<string>();
  private ownRollouts: () => number = () => 0;
  private lease: ShardLease | undefined;
  private prepare: ((view: View) => Promise<void>) | undefined;
  private subscription: Subscription | undefined;
  private expiry: Subscription | undefined;
  private handshake: Promise<void> | undefined;
  private stopped = false;
  private seenRing = false;
  private readonly log: Logger;

  constructor(private readonly options: ShardOptions) {
    this.log = options.logger.child({ member: options.member });
  }

  /** A new version whenever {@link inScope} may answer differently (the caches list again then). */
  get scope$(): Observable<number> {
    return this.scopeVersion;
  }

  /** Keys refused earlier that may go now: queue them again. */
  get ready$(): Observable<string> {
    return this.readyKeys;
  }

  /** Emits when a view in play may have changed (this shard's, the one it acknowledged, or another member's acknowledged one). */
  get viewsChanged$(): Observable<void> {
    return this.viewsChanged;
  }

  /**
   * This shard's part of a budget of `limit` slots shared by the ring: the smallest it has in any view still in play
   * (its own view, the one it acknowledged, and those the other live members acknowledged; 0 in a view it is not in),
   * so that while the members disagree no two of them count on the same slot; less what the other live members publish
   * beyond their own share (rollouts in progress handed to them), so that those still count against the whole; less
   * the rollouts it handed off and still counts (outside its budget's slots).
   */
  budgetShare(limit: number): number {
    const self = this.options.member;
    const now = this.options.monotonicNow();
    const views: View[] = [this.view];
    if (this.acknowledged) views.push(this.acknowledged);
    const others = [...this.members].filter(([name, member]) => name !== self && this.isLive(member, now));
    for (const [, member] of others) if (member.ack) views.push(member.ack);
    // Another member's part, as this one's, is its smallest in every view in play: what it counts past that (rollouts
    // handed to it from a member whose part was larger in a view still in play) is counted here against the whole.
    const partOf = (name: string): number => Math.min(...views.map((view) => shareOf(name, view, limit)));
    let beyond = 0;
    for (const [name, member] of others) beyond += Math.max(0, member.rollouts - partOf(name));
    // The rollouts it handed off and still counts run outside its budget's slots: they take from its own part.
    return Math.max(0, partOf(self) - beyond - this.handedOff.size);
  }

  /** The live members this shard sees, itself included once its own Lease is live. */
  get liveMembers(): View {
    return this.view;
  }

  /** The annotations of this shard's Lease: the view it acknowledges (empty before the first), the rollouts it counts. */
  annotations(): Record<string, string> {
    return {
      [RING_VIEW_ANNOTATION]: this.publishing ? JSON.stringify(this.publishing) : '',
      [RING_ROLLOUTS_ANNOTATION]: String(this.rolloutsCounted()),
    };
  }

  /** Where this shard's own rollouts in progress are counted (its governance). */
  countRollouts(inProgress: () => number): void {
    this.ownRollouts = inProgress;
  }

  /**
   * Before acknowledging `view`: the rollouts in progress on keys it gives up in it. They stay counted here, and
   * published, until the member that takes each one shows an acknowledgement in which it owns it (it rebuilt its
   * budget, counting them, before that): no moment when nobody counts a rollout that runs.
   */
  handOff(rolling: Iterable<string>, view: View): void {
    const self = this.options.member;
    for (const key of rolling) {
      const owner = ownerOf(key, view);
      if (owner !== undefined && owner !== self) this.handedOff.set(key, owner);
    }
  }

  private rolloutsCounted(): number {
    return this.ownRollouts() + this.handedOff.size;
  }

  /**
   * Starts following the ring; `lease` is this shard's own Lease, held (or being acquired) by its elector. `prepare`
   * is called before this shard acknowledges a view, once nothing it gives up is in flight: the caches list again
   * with the new scope, the rollout governance is rebuilt from them (a view change meanwhile starts over).
   */
  start(lease: ShardLease, prepare?: (view: View) => Promise<void>): void {
    if (this.subscription) return;
    this.lease = lease;
    this.prepare = prepare;
    this.subscription = this.options.leases$.subscribe((leases) => this.observe(leases));
  }

  /** Whether the caches keep `key`: owned in the view, or in the view acknowledged (a key still being handed off). */
  inScope(key: string): boolean {
    const self = this.options.member;
    return ownerOf(key, this.view) === self || (this.acknowledged !== undefined && ownerOf(key, this.acknowledged) === self);
  }

  /** Whether a reconcile of `key` may start now (see the class). */
  mayAct(key: string): boolean {
    const { member } = this.options;
    const lease = this.lease;
    if (this.stopped || !lease?.isLeader || this.options.monotonicNow() >= lease.validUntil || !this.acknowledged) return false;
    if (ownerOf(key, this.view) !== member || ownerOf(key, this.acknowledged) !== member) return false;
    const now = this.options.monotonicNow();
    for (const [name, other] of this.members) {
      if (name === member || !this.isLive(other, now) || !other.ack) continue;
      if (ownerOf(key, other.ack) === name) return false;
    }
    return true;
  }

  /**
   * A reconcile of `key` is about to start: true if it may (and it counts as in flight until {@link exit}), false
   * if not (a key this shard holds in its caches comes back on {@link ready$} when it may).
   */
  enter(key: string): boolean {
    if (!this.mayAct(key)) {
      if (this.inScope(key) && !this.stopped) this.blocked.add(key);
      return false;
    }
    this.blocked.delete(key);
    this.inFlight.add(key);
    return true;
  }

  /** The reconcile of `key` that {@link enter} let start has ended. */
  exit(key: string): void {
    this.inFlight.delete(key);
    this.settledInFlight.next();
  }

  /** Its own Lease was acquired or lost: it joins or leaves its own view now, not at the next snapshot. */
  leaseChanged(): void {
    this.recompute();
  }

  /** The current version of {@link scope$}. */
  get scopeVersionNow(): number {
    return this.scopeVersion.value;
  }

  /** Stops acting: no reconcile starts from now on (the caller drains those in flight, then releases the Lease). */
  stop(): void {
    this.stopped = true;
    this.subscription?.unsubscribe();
    this.expiry?.unsubscribe();
    this.blocked.clear();
    this.readyKeys.complete();
    this.viewsChanged.complete();
    this.scopeVersion.complete();
    this.settledInFlight.complete();
  }

  /** A new snapshot of the ring: note whose record changed, then recompute. */
  private observe(leases: readonly Lease[]): void {
    const now = this.options.monotonicNow();
    const seen = new Set<string>();
    for (const lease of leases) {
      const name = lease.metadata.name ?? '';
      seen.add(name);
      const spec = lease.spec ?? {};
      const record = leaseRecord(spec);
      const previous = this.members.get(name);
      this.members.set(name, {
        holder: spec.holderIdentity ?? '',
        record,
        observedAt: previous?.record === record ? previous.observedAt : now,
        durationMs: (spec.leaseDurationSeconds ?? this.options.defaultLeaseDurationMs / 1000) * 1000,
        ack: acknowledgedView(lease),
        rollouts: publishedRollouts(lease),
        resourceVersion: lease.metadata.resourceVersion ?? '',
      });
    }
    for (const name of [...this.members.keys()]) if (!seen.has(name)) this.members.delete(name);
    for (const [key, owner] of this.handedOff) {
      const taker = this.members.get(owner);
      // Counted by whoever claims it now (it rebuilt its budget, counting it, before acknowledging), be it the member
      // it was handed to or one that took it on from there; or never will be by that member (gone, or not live).
      if (!taker || !this.isLive(taker, now) || this.claimedByAny(key, now)) this.handedOff.delete(key);
    }
    this.seenRing = true;
    const own = this.members.get(this.options.member);
    if (own && this.publishing && sameView(own.ack, this.publishing) && !sameView(this.acknowledged, own.ack)) this.acknowledge(own.ack!);
    this.recompute();
  }

  /** Whether another live member claims `key` in the view it acknowledged. */
  private claimedByAny(key: string, now: number): boolean {
    for (const [name, member] of this.members) {
      if (name === this.options.member) continue;
      if (this.isLive(member, now) && member.ack && ownerOf(key, member.ack) === name) return true;
    }
    return false;
  }

  /** Live: a holder, and a record seen to change within its duration (for itself: it holds its Lease). */
  private isLive(member: Member, now: number): boolean {
    return member.holder !== '' && member.observedAt + member.durationMs > now;
  }

  /** Recomputes the view from the members and the clock; starts the handshake when it changed; re-arms the expiry timer. */
  private recompute(): void {
    if (this.stopped || !this.seenRing) return;
    const now = this.options.monotonicNow();
    const self = this.options.member;
    const live = [...this.members].filter(([name, member]) =>
      name === self
        ? this.lease?.isLeader === true && now < (this.lease?.validUntil ?? 0) && this.isLive(member, now)
        : this.isLive(member, now),
    );
    const view = viewOf(live.map(([name]) => name));
    if (!sameView(view, this.view)) {
      const before = new Set(this.view);
      // The scope version each line belongs to: one view change may log several members, and each version costs the
      // caches one LIST each, which is what a reader of the log counts.
      const scope = this.scopeVersion.value + 1;
      for (const name of view) if (!before.has(name)) this.log.info({ joined: name, members: view.length, scope }, 'shard.member.joined');
      for (const name of before) if (!view.includes(name)) this.log.info({ left: name, members: view.length, scope }, 'shard.member.left');
      this.view = view;
      this.scopeVersion.next(scope);
      this.startHandshake();
    }
    this.releaseBlocked();
    this.collectStale(now);
    this.armExpiry(now);
    this.viewsChanged.next();
  }

  /** Whether `member`'s record has not changed for {@link STALE_LEASE_DURATIONS} of its durations. */
  private isStale(member: Member, now: number): boolean {
    return now - member.observedAt >= STALE_LEASE_DURATIONS * member.durationMs;
  }

  /**
   * The first member of the view (one member, so that the others do not ask too) asks for each stale Lease to be
   * deleted, on the resourceVersion it saw: a Lease of a replica that crashed and never came back would stay forever.
   */
  private collectStale(now: number): void {
    const { collect, member: self } = this.options;
    for (const asked of [...this.collecting]) if (!this.members.has(asked.slice(0, asked.lastIndexOf('@')))) this.collecting.delete(asked);
    if (!collect || this.view[0] !== self) return;
    for (const [name, member] of this.members) {
      const asked = `${name}@${member.resourceVersion}`;
      if (name === self || this.isLive(member, now) || !this.isStale(member, now) || this.collecting.has(asked)) continue;
      this.collecting.add(asked);
      this.log.info({ lease: name, holder: member.holder, unchangedForMs: Math.round(now - member.observedAt) }, 'shard.lease-stale');
      collect(name, member.resourceVersion).catch((error: unknown) => {
        // Asked again at a later change of the ring (the caller logged why).
        this.collecting.delete(asked);
        this.log.debug({ err: error, lease: name }, 'shard.lease-collect-failed');
      });
    }
  }

  /** Wakes up when the first live member's Lease (or this shard's own deadline) runs out. */
  private armExpiry(now: number): void {
    this.expiry?.unsubscribe();
    const deadlines = [...this.members.values()].map((member) =>
      this.isLive(member, now) ? member.observedAt + member.durationMs : member.observedAt + STALE_LEASE_DURATIONS * member.durationMs,
    );
    if (this.lease?.isLeader) deadlines.push(this.lease.validUntil);
    const next = Math.min(...deadlines.filter((at) => at > now));
    if (!Number.isFinite(next)) return;
    this.expiry = this.options.scheduler.schedule(() => this.recompute(), next - now + 1);
  }

  /**
   * Runs the handshake unless it runs already. A view that changed after the running one's last look, while its
   * promise settles, starts it again: nothing else would (the view changes no more).
   */
  private startHandshake(): void {
    this.handshake ??= this.runHandshake().finally(() => {
      this.handshake = undefined;
      if (!this.stopped && !sameView(this.view, this.publishing)) this.startHandshake();
    });
  }

  /** Drains, prepares and publishes views until the one published is the current one. */
  private async runHandshake(): Promise<void> {
    while (!this.stopped && !sameView(this.view, this.publishing)) {
      const target = this.view;
      await this.drained(target);
      if (this.stopped || !sameView(target, this.view)) continue;
      try {
        await this.prepare?.(target);
      } catch (error) {
        // Caches that could not list again: the old view stays published (its claims are safe) and this one is tried
        // again after a while, for the ring may not change again to retry it.
        this.log.error({ err: error, view: viewDigest(target), retryInMs: PREPARE_RETRY_MS }, 'shard.prepare-failed');
        await this.pause(PREPARE_RETRY_MS);
        continue;
      }
      if (this.stopped || !sameView(target, this.view)) continue;
      // A rollout handed off that comes back here is counted by this shard's own budget again, rebuilt in `prepare`.
      for (const key of [...this.handedOff.keys()]) if (ownerOf(key, target) === this.options.member) this.handedOff.delete(key);
      this.publishing = target;
      this.lease?.renewNow();
    }
  }

  /** Resolves after `ms` on the scheduler, or at once when the shard stops. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const stopped = this.viewsChanged.subscribe({ complete: resolve });
      stopped.add(
        this.options.scheduler.schedule(() => {
          stopped.unsubscribe();
          resolve();
        }, ms),
      );
    });
  }

  /** Resolves when no reconcile is in flight on a key not owned in `target`, or the view moved on from it. */
  private drained(target: View): Promise<void> {
    const self = this.options.member;
    const done = (): boolean =>
      this.stopped || !sameView(target, this.view) || [...this.inFlight].every((key) => ownerOf(key, target) === self);
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.settledInFlight.subscribe({
        next: () => {
          if (!done()) return;
          waiting.unsubscribe();
          resolve();
        },
        complete: resolve,
      });
    });
  }

  /** Its own Lease now carries `view`: its claims are those; the caches may drop what it gave up. */
  private acknowledge(view: View): void {
    const self = this.options.member;
    const previous = this.acknowledged;
    this.acknowledged = view;
    let acquired = 0;
    let released = 0;
    for (const key of this.options.cachedKeys?.() ?? []) {
      const was = previous !== undefined && ownerOf(key, previous) === self;
      const is = ownerOf(key, view) === self;
      if (is && !was) {
        // Owed a reconcile once it may go: a change of it may have been refused here while it was out of scope, and
        // the caches that already held it emit nothing for it when they list again.
        this.blocked.add(key);
        acquired += 1;
      }
      if (was && !is) released += 1;
    }
    const digest = viewDigest(view);
    const scope = this.scopeVersion.value + 1;
    this.log.info({ view: digest, members: view.length, scope }, 'shard.drained');
    this.log.info({ members: view, view: digest, acquired, released }, 'shard.ownership');
    this.scopeVersion.next(scope);
  }

  /** Queues again the refused keys that may go now, and forgets those no longer in scope. */
  private releaseBlocked(): void {
    for (const key of [...this.blocked]) {
      if (this.mayAct(key)) {
        this.blocked.delete(key);
        this.readyKeys.next(key);
      } else if (!this.inScope(key)) this.blocked.delete(key);
    }
  }
}
