// The harness's own raw watchers: when each Deployment change and each ConfigMap write reached a plain watch client.
import type { KubeClient } from '../operator/kube/client.js';
import type { KubeObject } from '../operator/kube/objects.js';
import { isGone } from '../operator/kube/errors.js';
import { CONFIG_HASH_ANNOTATION } from '../api/customapp.js';
import { CONFIGMAPS, DEPLOYMENTS, type Resource } from '../operator/kube/resources.js';
import type { Deployment } from '../operator/kube/objects.js';
import { CUSTOM_APPS, type CustomApp } from '../operator/customapp/custom-app.js';

/** Milliseconds on the harness's monotonic clock. */
export type Clock = () => number;

/** The server's watch timeout for the harness's own watches: long, so that the shortened server default never cuts them. */
const OWN_WATCH_TIMEOUT_SECONDS = 3600;

/**
 * A plain list-then-watch of one resource across all namespaces, with no cache of its own: `onObject` gets every
 * object of the first list (`listed`), then every ADDED/MODIFIED/DELETED event with its arrival time. It resumes
 * after the server ends a watch and relists after a 410. It runs from {@link start} until {@link stop}.
 */
class RawWatch<T extends KubeObject> {
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  /** Watch requests made (the first, then every resume). */
  watches = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly resource: Resource,
    private readonly onObject: (object: T, type: 'listed' | 'ADDED' | 'MODIFIED' | 'DELETED', at: number) => void,
    private readonly now: Clock,
    /** List first (true) or start at the current resourceVersion with no initial objects (false). */
    private readonly listFirst: boolean,
  ) {}

  async start(): Promise<void> {
    const resourceVersion = await this.list();
    this.running = this.run(resourceVersion);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private async list(): Promise<string> {
    const list = await this.client.list<T>(this.resource, this.listFirst ? {} : { limit: 1 }, this.abort.signal);
    if (this.listFirst) for (const object of list.items) this.onObject(object, 'listed', this.now());
    return list.metadata.resourceVersion ?? '';
  }

  private async run(from: string): Promise<void> {
    let resourceVersion = from;
    while (!this.abort.signal.aborted) {
      try {
        this.watches += 1;
        const events = this.client.watch<T>(
          this.resource,
          { resourceVersion, allowWatchBookmarks: true, timeoutSeconds: OWN_WATCH_TIMEOUT_SECONDS },
          this.abort.signal,
        );
        for await (const event of events) {
          const at = this.now();
          if (event.type === 'ERROR')
            throw Object.assign(new Error(`watch ${this.resource.plural}: ${event.object.message}`), { code: event.object.code });
          resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
          if (event.type !== 'BOOKMARK') this.onObject(event.object, event.type, at);
        }
      } catch (error) {
        if (this.abort.signal.aborted) return;
        if (isGone(error) || (error as { code?: number }).code === 410) resourceVersion = await this.list();
        else await new Promise((done) => setTimeout(done, 200));
      }
    }
  }
}

/** An observer over one {@link RawWatch}, started and stopped with it; `record` takes each object the watch sees. */
export abstract class WatchObserver<T extends KubeObject> {
  private readonly watch: RawWatch<T>;

  constructor(client: KubeClient, resource: Resource, now: Clock, listFirst: boolean) {
    this.watch = new RawWatch<T>(client, resource, (object, type, at) => this.record(object, type, at), now, listFirst);
  }

  protected abstract record(object: T, type: 'listed' | 'ADDED' | 'MODIFIED' | 'DELETED', at: number): void;

  start(): Promise<void> {
    return this.watch.start();
  }

  stop(): Promise<void> {
    return this.watch.stop();
  }
}

/** What a Deployment looked like when the raw watcher saw it. */
export interface DeploymentSighting {
  /** Arrival time on the harness clock. */
  readonly at: number;
  readonly hash: string | undefined;
  readonly image: string | undefined;
  readonly deleted: boolean;
}

/**
 * Every Deployment as a raw watcher sees it (listed first), keyed `namespace/name`: the latest of what matters to the
 * observer (`Seen`), and the history of the changes it records (`Change`, each with its arrival time), counted.
 */
export abstract class DeploymentHistory<Seen, Change extends { readonly at: number }> extends WatchObserver<Deployment> {
  protected readonly latest = new Map<string, Seen>();
  private readonly history = new Map<string, Change[]>();
  /** Changes of all Deployments together that {@link recordChange} counted. */
  changeCount = 0;

  constructor(client: KubeClient, now: Clock) {
    super(client, DEPLOYMENTS, now, true);
  }

  /** The recorded changes of `namespace/name` that arrived after `since`, oldest first. */
  protected recordedSince(key: string, since: number): Change[] {
    return (this.history.get(key) ?? []).filter((change) => change.at > since);
  }

  /** Adds `change` to the history of `key`, and to {@link changeCount} when `counted`. */
  protected recordChange(key: string, change: Change, counted: boolean): void {
    let changes = this.history.get(key);
    if (!changes) this.history.set(key, (changes = []));
    changes.push(change);
    if (counted) this.changeCount += 1;
  }
}

/**
 * Every Deployment's config-hash annotation and image as a raw watcher sees them: the current one, and the
 * history of changes (a sighting is recorded only when the hash, the image or existence changed; one of the initial
 * list is recorded but not counted).
 */
export class DeploymentObserver extends DeploymentHistory<DeploymentSighting, DeploymentSighting> {
  /** The last sighting of `namespace/name`. */
  current(key: string): DeploymentSighting | undefined {
    return this.latest.get(key);
  }

  /** The changes of `namespace/name` that arrived after `since`, oldest first. */
  changesSince(key: string, since: number): DeploymentSighting[] {
    return this.recordedSince(key, since);
  }

  protected record(deployment: Deployment, type: 'listed' | 'ADDED' | 'MODIFIED' | 'DELETED', at: number): void {
    const key = `${deployment.metadata.namespace}/${deployment.metadata.name}`;
    const template = deployment.spec?.template;
    const sighting: DeploymentSighting = {
      at,
      hash: template?.metadata?.annotations?.[CONFIG_HASH_ANNOTATION],
      image: template?.spec?.containers?.[0]?.image,
      deleted: type === 'DELETED',
    };
    const previous = this.latest.get(key);
    this.latest.set(key, sighting);
    if (previous && previous.hash === sighting.hash && previous.image === sighting.image && previous.deleted === sighting.deleted) return;
    this.recordChange(key, sighting, type !== 'listed');
  }
}

/**
 * When each ConfigMap write reached a raw watcher: the API server's own delivery time, the floor of any
 * operator's propagation latency. Keyed by `namespace/name@resourceVersion`; only events after {@link start}.
 */
export class ConfigMapDeliveries extends WatchObserver<KubeObject> {
  private readonly arrivals = new Map<string, number>();

  constructor(client: KubeClient, now: Clock) {
    super(client, CONFIGMAPS, now, false);
  }

  protected record(object: KubeObject, _type: unknown, at: number): void {
    this.arrivals.set(`${object.metadata.namespace}/${object.metadata.name}@${object.metadata.resourceVersion}`, at);
  }

  /** When the write that produced `resourceVersion` of `namespace/name` arrived, if it did. */
  arrival(key: string, resourceVersion: string): number | undefined {
    return this.arrivals.get(`${key}@${resourceVersion}`);
  }
}

/**
 * When each CustomApp's `status.configHash` changed, as a raw watcher sees it (ours and the peer both record the hash
 * they rolled out there): the fan-out's other end, when every status says the new content, beside the Deployments'.
 * Watches from {@link start} on (no initial list), so that it adds nothing to the cold start.
 */
export class StatusObserver extends WatchObserver<CustomApp> {
  private readonly changes = new Map<string, Array<{ readonly at: number; readonly hash: string | undefined }>>();

  constructor(client: KubeClient, now: Clock) {
    super(client, CUSTOM_APPS, now, false);
  }

  protected record(app: CustomApp, _type: unknown, at: number): void {
    const key = `${app.metadata.namespace}/${app.metadata.name}`;
    const history = this.changes.get(key) ?? [];
    if (history.at(-1)?.hash !== app.status?.configHash) history.push({ at, hash: app.status?.configHash });
    this.changes.set(key, history);
  }

  /** When `namespace/name`'s status first said `hash` after `since`, if it did. */
  sawHash(key: string, hash: string, since: number): number | undefined {
    return this.changes.get(key)?.find((change) => change.at > since && change.hash === hash)?.at;
  }
}
