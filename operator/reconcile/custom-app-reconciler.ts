// The CustomApp reconcile: finalizer, dependency use and handoff, Deployment and Service, status and Events.
import { API_VERSION, FIELD_MANAGER, FINALIZER, KIND } from '../../infra/customapp-api.js';
import type { CacheReader } from '../cache/fresh-cache.js';
import type { Reconciler, Request, Result } from '../controller/reconciler.js';
import { STATUS_FIELDS, type CustomApp, type CustomAppStatus } from '../customapp/custom-app.js';
import type { DependencyKind, DependencyRef, DependencySource } from '../deps/source.js';
import type { EventRecorder, EventType, InvolvedObject } from '../events/recorder.js';
import type { WriteClient } from '../kube/client.js';
import type { KubeObject } from '../kube/objects.js';
import { ApiError, isAlreadyExists, isNotFound } from '../kube/errors.js';
import { DEPLOYMENTS, SERVICES, resourceLabel, type Resource } from '../kube/resources.js';
import { CUSTOM_APPS } from '../customapp/custom-app.js';
import type { Logger } from '../log.js';
import type { Deployment, Service } from '../kube/objects.js';
import { findCondition } from './conditions.js';
import { DEPLOYMENT_OPTIONAL_KEYS, desiredDeployment, type RolloutDependency } from './desired-deployment.js';
import { desiredService, serviceNameProblem } from './desired-service.js';
import { driftPaths, withDesired } from './drift.js';
import { isControlledBy } from '../customapp/labels.js';
import { desiredStatus, failedStatus, REASONS, sameStatus, type DependencyView, type DeploymentView, type ServiceView } from './status.js';

/** A cache the reconcile reads, which also learns from the reconcile's own writes. */
export interface WritableCache<T extends KubeObject> extends CacheReader<T> {
  /** Learns the API's answer to a write (`created` for a create). */
  wrote(object: T, created?: boolean): void;
  forget(key: string): void;
}

/** Options of {@link CustomAppReconciler}. */
export interface CustomAppReconcilerOptions {
  readonly client: WriteClient;
  readonly apps: WritableCache<CustomApp>;
  readonly deployments: WritableCache<Deployment>;
  readonly services: WritableCache<Service>;
  /** What tells the reconcile about ConfigMaps and Secrets. The reconcile knows nothing else of them. */
  readonly dependencies: DependencySource;
  readonly recorder: EventRecorder;
  /** Wall clock, for condition transition times. @default () => new Date() */
  readonly now?: () => Date;
  /**
   * How often a CustomApp whose Deployment name is taken by an object it does not own is looked at again (no watch
   * sees an unlabelled foreign Deployment). @default 30_000
   */
  readonly notOwnedRetryMs?: number;
}

/** Event reasons, on the CustomApp. */
export const EVENT_REASONS = {
  created: 'Created',
  updated: 'Updated',
  deleted: 'Deleted',
  rolloutTriggered: 'RolloutTriggered',
  rolloutHeld: 'RolloutHeld',
  deploymentNotOwned: 'DeploymentNotOwned',
  deploymentInvalid: 'DeploymentInvalid',
  serviceNotOwned: 'ServiceNotOwned',
  serviceNameInvalid: 'ServiceNameInvalid',
  reconcileError: 'ReconcileError',
} as const;

/** True for 422 Invalid: the object was refused as it is. */
function isInvalid(error: unknown): boolean {
  return error instanceof ApiError && error.statusCode === 422;
}

function ref(kind: DependencyKind, namespace: string, name: string): DependencyRef {
  return { kind, namespace, name };
}

function involved(app: CustomApp): InvolvedObject {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: app.metadata.name!,
    namespace: app.metadata.namespace!,
    uid: app.metadata.uid,
    resourceVersion: app.metadata.resourceVersion,
  };
}

/**
 * The fields compared with the live object: metadata and spec. Not apiVersion and kind, which list answers leave
 * out of their items (a cache filled by a relist has none).
 */
function ownedFields<T extends KubeObject & { spec: unknown }>(object: T): Pick<T, 'metadata' | 'spec'> {
  return { metadata: object.metadata, spec: object.spec };
}

function shortHash(hash: string | undefined): string {
  return hash ? hash.slice(0, 12) : 'none';
}

/**
 * Reconciles one CustomApp key from caches only (no GET: the CustomApp, its Deployment and Service come from the
 * informers, ConfigMaps and Secrets from the {@link DependencySource}), in this order:
 *
 * 1. **Gone** from the cache: release its dependencies (idempotent) and stop.
 * 2. **Being deleted**: release its dependencies, then remove the finalizer; the Deployment and Service go by
 *    garbage collection (their controller ownerReference).
 * 3. **Finalizer**: add it if missing, before anything is acquired.
 * 4. **Dependencies**: `use` the spec's references, plus the ones in `status.observed*` while a reference change
 *    is being handed off. A reference not synced yet ends the reconcile: its first `changes` emission queues the
 *    key again. A missing one **holds** the rollout (condition, Event); its creation queues the key again.
 * 5. **Deployment**: create it, or update it when a field the operator sets differs (no write otherwise, so a
 *    restart or a metadata-only edit rolls nothing). A Deployment of that name not controlled by this CustomApp is
 *    never touched (condition `DeploymentNotOwned`, Event). Then the **Service** (when `spec.port` is set).
 * 6. **Status**, only when it changed; then `use` the spec's references alone, which releases the old ones of a
 *    handoff only after the new ones were rolled out and recorded in `status.observed*`.
 *
 * A 409 from any write propagates; the controller requeues the key with the rate limiter.
 */
export class CustomAppReconciler implements Reconciler {
  private readonly now: () => Date;
  private readonly notOwnedRetryMs: number;

  constructor(private readonly options: CustomAppReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
    this.notOwnedRetryMs = options.notOwnedRetryMs ?? 30_000;
  }

  async reconcile(request: Request): Promise<Result> {
    const { apps, dependencies } = this.options;
    const cached = apps.get(request.key);
    if (!cached) {
      dependencies.release(request.key);
      request.log.debug('not in cache: released');
      return {};
    }
    if (cached.metadata.deletionTimestamp) return this.finalize(cached, request);
    const app = cached.metadata.finalizers?.includes(FINALIZER) ? cached : await this.addFinalizer(cached, request);

    const namespace = app.metadata.namespace!;
    const status = app.status ?? {};
    const specRefs = this.refsOf(namespace, app.spec.configMapName, app.spec.secretName);
    const handoffRefs = [
      ...(status.observedConfigMapName && status.observedConfigMapName !== app.spec.configMapName
        ? [ref('ConfigMap', namespace, status.observedConfigMapName)]
        : []),
      ...(status.observedSecretName && status.observedSecretName !== app.spec.secretName
        ? [ref('Secret', namespace, status.observedSecretName)]
        : []),
    ];
    dependencies.use(request.key, [...specRefs, ...handoffRefs]);

    const configMap = await this.view('ConfigMap', namespace, app.spec.configMapName);
    const secret = await this.view('Secret', namespace, app.spec.secretName);
    if (configMap === 'pending' || secret === 'pending') {
      request.log.debug({ configMap: app.spec.configMapName, secret: app.spec.secretName }, 'waiting for dependency sync');
      return {};
    }

    const held = configMap.phase === 'missing' || secret.phase === 'missing';
    let rollout: Awaited<ReturnType<CustomAppReconciler['reconcileDeployment']>>;
    let service: ServiceView;
    try {
      rollout = await this.reconcileDeployment(app, held, configMap, secret, request);
      service = await this.reconcileService(app, request);
    } catch (error) {
      await this.reportFailure(app, error, request);
      throw error;
    }
    const next = desiredStatus({
      app,
      configMap,
      secret,
      deployment: rollout.view,
      rolledOut: rollout.rolledOut,
      service,
      now: this.now()
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z'),
    });
    if (held && findCondition(status.conditions, 'Ready')?.message !== findCondition(next.conditions, 'Ready')?.message) {
      await this.event(app, 'Warning', EVENT_REASONS.rolloutHeld, findCondition(next.conditions, 'Ready')!.message, request.log);
    }
    if (!sameStatus(status, next)) await this.writeStatus(app, next, request);
    if (rollout.rolledOut && handoffRefs.length > 0) {
      dependencies.use(request.key, specRefs);
      request.log.info({ released: handoffRefs.map((handed) => `${handed.kind}/${handed.name}`) }, 'handoff complete');
    }
    // No watch sees a foreign (unlabelled) Deployment or Service go away: look again later.
    return rollout.view.phase === 'notOwned' || service.phase === 'notOwned' ? { requeueAfterMs: this.notOwnedRetryMs } : {};
  }

  private refsOf(namespace: string, configMapName: string | undefined, secretName: string | undefined): DependencyRef[] {
    return [
      ...(configMapName ? [ref('ConfigMap', namespace, configMapName)] : []),
      ...(secretName ? [ref('Secret', namespace, secretName)] : []),
    ];
  }

  /** What the dependency source knows of a referenced object; 'pending' until it is synced. */
  private async view(kind: DependencyKind, namespace: string, name: string | undefined): Promise<DependencyView | 'pending'> {
    if (!name) return { phase: 'unreferenced' };
    const state = await this.options.dependencies.state(ref(kind, namespace, name));
    if (!state) return 'pending';
    return state.exists ? { phase: 'present', name, hash: state.hash } : { phase: 'missing', name };
  }

  private async reconcileDeployment(
    app: CustomApp,
    held: boolean,
    configMap: DependencyView,
    secret: DependencyView,
    request: Request,
  ): Promise<{ view: DeploymentView; rolledOut?: { configMap?: RolloutDependency; secret?: RolloutDependency } }> {
    const { deployments, client } = this.options;
    let live = deployments.get(request.key);
    if (live && !isControlledBy(live, app)) return this.notOwned(app, 'Deployment', request);
    if (held) return { view: live ? { phase: 'owned', deployment: live } : { phase: 'absent' } };
    const rolledOut = {
      configMap: configMap.phase === 'present' ? { name: configMap.name, hash: configMap.hash } : undefined,
      secret: secret.phase === 'present' ? { name: secret.name, hash: secret.hash } : undefined,
    };
    const desired = desiredDeployment({ app, ...rolledOut });
    if (!live) {
      try {
        const created = await this.write(request, 'create', DEPLOYMENTS, () =>
          client.create<Deployment>(DEPLOYMENTS, app.metadata.namespace, desired, { fieldManager: FIELD_MANAGER }),
        );
        deployments.wrote(created, true);
        await this.event(
          app,
          'Normal',
          EVENT_REASONS.created,
          `Created Deployment "${desired.metadata.name}" (config ${shortHash(rolledOut.configMap?.hash)}, secret ${shortHash(rolledOut.secret?.hash)})`,
          request.log,
        );
        return { view: { phase: 'owned', deployment: created }, rolledOut };
      } catch (error) {
        if (isInvalid(error)) return this.rejected(app, error, request);
        if (!isAlreadyExists(error)) throw error;
        live = await this.uncached<Deployment>(DEPLOYMENTS, app, request, error);
        if (!isControlledBy(live, app)) return this.notOwned(app, 'Deployment', request);
        // Ours, but out of the informer's sight (its labels were edited): the update below restores them.
        deployments.wrote(live, true);
      }
    }
    const drift = driftPaths(live, ownedFields(desired), DEPLOYMENT_OPTIONAL_KEYS);
    if (drift.length === 0) return { view: { phase: 'owned', deployment: live }, rolledOut };
    let updated: Deployment;
    try {
      updated = await this.write(
        request,
        'update',
        DEPLOYMENTS,
        () =>
          client.replace<Deployment>(
            DEPLOYMENTS,
            app.metadata.namespace,
            desired.metadata.name!,
            withDesired(live, desired, DEPLOYMENT_OPTIONAL_KEYS),
            { fieldManager: FIELD_MANAGER },
          ),
        { drift },
      );
    } catch (error) {
      if (isInvalid(error)) return this.rejected(app, error, request);
      throw error;
    }
    deployments.wrote(updated);
    const rolled = drift.some((path) => path.startsWith('spec.template.'));
    if (rolled) {
      const before = live.spec.template.metadata?.annotations ?? {};
      const after = desired.spec.template.metadata?.annotations ?? {};
      const changes = Object.keys({ ...before, ...after })
        .filter((key) => before[key] !== after[key])
        .map((key) => `${key.split('/')[1]} ${shortHash(before[key])}→${shortHash(after[key])}`);
      const what = drift
        .filter((path) => !path.startsWith('spec.template.metadata.annotations'))
        .map((path) => path.replace(/^spec\.template\.spec\./, ''));
      await this.event(
        app,
        'Normal',
        EVENT_REASONS.rolloutTriggered,
        `Rolling out Deployment "${desired.metadata.name}": ${[...changes, ...what].join(', ')}`,
        request.log,
      );
    } else {
      await this.event(
        app,
        'Normal',
        EVENT_REASONS.updated,
        `Updated Deployment "${desired.metadata.name}": ${drift.join(', ')}`,
        request.log,
      );
    }
    return { view: { phase: 'owned', deployment: updated }, rolledOut };
  }

  /** A 422 Invalid: retrying cannot help until the spec changes (which queues the key again). */
  private async rejected(app: CustomApp, error: unknown, request: Request): Promise<{ view: DeploymentView }> {
    const message = `the API server rejected Deployment "${app.metadata.name}": ${(error as ApiError).status?.message ?? (error as Error).message}`;
    const previous = findCondition(app.status?.conditions, 'DeploymentAvailable');
    if (previous?.reason !== REASONS.deploymentInvalid || previous.message !== message) {
      await this.event(app, 'Warning', EVENT_REASONS.deploymentInvalid, message, request.log);
    }
    return { view: { phase: 'invalid', message } };
  }

  private async notOwned(app: CustomApp, kind: 'Deployment', request: Request): Promise<{ view: DeploymentView }> {
    const previous = findCondition(app.status?.conditions, 'DeploymentAvailable');
    if (previous?.reason !== REASONS.deploymentNotOwned) {
      await this.event(
        app,
        'Warning',
        EVENT_REASONS.deploymentNotOwned,
        `${kind} "${app.metadata.name}" exists and is not controlled by this CustomApp; it is left alone`,
        request.log,
      );
    }
    return { view: { phase: 'notOwned' } };
  }

  /**
   * Creates, updates or deletes the Service, and answers what became of it. A name that cannot carry a Service, and
   * a Service of that name that this CustomApp does not control, are each reported by one Event when they begin
   * (the `ServiceAvailable` condition remembers them), not at every reconcile.
   */
  private async reconcileService(app: CustomApp, request: Request): Promise<ServiceView> {
    const { services, client } = this.options;
    const name = app.metadata.name!;
    const previous = findCondition(app.status?.conditions, 'ServiceAvailable');
    const problem = app.spec.port ? serviceNameProblem(name) : undefined;
    if (problem) {
      if (previous?.reason !== REASONS.serviceNameInvalid)
        await this.event(app, 'Warning', EVENT_REASONS.serviceNameInvalid, problem, request.log);
      return { phase: 'invalidName', message: problem };
    }
    const desired = desiredService(app);
    let live = services.get(request.key);
    const notOwned = async (): Promise<ServiceView> => {
      if (previous?.reason !== REASONS.serviceNotOwned) {
        await this.event(
          app,
          'Warning',
          EVENT_REASONS.serviceNotOwned,
          `Service "${name}" exists and is not controlled by this CustomApp; it is left alone`,
          request.log,
        );
      }
      return { phase: 'notOwned' };
    };
    if (live && !isControlledBy(live, app)) return desired ? notOwned() : { phase: 'unrequested' };
    if (!desired) {
      if (live) {
        try {
          await this.write(request, 'delete', SERVICES, () =>
            client.delete(SERVICES, app.metadata.namespace, name, { preconditions: { uid: live!.metadata.uid } }),
          );
        } catch (error) {
          // Already gone: the cache had not seen the deletion yet.
          if (!isNotFound(error)) throw error;
          return { phase: 'unrequested' };
        }
        services.forget(request.key);
        await this.event(app, 'Normal', EVENT_REASONS.deleted, `Deleted Service "${name}": spec.port is no longer set`, request.log);
      }
      return { phase: 'unrequested' };
    }
    if (!live) {
      try {
        const created = await this.write(request, 'create', SERVICES, () =>
          client.create<Service>(SERVICES, app.metadata.namespace, desired, { fieldManager: FIELD_MANAGER }),
        );
        services.wrote(created, true);
        await this.event(app, 'Normal', EVENT_REASONS.created, `Created Service "${name}" (port ${app.spec.port})`, request.log);
        return { phase: 'owned' };
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        live = await this.uncached<Service>(SERVICES, app, request, error);
        if (!isControlledBy(live, app)) return notOwned();
        services.wrote(live, true);
      }
    }
    const drift = driftPaths(live, ownedFields(desired));
    if (drift.length > 0) {
      const current = live;
      const updated = await this.write(
        request,
        'update',
        SERVICES,
        () =>
          client.replace<Service>(SERVICES, app.metadata.namespace, name, withDesired(current, desired), { fieldManager: FIELD_MANAGER }),
        { drift },
      );
      services.wrote(updated);
      await this.event(app, 'Normal', EVENT_REASONS.updated, `Updated Service "${name}": ${drift.join(', ')}`, request.log);
    }
    return { phase: 'owned' };
  }

  /**
   * GETs an object the cache does not have although a create said it exists: a creation of ours whose answer was
   * lost, one the informer has not delivered yet, an object of ours whose labels were edited out of the informer's
   * selector, or a foreign object. The ownerReference tells them apart, not the labels or the cache. A 404 (gone
   * meanwhile) rethrows `conflict`, the AlreadyExists, so that the key is retried.
   */
  private async uncached<T extends KubeObject>(resource: Resource, app: CustomApp, request: Request, conflict: unknown): Promise<T> {
    try {
      const found = await this.options.client.get<T>(resource, app.metadata.namespace, app.metadata.name!);
      request.log.info({ resource: resourceLabel(resource), controlled: isControlledBy(found, app) }, 'uncached object read');
      return found;
    } catch (error) {
      if (isNotFound(error)) throw conflict;
      throw error;
    }
  }

  private async addFinalizer(app: CustomApp, request: Request): Promise<CustomApp> {
    const finalizers = [...(app.metadata.finalizers ?? []), FINALIZER];
    const updated = await this.write(
      request,
      'patch',
      CUSTOM_APPS,
      () =>
        this.options.client.patch<CustomApp>(
          CUSTOM_APPS,
          app.metadata.namespace,
          app.metadata.name!,
          'merge',
          {
            metadata: { finalizers, resourceVersion: app.metadata.resourceVersion },
          },
          { fieldManager: FIELD_MANAGER },
        ),
      { finalizer: 'add' },
    );
    this.options.apps.wrote(updated);
    return updated;
  }

  private async finalize(app: CustomApp, request: Request): Promise<Result> {
    this.options.dependencies.release(request.key);
    if (!app.metadata.finalizers?.includes(FINALIZER)) return {};
    const finalizers = app.metadata.finalizers.filter((finalizer) => finalizer !== FINALIZER);
    try {
      const updated = await this.write(
        request,
        'patch',
        CUSTOM_APPS,
        () =>
          this.options.client.patch<CustomApp>(
            CUSTOM_APPS,
            app.metadata.namespace,
            app.metadata.name!,
            'merge',
            {
              metadata: { finalizers, resourceVersion: app.metadata.resourceVersion },
            },
            { fieldManager: FIELD_MANAGER },
          ),
        { finalizer: 'remove' },
      );
      this.options.apps.wrote(updated);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    if (app.metadata.uid) this.options.recorder.forget(app.metadata.uid);
    request.log.info('finalized: dependencies released, finalizer removed');
    return {};
  }

  private async writeStatus(app: CustomApp, status: CustomAppStatus, request: Request): Promise<void> {
    // A merge patch of the whole status: absent fields are sent as null so that they are removed. It carries the
    // resourceVersion the status was computed from, so a writer that read a stale CustomApp (an old leader's last
    // reconcile, a lagging cache) gets a 409 instead of overwriting a newer status.
    const patch = Object.fromEntries(STATUS_FIELDS.map((field) => [field, status[field] ?? null]));
    try {
      const updated = await this.write(
        request,
        'patch',
        CUSTOM_APPS,
        () =>
          this.options.client.patch<CustomApp>(
            CUSTOM_APPS,
            app.metadata.namespace,
            app.metadata.name!,
            'merge',
            { metadata: { resourceVersion: app.metadata.resourceVersion }, status: patch },
            { subresource: 'status', fieldManager: FIELD_MANAGER },
          ),
        { subresource: 'status' },
      );
      this.options.apps.wrote(updated);
    } catch (error) {
      // Deleted meanwhile: its finalizer run will follow from the watch.
      if (!isNotFound(error)) throw error;
    }
  }

  /**
   * Says in the status (Ready=False, ReconcileError) and in one Event why a child write keeps failing, so a
   * CustomApp whose Service or Deployment cannot be written is never silent. A 409 is left to the requeue (the next
   * try reads a fresher cache). Best effort: a failure here is logged, and the original error is what the queue
   * retries.
   */
  private async reportFailure(app: CustomApp, error: unknown, request: Request): Promise<void> {
    if (error instanceof ApiError && error.statusCode === 409) return;
    const message = `writing the children failed and is retried: ${error instanceof ApiError ? (error.status?.message ?? error.message) : (error as Error).message}`;
    if (findCondition(app.status?.conditions, 'Ready')?.message === message) return;
    try {
      await this.event(app, 'Warning', EVENT_REASONS.reconcileError, message, request.log);
      await this.writeStatus(
        app,
        failedStatus(
          app,
          message,
          this.now()
            .toISOString()
            .replace(/\.\d{3}Z$/, 'Z'),
        ),
        request,
      );
    } catch (reportError) {
      request.log.warn({ failed: (reportError as Error).message }, 'could not report the reconcile error in status');
    }
  }

  private async event(app: CustomApp, type: EventType, reason: string, message: string, log: Logger): Promise<void> {
    await this.options.recorder.record(involved(app), type, reason, message, log);
  }

  /** Runs one API write and logs it with the reconcile's trace id. */
  private async write<T>(
    request: Request,
    verb: 'create' | 'update' | 'patch' | 'delete',
    resource: Resource,
    call: () => Promise<T>,
    fields: Record<string, unknown> = {},
  ): Promise<T> {
    const started = performance.now();
    try {
      const result = await call();
      request.log.info(
        { verb, resource: resourceLabel(resource), durationMs: Math.round((performance.now() - started) * 100) / 100, ...fields },
        'write',
      );
      return result;
    } catch (error) {
      request.log.info({ verb, resource: resourceLabel(resource), failed: (error as Error).message, ...fields }, 'write');
      throw error;
    }
  }
}
