// What the fault soak answers: its options, the faults it injected, how the operator recovered, and the invariants.
/** Options of {@link runFaultSoak}. */
export interface SoakOptions {
  /** CustomApps created before the stream starts (about as many live throughout). */
  readonly apps: number;
  /** How long the random stream of changes and faults runs. */
  readonly streamMs: number;
  /** User operations per second during the stream. */
  readonly opsPerSecond: number;
  /** SIGKILLs (each followed by a restart) spread over the stream. */
  readonly kills: number;
  readonly seed: number;
  /** How long quiescence may take after the stream. @default 180_000 */
  readonly quiescenceTimeoutMs?: number;
  /** Progress lines. @default none */
  readonly log?: (line: string) => void;
}

/** Every fault injected, by kind. */
export interface FaultCounts {
  /** Requests of the operator answered 500 / 429 + Retry-After by the emulator (2.5% each). */
  readonly failed500: number;
  readonly failed429: number;
  /** Open watches of the operator ended cleanly / reset (TCP) by the emulator. */
  readonly watchesEnded: number;
  readonly watchesReset: number;
  /** Re-watches answered with an in-stream 410 Expired. */
  readonly forced410: number;
  /** Times the whole history was forgotten (every resumed watch gets 410). */
  readonly compactions: number;
  /** Writes by the competing writer on the operator's Deployments and the CustomApps' metadata. */
  readonly competingWrites: number;
  /** 409 Conflicts the operator got (rest_client_requests_total{code="409"}, summed over its processes). */
  readonly conflicts409: number;
  readonly kills: number;
}

/** How the operator coped, from its metrics and logs (summed over its processes). */
export interface Recoveries {
  readonly watchRetries: number;
  readonly relists: number;
  readonly reconcileErrors: number;
  readonly workqueueRetries: number;
  readonly reconciles: number;
  /** Processes that exited on their own after failing to renew the Lease (by design: exit 1, restarted). */
  readonly leadershipLosses: number;
  /** Processes that exited on their own for any other reason. */
  readonly crashes: number;
}

/** The invariants after quiescence; every list must be empty. */
export interface Invariants {
  readonly liveApps: number;
  readonly deletedApps: number;
  /** Live CustomApps whose Deployment, Service or status does not match the latest spec, ConfigMap and Secret. */
  readonly lostUpdates: readonly string[];
  /** CustomApps with a deletionTimestamp still present. */
  readonly stuckFinalizers: readonly string[];
  /** Deleted CustomApps whose Deployment or Service still exists. */
  readonly orphans: readonly string[];
  /** Dependency watches (operator metrics and API server) that differ from the referenced set. */
  readonly watchMismatches: readonly string[];
  /** Open ConfigMap and Secret watches of the operator, as the API server counts them and as the operator does. */
  readonly openWatches: { readonly server: number; readonly operator: number };
}

export interface SoakReport {
  readonly seed: number;
  readonly options: Omit<SoakOptions, 'log'>;
  readonly namespaces: number;
  readonly operations: Readonly<Record<string, number>>;
  readonly faults: FaultCounts;
  readonly recoveries: Recoveries;
  readonly invariants: Invariants;
  /** Violations found when the stream stopped, before quiescence (shows that the checks see a cluster in motion). */
  readonly violationsAtStreamEnd: number;
  /** Errors of the soak's own requests other than the races it expects (404, 409): none in a valid run. */
  readonly driverErrors: readonly string[];
  readonly timings: {
    readonly setupMs: number;
    readonly coldConvergenceMs: number;
    readonly streamMs: number;
    readonly quiescenceMs: number;
  };
}

/** How many invariants are broken, over all kinds. */
export function violations(invariants: Invariants): number {
  return invariants.lostUpdates.length + invariants.stuckFinalizers.length + invariants.orphans.length + invariants.watchMismatches.length;
}

/** True when no invariant is broken. */
export function clean(invariants: Invariants): boolean {
  return violations(invariants) === 0;
}
