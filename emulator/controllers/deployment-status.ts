// Simulated Deployment status, in the spirit of kwok: the emulator runs no ReplicaSets, pods or kubelet, so this writes
// the status a Deployment controller would report if every pod became Ready `readyAfterMs` after each spec change.
import { createHash } from 'node:crypto';
import type { Api } from '../api.js';
import type { ControllerQueue } from './queue.js';
import { StoreController } from './store-controller.js';
import { deepCopy, type KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { Collection, StoreEvent } from '../store.js';

/** Options of {@link DeploymentStatusSimulator}. */
export interface DeploymentStatusOptions {
  /**
   * How long after a Deployment's creation or spec change all its replicas count as updated, ready and available.
   * @default 1000
   */
  readonly readyAfterMs?: number;
}

/** The timer functions the simulator uses (injectable for tests). */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastUpdateTime: string;
  lastTransitionTime: string;
}

/** Observed, with the template changed (a rollout) or not (a scale); or every replica ready. */
type Phase = 'rollingOut' | 'scaling' | 'ready';

/** The alphabet of Kubernetes' rand.SafeEncodeString, which pod-template-hash values use. */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * A stand-in for the pod-template-hash in the ReplicaSet name the conditions mention: stable for a template, in the
 * apiserver's alphabet, but not the controller's FNV hash of the Go struct (so the name differs from a cluster's).
 */
export function simulatedTemplateHash(template: unknown): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(template ?? {}))
    .digest();
  return [...digest.subarray(0, 10)].map((byte) => SAFE_ALPHABET[byte % SAFE_ALPHABET.length]).join('');
}

/**
 * The controller's SetDeploymentCondition: a condition whose status and reason are unchanged stays as it is (message
 * and times included); otherwise it replaces the old one at the end of the list, keeping the transition time when
 * only the reason changed.
 */
function setCondition(conditions: readonly Condition[], next: Condition): Condition[] {
  const current = conditions.find((c) => c.type === next.type);
  if (current && current.status === next.status && current.reason === next.reason) return [...conditions];
  const condition = current?.status === next.status ? { ...next, lastTransitionTime: current.lastTransitionTime } : next;
  return [...conditions.filter((c) => c.type !== next.type), condition];
}

/** maxUnavailable resolved against the replicas as the controller does (a percentage rounds down). */
function maxUnavailable(deployment: KubeObject, replicas: number): number {
  const spec = (deployment as { spec?: any }).spec ?? {};
  if (spec.strategy?.type === 'Recreate') return 0;
  const value = spec.strategy?.rollingUpdate?.maxUnavailable ?? '25%';
  if (typeof value === 'number') return Math.min(value, replicas);
  const percent = /^(\d+)%$/.exec(String(value));
  return percent ? Math.floor((replicas * Number(percent[1])) / 100) : 0;
}

/**
 * Writes Deployment status as the controller would with pods that become Ready after a delay. On each new generation
 * it writes at once `observedGeneration`, `updatedReplicas` at the desired count, `Progressing` (ReplicaSetUpdated)
 * and `Available` by the maxUnavailable rule, with the replicas that were available still ready and available: on a
 * template change they are the old pods, which run beside the new ones (`replicas` counts both) until the new ones are
 * ready; on a scale they are the pods that were there. `readyAfterMs` later every replica is ready and available and
 * the old ones are gone, `Available` is True (MinimumReplicasAvailable) and `Progressing` says NewReplicaSetAvailable,
 * so `kubectl rollout status` waits, then completes. Not simulated: pods and ReplicaSets themselves, maxSurge, paused
 * Deployments, progress deadlines, `minReadySeconds`, and pods that fail.
 */
export class DeploymentStatusSimulator extends StoreController {
  /** "namespace/name" → the pending "ready" timer. */
  private readonly pending = new Map<string, unknown>();
  private stopped = false;
  private readonly readyAfterMs: number;

  constructor(
    api: Api,
    private readonly deployments: ResourceType,
    queue: ControllerQueue,
    private readonly now: () => Date,
    options: DeploymentStatusOptions = {},
    private readonly timers: Timers = realTimers,
  ) {
    super(api, queue);
    this.readyAfterMs = options.readyAfterMs ?? 1000;
  }

  /** Cancels the pending timers; nothing is written afterwards. */
  stop(): void {
    this.stopped = true;
    for (const handle of this.pending.values()) this.timers.clearTimeout(handle);
    this.pending.clear();
  }

  protected observe(collection: Collection, event: StoreEvent): void {
    if (this.stopped || collection.name !== this.deployments.storage) return;
    if (event.type === 'DELETED') {
      this.cancel(event.key);
      return;
    }
    const { metadata } = event.object;
    const observed = (event.object as { status?: { observedGeneration?: number } }).status?.observedGeneration;
    if (metadata.deletionTimestamp !== undefined || observed === metadata.generation) return;
    const generation = metadata.generation;
    const template = (object: KubeObject | undefined) => JSON.stringify((object as { spec?: { template?: unknown } })?.spec?.template);
    const rollout = event.previous !== undefined && template(event.previous) !== template(event.object);
    this.queue.enqueue('deployment-status', () => this.write(event.key, generation, rollout ? 'rollingOut' : 'scaling'));
    this.cancel(event.key);
    this.pending.set(
      event.key,
      this.timers.setTimeout(() => {
        this.pending.delete(event.key);
        this.write(event.key, generation, 'ready');
      }, this.readyAfterMs),
    );
  }

  private cancel(key: string): void {
    const handle = this.pending.get(key);
    if (handle === undefined) return;
    this.timers.clearTimeout(handle);
    this.pending.delete(key);
  }

  private write(key: string, generation: number | undefined, phase: Phase): void {
    if (this.stopped) return;
    const stored = this.api.store.collection(this.deployments.storage).objects.get(key)?.object;
    if (stored === undefined || stored.metadata.generation !== generation || stored.metadata.deletionTimestamp !== undefined) return;
    const next = deepCopy(stored) as KubeObject & { spec?: any; status?: any };
    next.status = this.status(next, phase);
    this.api.writeAsController(this.deployments, next, { manager: 'kube-controller-manager', subresource: 'status' });
  }

  private status(deployment: KubeObject & { spec?: any; status?: any }, phase: Phase): Record<string, unknown> {
    const replicas: number = deployment.spec?.replicas ?? 1;
    const previous = deployment.status ?? {};
    // Ready and available replicas: all once ready; during a rollout the old ones (which keep serving); while scaling
    // the ones that were there.
    const wasAvailable = Math.min(previous.availableReplicas ?? 0, phase === 'rollingOut' ? (previous.replicas ?? 0) : replicas);
    const wasReady = Math.min(previous.readyReplicas ?? 0, phase === 'rollingOut' ? (previous.replicas ?? 0) : replicas);
    const available = phase === 'ready' ? replicas : wasAvailable;
    const ready = phase === 'ready' ? replicas : wasReady;
    // During a rollout the old replicas still run beside the new ones.
    const total = phase === 'rollingOut' ? replicas + wasAvailable : replicas;
    const replicaSet = `${deployment.metadata.name}-${simulatedTemplateHash(deployment.spec?.template)}`;
    const minimum = available >= replicas - maxUnavailable(deployment, replicas);
    const now = this.now()
      .toISOString()
      .replace(/\.\d+Z$/, 'Z');
    const fresh = (type: string, status: Condition['status'], reason: string, message: string): Condition => ({
      type,
      status,
      lastUpdateTime: now,
      lastTransitionTime: now,
      reason,
      message,
    });
    let conditions: Condition[] = previous.conditions ?? [];
    // As the controller's calculateStatus, then syncRolloutStatus (a scale alone leaves Progressing as it was).
    conditions = minimum
      ? setCondition(conditions, fresh('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'))
      : setCondition(
          conditions,
          fresh('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'),
        );
    if (phase === 'ready') {
      const message = `ReplicaSet "${replicaSet}" has successfully progressed.`;
      conditions = setCondition(conditions, fresh('Progressing', 'True', 'NewReplicaSetAvailable', message));
    } else if (phase === 'rollingOut' || !conditions.some((c) => c.type === 'Progressing')) {
      // ReplicaSetUpdated is always written anew (moved last), keeping the transition time of a True condition.
      const before = conditions.find((c) => c.type === 'Progressing');
      const updated = fresh('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${replicaSet}" is progressing.`);
      if (before?.status === 'True') updated.lastTransitionTime = before.lastTransitionTime;
      conditions = [...conditions.filter((c) => c.type !== 'Progressing'), updated];
    }
    return {
      observedGeneration: deployment.metadata.generation,
      replicas: total,
      updatedReplicas: replicas,
      ...(ready > 0 ? { readyReplicas: ready } : {}),
      ...(available > 0 ? { availableReplicas: available } : {}),
      ...(replicas - available > 0 ? { unavailableReplicas: replicas - available } : {}),
      conditions,
    };
  }
}
