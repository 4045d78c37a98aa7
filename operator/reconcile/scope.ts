// What the steps of one reconcile share: the world it acts on, the request, the CustomApp, and how to write and report.
import { API_VERSION, KIND } from '../../api/customapp.js';
import type { WritableCache } from '../cache/fresh-cache.js';
import type { Request } from '../controller/reconciler.js';
import type { CustomApp } from '../customapp/custom-app.js';
import { isControlledBy } from '../customapp/labels.js';
import type { DependencySource } from '../dependencies/source.js';
import type { EventRecorder, EventType } from '../events/recorder.js';
import type { RolloutGovernance } from '../governance/governance.js';
import type { WriteClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import type { Deployment, KubeObject, Service } from '../kube/objects.js';
import { type Resource, resourceLabel } from '../kube/resources.js';
import { rfc3339 } from '../kube/time.js';

export type { WritableCache } from '../cache/fresh-cache.js';

/** Everything the reconcile reads and writes through. */
export interface ReconcileWorld {
  readonly client: WriteClient;
  readonly apps: WritableCache<CustomApp>;
  readonly deployments: WritableCache<Deployment>;
  readonly services: WritableCache<Service>;
  /** What tells the reconcile about ConfigMaps and Secrets. The reconcile knows nothing else of them. */
  readonly dependencies: DependencySource;
  readonly recorder: EventRecorder;
  /** When a rollout caused by ConfigMap or Secret content may start: the budget, the flap breakers, pause and debounce. */
  readonly governance: RolloutGovernance;
  /** Wall clock, for condition transition times. */
  readonly now: () => Date;
  /** Told how long each step of a reconcile took (`customapp_reconcile_step_seconds`). @default nothing */
  readonly steps?: StepTimer;
  /**
   * True while other keys wait for a worker. A reconcile that rolled an existing Deployment then leaves its status
   * write for a second pass, queued behind them: in a fan-out every Deployment is written before any status.
   * @default never busy
   */
  readonly busy?: () => boolean;
}

/** Receives the duration of one reconcile step, in seconds. */
export type StepTimer = (step: string, seconds: number) => void;

/** The verbs a step writes with. */
export type WriteVerb = 'create' | 'update' | 'patch' | 'delete';

/**
 * One reconcile of one CustomApp, as its steps see it: the world, the request (key, trace id, logger) and the
 * CustomApp as cached when the reconcile began (with the finalizer once added). Writes go through {@link write},
 * which logs each with the trace id, and Events through {@link event}.
 */
export class ReconcileScope {
  constructor(
    readonly world: ReconcileWorld,
    readonly request: Request,
    public app: CustomApp,
  ) {}

  get namespace(): string {
    return this.app.metadata.namespace!;
  }

  get name(): string {
    return this.app.metadata.name!;
  }

  /**
   * True when the CustomApp already has a status: it is not the first reconcile of a new CustomApp. A child created now
   * was deleted, or waited for a missing reference, or for a port added to the spec, and a `Created` Event says so; a new
   * CustomApp's first Deployment and Service get none (its status and `kubectl get` show them; one Event per new
   * CustomApp was a third of the writes of a cold start).
   */
  get hadStatus(): boolean {
    return this.app.status?.observedGeneration !== undefined || (this.app.status?.conditions?.length ?? 0) > 0;
  }

  /** Now as metav1.Time, for conditions. */
  timestamp(): string {
    return rfc3339(this.world.now());
  }

  /** Runs one API write and logs it (`write`: verb, resource, duration or failure, and `fields`). */
  async write<T>(verb: WriteVerb, resource: Resource, call: () => Promise<T>, fields: Record<string, unknown> = {}): Promise<T> {
    const started = performance.now();
    try {
      const result = await call();
      const subresource = typeof fields.subresource === 'string' ? `/${fields.subresource}` : '';
      this.world.steps?.(`write ${verb} ${resourceLabel(resource)}${subresource}`, (performance.now() - started) / 1000);
      this.request.log.info(
        { verb, resource: resourceLabel(resource), durationMs: Math.round((performance.now() - started) * 100) / 100, ...fields },
        'write',
      );
      return result;
    } catch (error) {
      this.request.log.info({ verb, resource: resourceLabel(resource), failed: (error as Error).message, ...fields }, 'write');
      throw error;
    }
  }

  /**
   * Posts an Event on the CustomApp: written asynchronously, in order, off the reconcile's critical path (the
   * recorder logs its own failures, and an Event never fails or delays a reconcile).
   */
  event(type: EventType, reason: string, message: string): void {
    const { metadata } = this.app;
    const involved = {
      apiVersion: API_VERSION,
      kind: KIND,
      name: metadata.name!,
      namespace: metadata.namespace!,
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
    };
    this.world.recorder.post(involved, type, reason, message, this.request.log);
  }

  /** Runs one step of the reconcile and reports its duration (see {@link ReconcileWorld.steps}). */
  async step<T>(name: string, run: () => Promise<T> | T): Promise<T> {
    if (!this.world.steps) return run();
    const started = performance.now();
    try {
      return await run();
    } finally {
      this.world.steps(name, (performance.now() - started) / 1000);
    }
  }

  /**
   * GETs the child named after the CustomApp that the cache does not have although a create said it exists: a
   * creation of ours whose answer was lost, one the informer has not delivered yet, an object of ours whose labels
   * were edited out of the informer's selector, or a foreign object. The ownerReference tells them apart, not the
   * labels or the cache. A 404 (gone meanwhile) rethrows `conflict`, the AlreadyExists, so that the key is retried.
   */
  async uncached<T extends KubeObject>(resource: Resource, conflict: unknown): Promise<T> {
    try {
      const found = await this.world.client.get<T>(resource, this.namespace, this.name);
      this.request.log.info({ resource: resourceLabel(resource), controlled: isControlledBy(found, this.app) }, 'uncached object read');
      return found;
    } catch (error) {
      if (isNotFound(error)) throw conflict;
      throw error;
    }
  }
}

/**
 * The fields compared with a live child: metadata and spec. Not apiVersion and kind, which list answers leave out
 * of their items (a cache filled by a relist has none).
 */
export function ownedFields<T extends KubeObject & { spec: unknown }>(object: T): Pick<T, 'metadata' | 'spec'> {
  return { metadata: object.metadata, spec: object.spec };
}
