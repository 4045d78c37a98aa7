// Leader election on a coordination.k8s.io/v1 Lease with get/create/update only, as client-go's leaderelection does it.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { KubeClient } from '../kube/client.js';
import { isConflict, isForbidden, isNotFound } from '../kube/errors.js';
import { LEASES } from '../kube/resources.js';
import { microTime } from '../kube/time.js';
import { pause, withDeadline } from './timers.js';
import type { Logger } from '../log.js';
import type { Lease } from '../kube/objects.js';

/** The three calls leader election makes; a {@link KubeClient} has them, and the model test passes a fake. */
export type LeaseClient = Pick<KubeClient, 'get' | 'create' | 'replace'>;

/** Options of {@link LeaderElector}. Durations follow controller-runtime's defaults. */
export interface LeaderElectionOptions {
  readonly client: LeaseClient;
  /** Namespace of the Lease. */
  readonly namespace: string;
  /** Name of the Lease. */
  readonly name: string;
  /** This process's identity in `holderIdentity`. @default `<hostname>_<uuid>` (controller-runtime's) */
  readonly identity?: string;
  /** How long a non-leader waits after the last observed renewal before taking over. @default 15_000 */
  readonly leaseDurationMs?: number;
  /**
   * How long after sending its last successful renewal the leader gives up leadership, when no later one succeeds.
   * Shorter than `leaseDurationMs`: the difference is the margin within which the leader's last writes land before
   * a standby may take over. @default 10_000
   */
  readonly renewDeadlineMs?: number;
  /** The interval between attempts, to acquire or to renew. @default 2_000 */
  readonly retryPeriodMs?: number;
  readonly logger: Logger;
  /** The timers (retries, deadlines); its `now()` is never read (asyncScheduler's is the wall clock). @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /**
   * A monotonic clock in milliseconds: every deadline, and when others' renewals were observed. A wall clock here
   * would let a step back keep a leader leading past its renew deadline, and a step forward let a standby take a
   * live Lease over; client-go measures these on Go's monotonic clock for the same reason.
   * @default performance.now
   */
  readonly monotonicNow?: () => number;
  /** The wall clock in milliseconds, for the Lease's RFC 3339 `acquireTime` and `renewTime` only. @default Date.now */
  readonly wallNow?: () => number;
  /** A number in [0, 1) for the retry jitter. @default Math.random */
  readonly random?: () => number;
  /** Called with true when this process starts leading, false when it stops. @default none */
  readonly onLeadingChange?: (leading: boolean) => void;
  /** Labels written on the Lease with every acquisition and renewal (a shard's ring label). @default none */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Annotations written with every acquisition and renewal, read at each write, so that the holder can publish a
   * state of its own in its Lease (a shard's acknowledged view); {@link LeaderElector.renewNow} publishes at once.
   * @default none
   */
  readonly annotations?: () => Readonly<Record<string, string>>;
}

/** client-go's wait.Jitter with JitterFactor 1.2: a delay in [d, 2.2 d). */
function jittered(ms: number, random: () => number): number {
  return ms * (1 + 1.2 * random());
}

/** The leader-election record of a Lease, as a comparable string: a change means its holder is alive. */
function recordOf(lease: Lease): string {
  const spec = lease.spec ?? {};
  return JSON.stringify([spec.holderIdentity, spec.leaseDurationSeconds, spec.acquireTime, spec.renewTime, spec.leaseTransitions]);
}

/**
 * One candidate for a Lease. `acquire` retries every retry period until this process holds the Lease (a free
 * Lease, an expired one, or one released by its holder), then renews it in the background every retry period.
 * If no renewal succeeds within the renew deadline, leadership is lost: `lost` resolves at that very moment (a
 * renewal still in flight is abandoned) and the process must stop writing (the operator fences its client, then
 * exits, as controller-runtime does). `release` stops renewing and clears `holderIdentity`, so another candidate
 * takes over at once instead of after the lease duration.
 *
 * Expiry is judged on this process's monotonic clock from when it last saw the Lease record change (client-go's
 * `observedTime`), never by comparing the holder's `renewTime` with the local clock, so clock skew between
 * candidates does not matter, and neither does a step of the wall clock (which writes only `renewTime`).
 *
 * **The leader's deadline runs from when its last successful renewal was sent** (from the start of that attempt,
 * its GET, a little earlier still), not from when the answer came: the server applied the renewal after it was sent, so a standby cannot have seen it earlier, and cannot take over
 * before `leaseDurationMs` after that. client-go counts from the answer, so a slow answer (up to the renew
 * deadline) stretches the leader's own view past the standby's, and both lead at once. Counting from the send,
 * the leader stops at most `renewDeadlineMs` after a point the standby's `leaseDurationMs` counts from, so what it
 * sent before stopping has `leaseDurationMs - renewDeadlineMs` (5 s by default) to land. The model test
 * (`leader-elector.model.test.ts`) checks that no write of a leader lands while another holds the Lease, under
 * slow, lost and reordered answers.
 */
export class LeaderElector {
  readonly identity: string;
  /** Resolves when leadership, once held, is lost (not when it is released). */
  readonly lost: Promise<void>;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly scheduler: SchedulerLike;
  private readonly monotonicNow: () => number;
  private readonly wallNow: () => number;
  private readonly random: () => number;
  private readonly log: Logger;
  private readonly stopping = new AbortController();
  private markLost!: () => void;
  private observed?: { readonly record: string; readonly at: number };
  private current?: Lease;
  private leading = false;
  private renewing?: Promise<void>;
  /** Until when (monotonic) this process may act as holder: the renew deadline of its last successful renewal. */
  private holdsUntil = Number.NEGATIVE_INFINITY;
  /** Aborted to cut the renewal loop's wait short ({@link renewNow}), then replaced. */
  private wake = new AbortController();
  /** Why the last attempt did not succeed, for the renewal's logs. */
  private lastFailure: string | undefined;
  /** Whether a 403 on the Lease was logged (once: the retries that follow are logged at debug). */
  private forbiddenReported = false;

  constructor(private readonly options: LeaderElectionOptions) {
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (!(this.retryPeriodMs > 0 && this.renewDeadlineMs > this.retryPeriodMs && this.leaseDurationMs > this.renewDeadlineMs)) {
      throw new Error(
        `leader election: need 0 < retry period (${this.retryPeriodMs} ms) < renew deadline (${this.renewDeadlineMs} ms) < lease duration (${this.leaseDurationMs} ms)`,
      );
    }
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.monotonicNow = options.monotonicNow ?? (() => performance.now());
    this.wallNow = options.wallNow ?? Date.now;
    this.random = options.random ?? Math.random;
    this.log = options.logger.child({ lease: `${options.namespace}/${options.name}`, identity: this.identity });
    this.lost = new Promise((resolve) => {
      this.markLost = resolve;
    });
  }

  /** The Lease, as `namespace/name`. */
  get lease(): string {
    return `${this.options.namespace}/${this.options.name}`;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * The monotonic time until which this process may act as holder: `renewDeadlineMs` after its last successful
   * renewal was sent. `lost` fires then from a timer; a process frozen past it (a stopped container, a long pause of
   * the event loop) may run other callbacks before that timer, so a write that must not outlive the Lease checks this.
   */
  get validUntil(): number {
    return this.leading ? this.holdsUntil : Number.NEGATIVE_INFINITY;
  }

  /** Renews now rather than at the end of the current retry period, so that new {@link LeaderElectionOptions.annotations} go out at once. */
  renewNow(): void {
    this.wake.abort();
  }

  /**
   * Resolves true once this process holds the Lease (and keeps renewing it until `release`), or false when
   * `signal` aborts first.
   */
  async acquire(signal: AbortSignal): Promise<boolean> {
    const log = this.log;
    log.info('leader.candidate');
    const stop = AbortSignal.any([signal, this.stopping.signal]);
    while (!stop.aborted) {
      const sentAt = this.now();
      // An acquisition heard of only after the renew deadline is no leadership at all: a standby may already have
      // taken the Lease over. It is abandoned then (the next attempt renews it, if it is still ours).
      const acquired = await withDeadline(this.renewDeadlineMs, stop, this.scheduler, (signal) => this.tryAcquireOrRenew(signal));
      if (acquired && this.now() - sentAt < this.renewDeadlineMs) {
        this.setLeading(true);
        log.info('leader.acquired');
        this.renewing = this.renewUntilStopped(sentAt);
        return true;
      }
      if (!(await pause(jittered(this.retryPeriodMs, this.random), stop, this.scheduler))) break;
    }
    return false;
  }

  /** Stops renewing and, if this process holds the Lease, hands it back (holderIdentity cleared). */
  async release(): Promise<void> {
    this.stopping.abort();
    await this.renewing;
    if (!this.leading || !this.current) return;
    this.setLeading(false);
    const { client, namespace, name } = this.options;
    const current = this.current;
    try {
      await withDeadline(this.renewDeadlineMs, new AbortController().signal, this.scheduler, (signal) =>
        this.clearHolder(current, signal).catch(async (error: unknown) => {
          if (!isConflict(error)) throw error;
          // A renewal aborted by the stop may still have reached the server, which moved the Lease on: release the
          // server's copy, if this process still holds it.
          const lease = await client.get<Lease>(LEASES, namespace, name, { signal });
          if (lease.spec?.holderIdentity === this.identity) await this.clearHolder(lease, signal);
        }),
      );
      this.log.info('leader.released');
    } catch (error) {
      this.log.warn({ err: error }, 'leader.release-failed');
    }
  }

  /** Writes `lease` back with no holder and a one-second duration, so that a standby takes over at once. */
  private async clearHolder(lease: Lease, signal: AbortSignal): Promise<void> {
    const at = microTime(this.wallNow());
    await this.options.client.replace<Lease>(
      LEASES,
      this.options.namespace,
      this.options.name,
      {
        ...lease,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: at, renewTime: at },
      },
      { signal },
    );
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    this.options.onLeadingChange?.(leading);
  }

  /**
   * Renews every retry period until stopped; leadership ends `renewDeadlineMs` after the start (the GET) of the last
   * renewal that succeeded (`sentAt` of the acquisition at first). Neither a wait nor an attempt in flight outlasts it.
   */
  private async renewUntilStopped(sentAt: number): Promise<void> {
    const stop = this.stopping.signal;
    let validUntil = sentAt + this.renewDeadlineMs;
    this.holdsUntil = validUntil;
    let failures = 0;
    for (;;) {
      await pause(Math.min(this.retryPeriodMs, validUntil - this.now()), AbortSignal.any([stop, this.wake.signal]), this.scheduler);
      if (stop.aborted) return;
      if (this.wake.signal.aborted) this.wake = new AbortController();
      const attemptAt = this.now();
      if (attemptAt >= validUntil) break;
      this.lastFailure = undefined;
      const renewed = await withDeadline(validUntil - attemptAt, stop, this.scheduler, (signal) => this.tryAcquireOrRenew(signal));
      if (stop.aborted) return;
      if (renewed) {
        validUntil = attemptAt + this.renewDeadlineMs;
        this.holdsUntil = validUntil;
      } else {
        failures += 1;
        const tookMs = this.now() - attemptAt;
        this.log.warn(
          { why: this.lastFailure ?? 'no answer before the deadline', tookMs, leftMs: Math.max(0, validUntil - this.now()) },
          'leader.renew-failed',
        );
        if (this.now() >= validUntil) break;
      }
    }
    this.setLeading(false);
    this.log.error({ renewDeadlineMs: this.renewDeadlineMs, failedAttempts: failures, lastFailure: this.lastFailure }, 'leader.lost');
    this.markLost();
  }

  private now(): number {
    return this.monotonicNow();
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { client, namespace, name } = this.options;
    const logger = this.log;
    const durationSeconds = Math.max(1, Math.round(this.leaseDurationMs / 1000));
    let lease: Lease | undefined;
    try {
      lease = await client.get<Lease>(LEASES, namespace, name, { signal });
    } catch (error) {
      if (!isNotFound(error)) {
        this.reportForbidden('get', error);
        logger.debug({ err: error }, 'leader.get-failed');
        this.lastFailure = `get: ${(error as Error).message}`;
        return false;
      }
    }
    const nowMs = this.now();
    const at = microTime(this.wallNow());
    try {
      if (!lease) {
        this.current = await client.create<Lease>(
          LEASES,
          namespace,
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace, ...this.metadataToWrite(undefined) },
            spec: {
              holderIdentity: this.identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: at,
              renewTime: at,
              leaseTransitions: 0,
            },
          },
          { signal },
        );
        this.observe(this.current, nowMs);
        return true;
      }
      const spec = lease.spec ?? {};
      const record = recordOf(lease);
      if (this.observed?.record !== record) this.observed = { record, at: nowMs };
      const holder = spec.holderIdentity ?? '';
      const heldFor = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
      if (holder !== '' && holder !== this.identity && this.observed.at + heldFor > nowMs) {
        this.lastFailure = `held by ${holder}`;
        return false;
      }
      const mine = holder === this.identity;
      this.current = await client.replace<Lease>(
        LEASES,
        namespace,
        name,
        {
          ...lease,
          metadata: { ...lease.metadata, ...this.metadataToWrite(lease) },
          spec: {
            holderIdentity: this.identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: mine ? (spec.acquireTime ?? at) : at,
            renewTime: at,
            leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
          },
        },
        { signal },
      );
      this.observe(this.current, nowMs);
      return true;
    } catch (error) {
      this.reportForbidden(lease ? 'update' : 'create', error);
      logger.debug({ err: error }, 'leader.write-failed');
      this.lastFailure = `write: ${(error as Error).message}`;
      return false;
    }
  }

  /**
   * Logs a 403 on the Lease once, at error level, in the API server's words (they name the identity, the verb, the
   * Lease and its namespace). Without that permission this process never leads, and its retries would otherwise
   * wait at debug level: a Lease name or namespace that its RBAC does not cover (a Role limits get and update to
   * one name in one namespace) must be seen.
   */
  private reportForbidden(verb: 'get' | 'create' | 'update', error: unknown): void {
    if (!isForbidden(error) || this.forbiddenReported) return;
    this.forbiddenReported = true;
    this.log.error({ verb, problem: (error as Error).message }, 'leader.forbidden');
  }

  /** The labels and annotations of the options over those `lease` has (the others are kept as they are). */
  private metadataToWrite(lease: Lease | undefined): Pick<Lease['metadata'], 'labels' | 'annotations'> {
    const { labels, annotations } = this.options;
    return {
      ...(labels ? { labels: { ...lease?.metadata.labels, ...labels } } : {}),
      ...(annotations ? { annotations: { ...lease?.metadata.annotations, ...annotations() } } : {}),
    };
  }

  private observe(lease: Lease, at: number): void {
    this.observed = { record: recordOf(lease), at };
  }
}
