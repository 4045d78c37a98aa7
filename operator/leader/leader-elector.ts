// Leader election on a coordination.k8s.io/v1 Lease with get/create/update only, as client-go's leaderelection does it.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient } from '../kube/client.js';
import { isConflict, isNotFound } from '../kube/errors.js';
import { LEASES } from '../kube/resources.js';
import type { Logger } from '../log.js';
import type { Lease } from '../objects.js';

/** Options of {@link LeaderElector}. Durations follow controller-runtime's defaults. */
export interface LeaderElectionOptions {
  readonly client: KubeClient;
  /** Namespace of the Lease. */
  readonly namespace: string;
  /** Name of the Lease. */
  readonly name: string;
  /** This process's identity in `holderIdentity`. @default `<hostname>_<uuid>` (controller-runtime's) */
  readonly identity?: string;
  /** How long a non-leader waits after the last observed renewal before taking over. @default 15_000 */
  readonly leaseDurationMs?: number;
  /** How long the leader keeps retrying a failed renewal before it gives up leadership. @default 10_000 */
  readonly renewDeadlineMs?: number;
  /** The interval between attempts, to acquire or to renew. @default 2_000 */
  readonly retryPeriodMs?: number;
  readonly logger: Logger;
  /** Wall clock in ms (renewTime and the local observation of others' renewals). @default Date.now */
  readonly now?: () => number;
  /** Called with true when this process starts leading, false when it stops. @default none */
  readonly onLeadingChange?: (leading: boolean) => void;
}

/** A MicroTime: RFC 3339 with six fractional digits, as the Lease fields require. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** client-go's wait.Jitter with JitterFactor 1.2: a delay in [d, 2.2 d). */
function jittered(ms: number): number {
  return ms * (1 + 1.2 * Math.random());
}

/** The leader-election record of a Lease, as a comparable string: a change means its holder is alive. */
function recordOf(lease: Lease): string {
  const spec = lease.spec ?? {};
  return JSON.stringify([spec.holderIdentity, spec.leaseDurationSeconds, spec.acquireTime, spec.renewTime, spec.leaseTransitions]);
}

/** Sleeps, or returns early (false) when `signal` aborts. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/**
 * One candidate for a Lease. `acquire` retries every retry period until this process holds the Lease (a free
 * Lease, an expired one, or one released by its holder), then renews it in the background every retry period.
 * If renewing fails for longer than the renew deadline, leadership is lost: `lost` resolves and the process must
 * stop reconciling (controller-runtime exits). `release` stops renewing and clears `holderIdentity`, so another
 * candidate takes over at once instead of after the lease duration.
 *
 * Expiry is judged on this process's clock from when it last saw the Lease record change (client-go's
 * `observedTime`), never by comparing the holder's `renewTime` with the local clock, so clock skew between
 * candidates does not matter.
 */
export class LeaderElector {
  readonly identity: string;
  /** Resolves when leadership, once held, is lost (not when it is released). */
  readonly lost: Promise<void>;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly stopping = new AbortController();
  private markLost!: () => void;
  private observed?: { readonly record: string; readonly at: number };
  private current?: Lease;
  private leading = false;
  private renewing?: Promise<void>;

  constructor(private readonly options: LeaderElectionOptions) {
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.now = options.now ?? Date.now;
    this.log = options.logger.child({ lease: `${options.namespace}/${options.name}`, identity: this.identity });
    this.lost = new Promise((resolve) => {
      this.markLost = resolve;
    });
  }

  get isLeader(): boolean {
    return this.leading;
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
      if (await this.tryAcquireOrRenew(stop)) {
        this.setLeading(true);
        log.info('leader.acquired');
        this.renewing = this.renewUntilStopped();
        return true;
      }
      if (!(await pause(jittered(this.retryPeriodMs), stop))) break;
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
    const signal = AbortSignal.timeout(this.renewDeadlineMs);
    try {
      await this.clearHolder(this.current, signal).catch(async (error: unknown) => {
        if (!isConflict(error)) throw error;
        // A renewal aborted by the stop may still have reached the server, which moved the Lease on: release the
        // server's copy, if this process still holds it.
        const lease = await client.get<Lease>(LEASES, namespace, name, { signal });
        if (lease.spec?.holderIdentity === this.identity) await this.clearHolder(lease, signal);
      });
      this.log.info('leader.released');
    } catch (error) {
      this.log.warn({ err: error }, 'leader.release-failed');
    }
  }

  /** Writes `lease` back with no holder and a one-second duration, so that a standby takes over at once. */
  private async clearHolder(lease: Lease, signal: AbortSignal): Promise<void> {
    const at = microTime(this.now());
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

  private async renewUntilStopped(): Promise<void> {
    const stop = this.stopping.signal;
    let renewedAt = this.now();
    while (await pause(this.retryPeriodMs, stop)) {
      const attempt = AbortSignal.any([stop, AbortSignal.timeout(Math.max(1, this.renewDeadlineMs - (this.now() - renewedAt)))]);
      if (await this.tryAcquireOrRenew(attempt)) {
        renewedAt = this.now();
        continue;
      }
      if (stop.aborted) return;
      if (this.now() - renewedAt >= this.renewDeadlineMs) {
        this.setLeading(false);
        this.log.error('leader.lost');
        this.markLost();
        return;
      }
    }
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
        logger.debug({ err: error }, 'leader.get-failed');
        return false;
      }
    }
    const nowMs = this.now();
    const at = microTime(nowMs);
    try {
      if (!lease) {
        this.current = await client.create<Lease>(
          LEASES,
          namespace,
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
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
      if (holder !== '' && holder !== this.identity && this.observed.at + heldFor > nowMs) return false;
      const mine = holder === this.identity;
      this.current = await client.replace<Lease>(
        LEASES,
        namespace,
        name,
        {
          ...lease,
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
      logger.debug({ err: error }, 'leader.write-failed');
      return false;
    }
  }

  private observe(lease: Lease, at: number): void {
    this.observed = { record: recordOf(lease), at };
  }
}
