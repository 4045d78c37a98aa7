// per-object: the seed, literally; one @kubernetes/client-node informer per referenced ConfigMap, and no reference counting.
import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type V1ConfigMap } from '@kubernetes/client-node';
import type { Observable } from 'rxjs';
import type { DependencyObject } from '../../operator/dependencies/dependency-watch.js';
import { refKey, type DependencyRef, type DependencyState } from '../../operator/dependencies/source.js';
import type { RequestSample } from '../../operator/kube/options.js';
import { CONFIGMAPS } from '../../operator/kube/resources.js';
import { Acquisitions } from './acquisitions.js';
import { NaiveGetSource } from './naive-get.js';
import { StateChanges, stateOf } from './state-changes.js';
import type { BenchSource, StrategyContext } from './strategy.js';

/** client-node's Watch, reporting each watch request (when it ends, as the KubeClient does) so that it is counted. */
class CountedWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly onRequest: (sample: RequestSample) => void,
  ) {
    super(config);
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: any, watchObj?: any) => void,
    done: (err: any) => void,
  ): Promise<AbortController> {
    const started = performance.now();
    const namespace = /\/namespaces\/([^/]+)\//.exec(path)?.[1];
    let reported = false;
    return super.watch(path, queryParams, callback, (err: any) => {
      if (!reported) {
        reported = true;
        const code = err ? Number(err.statusCode ?? err.code ?? 0) || 0 : 200;
        this.onRequest({ verb: 'watch', resource: 'configmaps', namespace, code, durationMs: performance.now() - started });
      }
      done(err);
    });
  }
}

/** One seed informer. */
interface SeedInformer {
  readonly informer: ListWatch<V1ConfigMap>;
  synced: boolean;
  /** Set when client-node reported an error: the seed's informer is dead from then on (it never restarts). */
  dead: boolean;
  /** Set when the seed stopped it (stopping aborts the watch, which client-node reports as an error too). */
  stopped: boolean;
}

/**
 * The seed's pattern, bugs included, so that the benchmark shows them:
 * - an informer (`ListWatch`, what `makeInformer` returns, built directly to pass `fieldSelector=metadata.name=…`
 *   and a counted Watch) per ConfigMap a CustomApp names, started when the CustomApp first names it;
 * - stopped when that CustomApp stops naming it or is deleted (`release`, from the finalizer), **with no reference
 *   count**: another CustomApp sharing the ConfigMap loses its updates from then on;
 * - an informer that reports an error is dead for good (client-node only relists on 410); the seed never noticed.
 * A ref whose informer was stopped is answered from the stopped informer's last content, as the seed's cache read did.
 */
export class PerObjectSource implements BenchSource {
  private readonly acquisitions = new Acquisitions();
  private readonly informers = new Map<string, SeedInformer>();
  private readonly states = new StateChanges();
  private readonly secrets: NaiveGetSource;
  private readonly watch: CountedWatch;
  /** Informers that died of an error, for the report. */
  deadInformers = 0;
  readonly changes: Observable<DependencyState> = this.states.changes;

  constructor(private readonly context: StrategyContext) {
    this.watch = new CountedWatch(context.kubeConfig, context.onRequest);
    this.secrets = new NaiveGetSource(context);
  }

  use(owner: string, refs: readonly DependencyRef[]): void {
    const change = this.acquisitions.use(owner, refs);
    this.secrets.use(
      owner,
      refs.filter((ref) => ref.kind === 'Secret'),
    );
    for (const ref of change.ownerAdded) if (ref.kind === 'ConfigMap' && !this.informers.has(refKey(ref))) this.start(ref);
    for (const ref of change.ownerRemoved) this.stop(ref);
  }

  release(owner: string): void {
    this.use(owner, []);
  }

  async state(ref: DependencyRef): Promise<DependencyState | undefined> {
    if (ref.kind === 'Secret') return this.secrets.state(ref);
    const entry = this.informers.get(refKey(ref));
    if (!entry) return this.states.current(ref);
    if (!entry.synced) return undefined;
    return stateOf(ref, entry.informer.get(ref.name, ref.namespace) as DependencyObject | undefined);
  }

  watched(): DependencyRef[] {
    return this.acquisitions.acquiredRefs().filter((ref) => this.informers.has(refKey(ref)));
  }

  owners(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.acquisitions.owners();
  }

  cachedObjects(): number {
    let count = 0;
    for (const entry of this.informers.values()) count += entry.informer.list().length;
    return count;
  }

  close(): void {
    for (const key of [...this.informers.keys()]) this.stopKey(key);
    this.states.complete();
  }

  private start(ref: DependencyRef): void {
    const fieldSelector = `metadata.name=${ref.name}`;
    const list = async (): Promise<KubernetesListObject<V1ConfigMap>> =>
      (await this.context.client.list<DependencyObject>(CONFIGMAPS, {
        namespace: ref.namespace,
        fieldSelector,
      })) as unknown as KubernetesListObject<V1ConfigMap>;
    const informer = new ListWatch<V1ConfigMap>(
      `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/configmaps`,
      this.watch,
      list,
      false,
      undefined,
      fieldSelector,
    );
    const entry: SeedInformer = { informer, synced: false, dead: false, stopped: false };
    const offer = (object: V1ConfigMap | undefined): void => {
      if (entry.synced) this.states.offer(stateOf(ref, object as DependencyObject | undefined));
    };
    informer.on('add', (object) => offer(object));
    informer.on('update', (object) => offer(object));
    informer.on('delete', () => offer(undefined));
    informer.on('error', (error) => {
      if (entry.dead || entry.stopped) return;
      entry.dead = true;
      this.deadInformers += 1;
      this.context.logger.warn({ ref: refKey(ref), err: error }, 'seed informer died');
    });
    this.informers.set(refKey(ref), entry);
    // use() is synchronous, as in the seed: the informer starts in the background and its end is handled here.
    informer.start().then(
      () => {
        if (this.informers.get(refKey(ref)) !== entry) return;
        entry.synced = true;
        this.states.offer(stateOf(ref, informer.get(ref.name, ref.namespace) as DependencyObject | undefined));
      },
      (error: unknown) => this.context.logger.warn({ ref: refKey(ref), err: error }, 'seed informer failed to start'),
    );
  }

  private stop(ref: DependencyRef): void {
    if (ref.kind === 'ConfigMap') this.stopKey(refKey(ref));
  }

  private stopKey(key: string): void {
    const entry = this.informers.get(key);
    if (!entry) return;
    this.informers.delete(key);
    entry.stopped = true;
    entry.informer.stop().catch((error: unknown) => this.context.logger.warn({ ref: key, err: error }, 'stopping a seed informer failed'));
  }
}
