// A whole cluster as the reconciler sees it, in memory: caches, dependency states, an API that records every call.
import pino from 'pino';
import { Subject } from 'rxjs';
import { API_VERSION, KIND } from '../../../api/customapp.js';
import type { CustomApp } from '../../customapp/custom-app.js';
import { contentHash } from '../../dependencies/content-hash.js';
import { dependencyHashes } from '../../dependencies/keyed-hash.js';
import { stateForRef } from '../../dependencies/key-digests.js';
import { type DependencyRef, type DependencySource, type DependencyState, refKey } from '../../dependencies/source.js';
import { EventRecorder } from '../../events/recorder.js';
import { RolloutGovernance, type RolloutSettings, UNGOVERNED } from '../../governance/governance.js';
import type { KubeObject } from '../../kube/objects.js';
import { DEPLOYMENTS, EVENTS, type Resource, SERVICES } from '../../kube/resources.js';
import { CUSTOM_APPS } from '../../customapp/custom-app.js';
import { RecordingClient } from '../../kube/testing/recording-client.js';
import type { Logger } from '../../log.js';
import type { CoreEvent, Deployment, Service } from '../../kube/objects.js';
import { CustomAppReconciler, type WritableCache } from '../custom-app-reconciler.js';
import { customAppStandings } from '../rollout-standings.js';
import { readOwnedDeployments } from '../fresh-deployments.js';
import { MANAGED_BY_LABEL } from '../../customapp/labels.js';
import { endedRolloutStatus, pausedRolloutStatus } from '../../governance/testing/deployment-status.js';
import type { PodTemplate } from '../../kube/objects.js';
import { trimWorkload } from '../../workload/transform.js';
import { type Workload, type WorkloadKind, WORKLOAD_RESOURCES, workloadKey } from '../../workload/workload.js';
import { WorkloadReconciler } from '../../workload/workload-reconciler.js';
import { workloadStandings } from '../../workload/standings.js';

/** A cache over a map: what an informer would hold, filled by {@link FakeWorld.sync} and by the reconcile's own writes. */
class MapCache<T extends KubeObject> implements WritableCache<T> {
  readonly objects = new Map<string, T>();
  /** @param transform what is kept of an object, as the informer keeps what it caches */
  constructor(private readonly transform: (object: T) => T = (object) => object) {}
  get(key: string): T | undefined {
    return this.objects.get(key);
  }
  list(): T[] {
    return [...this.objects.values()];
  }
  wrote(object: T): void {
    this.objects.set(`${object.metadata.namespace}/${object.metadata.name}`, this.transform(object));
  }
  learned(object: T): void {
    this.wrote(object);
  }
  forget(key: string): void {
    this.objects.delete(key);
  }
}

/** Dependency states set by the test; `use` and `release` are recorded as the owners of each ref. */
class FakeDependencies implements DependencySource {
  readonly states = new Map<string, DependencyState>();
  readonly acquired = new Map<string, readonly DependencyRef[]>();
  readonly changes = new Subject<DependencyState>();
  use(owner: string, refs: readonly DependencyRef[]): void {
    if (refs.length === 0) this.acquired.delete(owner);
    else this.acquired.set(owner, [...refs]);
  }
  release(owner: string): void {
    this.acquired.delete(owner);
  }
  async state(ref: DependencyRef): Promise<DependencyState | undefined> {
    const state = this.states.get(refKey(ref));
    return state && stateForRef(state, ref);
  }
  watched(): DependencyRef[] {
    return [...new Map([...this.acquired.values()].flat().map((ref) => [refKey(ref), ref])).values()];
  }
  owners(): ReadonlyMap<string, ReadonlySet<string>> {
    const owners = new Map<string, Set<string>>();
    for (const [owner, refs] of this.acquired)
      for (const ref of refs) owners.set(refKey(ref), (owners.get(refKey(ref)) ?? new Set()).add(owner));
    return owners;
  }
  close(): void {
    this.changes.complete();
  }
}

const SILENT: Logger = pino({ level: 'silent' });

/**
 * The reconciler's world: a {@link RecordingClient} as the API server, caches that hold what the informers would
 * (`sync` copies the server into them, owned objects only while they carry the managed-by label, as the
 * informers' selector does), dependency states the test sets, the real {@link EventRecorder}, and a fixed clock.
 */
export class FakeWorld {
  readonly client = new RecordingClient();
  /** The reconciler's Event recorder (a new one with each reconciler). */
  recorder!: EventRecorder;
  readonly apps = new MapCache<CustomApp>();
  readonly deployments = new MapCache<Deployment>();
  readonly services = new MapCache<Service>();
  readonly dependencies = new FakeDependencies();
  reconciler: CustomAppReconciler;
  /** The workload caches (trimmed as the operator's informers trim them), filled by {@link FakeWorld.sync}. */
  readonly workloads: Record<WorkloadKind, MapCache<Workload>> = {
    Deployment: new MapCache<Workload>(trimWorkload),
    StatefulSet: new MapCache<Workload>(trimWorkload),
    DaemonSet: new MapCache<Workload>(trimWorkload),
    Rollout: new MapCache<Workload>(trimWorkload),
  };
  /**
   * Workload keys (`Kind/namespace/name`) whose watch is slow: {@link FakeWorld.sync} leaves their cached copy as it is
   * (what a reconcile read last, or wrote itself), until a sync with `catchUp` delivers what the server holds.
   */
  readonly lagging = new Set<string>();
  /**
   * CustomApp keys (`namespace/name`) whose owned Deployment's watch is slow: {@link FakeWorld.sync} leaves the cached
   * Deployment as it is (what a reconcile read last, or wrote itself) until a sync with `catchUp`.
   */
  readonly laggingDeployments = new Set<string>();
  /** The workload reconciler, over the same client, dependencies, recorder and governance as the CustomApps'. */
  workloadReconciler!: WorkloadReconciler;
  /** The rollout governance: off unless the test asks for settings (a fake world runs no Deployment controller). */
  governance: RolloutGovernance;
  now = new Date('2026-11-30T12:00:00Z');
  /** What the reconciler is told of keys waiting for a worker (`ReconcileWorld.busy`). */
  busy = false;
  private readonly rollouts: RolloutSettings;

  constructor(rollouts: RolloutSettings = UNGOVERNED) {
    this.rollouts = rollouts;
    this.governance = this.newGovernance();
    this.reconciler = this.newReconciler();
  }

  /**
   * Plays an operator restart: a new governance (memory lost) rebuilt from the caches as the operator does before its
   * workers start, and a new reconciler over it. Answers the new governance.
   */
  restart(): RolloutGovernance {
    return this.rebuild();
  }

  /**
   * Plays a failover as `manager/lifecycle.ts` runs it: a standby takes the Lease with its own caches, whose slow
   * watches still hold `standbyView` (CustomApp key → the Deployment that standby's informer last delivered), not the
   * writes the old leader made since; it reads its owned Deployments afresh, then rebuilds its governance from the
   * caches. Answers the new governance.
   */
  async failover(standbyView: ReadonlyMap<string, Deployment>): Promise<RolloutGovernance> {
    for (const [key, deployment] of standbyView) this.deployments.objects.set(key, deployment);
    await readOwnedDeployments(this.client, this.deployments, undefined);
    return this.rebuild();
  }

  /** A new governance (memory lost) rebuilt from the caches, and a new reconciler over it. */
  private rebuild(): RolloutGovernance {
    this.governance.close();
    this.governance = this.newGovernance();
    this.governance.rebuild([
      ...customAppStandings(this.apps.objects.values(), (key) => this.deployments.get(key), this.deployments.objects.keys()),
      ...workloadStandings(this.workloads),
    ]);
    this.reconciler = this.newReconciler();
    return this.governance;
  }

  private newGovernance(): RolloutGovernance {
    return new RolloutGovernance({ settings: this.rollouts, now: () => this.now.getTime(), logger: SILENT });
  }

  private newReconciler(): CustomAppReconciler {
    const reconciler = this.newCustomAppReconciler();
    this.workloadReconciler = new WorkloadReconciler({
      client: this.client,
      workloads: this.workloads,
      dependencies: this.dependencies,
      recorder: this.recorder,
      governance: this.governance,
      now: () => this.now,
    });
    return reconciler;
  }

  private newCustomAppReconciler(): CustomAppReconciler {
    return new CustomAppReconciler({
      governance: this.governance,
      client: this.client,
      apps: this.apps,
      deployments: this.deployments,
      services: this.services,
      dependencies: this.dependencies,
      recorder: (this.recorder = new EventRecorder({
        client: this.client,
        component: 'customapp-operator',
        instance: 'test',
        logger: SILENT,
        now: () => this.now,
      })),
      now: () => this.now,
      busy: () => this.busy,
    });
  }

  /** Creates a CustomApp on the server (not recorded) and syncs the caches. */
  app(name: string, spec: CustomApp['spec'], namespace = 'ns'): CustomApp {
    const app = this.client.seed<CustomApp>(CUSTOM_APPS, {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name, namespace, generation: 1 },
      spec,
    });
    this.sync();
    return app;
  }

  /**
   * Creates (or replaces) a workload on the server with `annotations` and a pod template of `template`'s spec (a
   * container named app by default), not recorded, and syncs the caches.
   */
  workload(
    kind: WorkloadKind,
    name: string,
    annotations: Record<string, string>,
    template: Partial<PodTemplate['spec']> = {},
    namespace = 'ns',
  ): Workload {
    const resource = WORKLOAD_RESOURCES[kind];
    const previous = this.client.stored<Workload>(resource, namespace, name);
    const workload = this.client.seed<Workload>(resource, {
      apiVersion: `${resource.group}/${resource.version}`,
      kind,
      metadata: { ...previous?.metadata, name, namespace, annotations: { ...annotations } },
      spec: {
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'app:1' }], ...template } },
      },
    } as Workload);
    this.sync();
    return workload;
  }

  /** Reconciles the workload `kind namespace/name` once, and waits for the Events it posted. */
  async reconcileWorkload(kind: WorkloadKind, name: string, namespace = 'ns'): ReturnType<WorkloadReconciler['reconcile']> {
    const key = workloadKey(kind, namespace, name);
    const result = await this.workloadReconciler.reconcile({ key, namespace, name, reason: 'test', traceId: 'test', log: SILENT });
    await this.recorder.idle();
    return result;
  }

  /** Reconciles the workload once, then syncs the caches: the next reconcile reads what this one wrote. */
  async reconcileWorkloadAndSync(kind: WorkloadKind, name: string, namespace = 'ns'): ReturnType<WorkloadReconciler['reconcile']> {
    const result = await this.reconcileWorkload(kind, name, namespace);
    this.sync();
    return result;
  }

  /** Sets what the dependency source says of a ConfigMap (`data`, or absent with `undefined`). */
  configMap(name: string, data: Record<string, string> | undefined, namespace = 'ns'): void {
    this.dependency({ kind: 'ConfigMap', namespace, name }, data);
  }

  /** Sets what the dependency source says of a Secret (whose uid keys its hash). */
  secret(name: string, data: Record<string, string> | undefined, namespace = 'ns', uid = `uid-of-${name}`): void {
    this.dependency({ kind: 'Secret', namespace, name }, data, uid);
  }

  /** The content hash the dependency source reports for a ConfigMap's `data`. */
  static hash(data: Record<string, string>): string {
    return contentHash({ data });
  }

  /** The keyed hash the dependency source reports for a Secret's `data` (uid as {@link FakeWorld.secret} defaults it). */
  static secretHash(data: Record<string, string>, name: string, uid = `uid-of-${name}`): string {
    return dependencyHashes('Secret', { metadata: { uid }, data }).hash;
  }

  /** Sets `annotations` on the stored Deployment's pod template (as another writer, or an older operator, would), without syncing. */
  annotateTemplate(name: string, annotations: Record<string, string>, namespace = 'ns'): void {
    const stored = this.client.stored<Deployment>(DEPLOYMENTS, namespace, name);
    if (!stored) throw new Error(`fake world: no Deployment ${namespace}/${name}`);
    const template = stored.spec.template;
    this.client.seed(DEPLOYMENTS, {
      ...stored,
      spec: {
        ...stored.spec,
        template: { ...template, metadata: { ...template.metadata, annotations: { ...template.metadata?.annotations, ...annotations } } },
      },
    });
  }

  /**
   * Plays the Deployment controller for `name`: its latest rollout `Succeeded` (every replica updated, ready and
   * available) or `Failed` (Progressing=False, ProgressDeadlineExceeded, the new pods never available). Syncs.
   */
  settleDeployment(name: string, outcome: 'Succeeded' | 'Failed', namespace = 'ns'): void {
    const stored = this.client.stored<Deployment>(DEPLOYMENTS, namespace, name);
    if (!stored) throw new Error(`fake world: no Deployment ${namespace}/${name}`);
    const status = endedRolloutStatus(stored, outcome);
    this.client.seed(DEPLOYMENTS, { ...stored, status });
    this.sync();
  }

  /**
   * Plays `kubectl rollout pause` (or `resume`, with `paused` false) on `name`'s Deployment, then the status the
   * Deployment controller writes for it (`pausedRolloutStatus`). Syncs.
   */
  pauseDeployment(name: string, paused: boolean, namespace = 'ns'): void {
    const stored = this.client.stored<Deployment>(DEPLOYMENTS, namespace, name);
    if (!stored) throw new Error(`fake world: no Deployment ${namespace}/${name}`);
    const edited = this.client.seed<Deployment>(DEPLOYMENTS, { ...stored, spec: { ...stored.spec, paused } });
    this.client.seed(DEPLOYMENTS, { ...edited, status: pausedRolloutStatus(edited, stored) });
    this.sync();
  }

  /**
   * Copies the server's CustomApps, and the owned objects still labelled as ours, into the caches (the informers' view);
   * the workloads in {@link lagging} keep their cached copy unless `catchUp`.
   */
  sync(options: { readonly catchUp?: boolean } = {}): void {
    this.fill(this.apps, CUSTOM_APPS, () => true);
    const behind = options.catchUp ? [] : [...this.deployments.objects].filter(([key]) => this.laggingDeployments.has(key));
    this.fill(this.deployments, DEPLOYMENTS, (object) => object.metadata.labels?.[MANAGED_BY_LABEL] !== undefined);
    for (const [key, object] of behind) this.deployments.objects.set(key, object);
    this.fill(this.services, SERVICES, (object) => object.metadata.labels?.[MANAGED_BY_LABEL] !== undefined);
    for (const [kind, cache] of Object.entries(this.workloads) as [WorkloadKind, MapCache<Workload>][]) {
      const behind = options.catchUp ? [] : [...cache.objects].filter(([key]) => this.lagging.has(`${kind}/${key}`));
      cache.objects.clear();
      for (const object of this.client.all<Workload>(WORKLOAD_RESOURCES[kind])) cache.wrote(object);
      for (const [key, object] of behind) cache.objects.set(key, object);
    }
  }

  /**
   * Reconciles `namespace/name` once and answers the result, once the Events it posted are written too (they are
   * written asynchronously, off the reconcile); the recorded calls are in `client.calls`.
   */
  async reconcile(name: string, namespace = 'ns'): ReturnType<CustomAppReconciler['reconcile']> {
    const result = await this.reconciler.reconcile({
      key: `${namespace}/${name}`,
      namespace,
      name,
      reason: 'test',
      traceId: 'test',
      log: SILENT,
    });
    await this.recorder.idle();
    return result;
  }

  /** The Events recorded for the object `name`, as `reason: message`, oldest first. */
  events(name: string): string[] {
    return this.client
      .all<CoreEvent>(EVENTS)
      .filter((event) => event.involvedObject.name === name)
      .map((event) => `${event.reason}: ${event.message}`);
  }

  /** The recorded calls since `from`, as `verb resource key` lines, Events shown as `event <reason>`. */
  writes(from = 0): string[] {
    return this.client.calls.slice(from).map((call) => {
      if (call.resource === 'events') {
        const event = call.body as { reason?: string; count?: number } | undefined;
        return call.verb === 'create' ? `event ${event?.reason}` : `event ${call.verb} count ${event?.count}`;
      }
      return `${call.verb} ${call.resource} ${call.key}`;
    });
  }

  private dependency(ref: DependencyRef, data: Record<string, string> | undefined, uid?: string): void {
    const state: DependencyState = data
      ? { ref, exists: true, ...dependencyHashes(ref.kind, { metadata: { uid }, data }), resourceVersion: '1' }
      : { ref, exists: false };
    this.dependencies.states.set(refKey(ref), state);
    // What the operator wires: the DependencySource's `changes` feed the flap breakers.
    this.governance.observe(state);
    this.dependencies.changes.next(state);
  }

  private fill<T extends KubeObject>(cache: MapCache<T>, resource: Resource, selected: (object: T) => boolean): void {
    cache.objects.clear();
    for (const object of this.client.all<T>(resource)) if (selected(object)) cache.wrote(object);
  }
}
