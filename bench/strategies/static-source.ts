// The shared half of the static strategies: every ConfigMap cached, and each cache change mapped to the refs it concerns.
import { concatMap, from, type Observable, type Subscription } from 'rxjs';
import { refKey, type DependencyRef, type DependencyState } from '../../operator/dependencies/source.js';
import { AllConfigMaps, configMapRef, type CacheChange } from './all-configmaps.js';
import { Acquisitions } from './acquisitions.js';
import { NaiveGetSource } from './naive-get.js';
import { StateChanges, stateOf } from './state-changes.js';
import type { BenchSource, StrategyContext } from './strategy.js';

/**
 * A static strategy: one watch on all ConfigMaps, started at construction of the source and stopped by `close`.
 * Subclasses decide what a change costs to map to the CustomApps it concerns ({@link concerned}). The first list
 * is not mapped event by event (each CustomApp's first reconcile reads the cache anyway): it only marks the
 * acquired refs as synced.
 *
 * The benchmark's CustomApps reference no Secrets; a Secret ref is answered with a GET (as naive-get does).
 */
export abstract class StaticSource implements BenchSource {
  protected readonly acquisitions = new Acquisitions();
  protected readonly cache: AllConfigMaps;
  private readonly states = new StateChanges();
  private readonly secrets: NaiveGetSource;
  private readonly subscription: Subscription;
  readonly changes: Observable<DependencyState> = this.states.changes;

  constructor(protected readonly context: StrategyContext) {
    this.cache = new AllConfigMaps(context.client, { logger: context.logger });
    this.secrets = new NaiveGetSource(context);
    this.subscription = this.cache.changes.pipe(concatMap((change) => from(this.onChange(change)))).subscribe({
      error: (error: unknown) => context.logger.error({ err: error }, 'configmap cache stopped'),
    });
  }

  /** Whether this change of a ConfigMap concerns any CustomApp: the mapping cost of the strategy. */
  protected abstract concerned(ref: DependencyRef, change: CacheChange): Promise<boolean>;

  private async onChange(change: CacheChange): Promise<void> {
    const ref = configMapRef(change.change.key);
    if (change.initial) {
      if (this.acquisitions.isAcquired(refKey(ref))) this.states.offer(this.stateFromCache(ref));
      return;
    }
    try {
      if (await this.concerned(ref, change))
        this.states.offer(stateOf(ref, change.change.type === 'delete' ? undefined : change.change.object));
    } catch (error) {
      this.context.logger.warn({ err: error, ref: refKey(ref) }, 'mapping a configmap change failed');
    }
  }

  private stateFromCache(ref: DependencyRef): DependencyState {
    return stateOf(ref, this.cache.get(ref));
  }

  use(owner: string, refs: readonly DependencyRef[]): void {
    const change = this.acquisitions.use(owner, refs);
    for (const ref of change.lastReleased) this.states.forget(ref);
    this.secrets.use(
      owner,
      refs.filter((ref) => ref.kind === 'Secret'),
    );
  }

  release(owner: string): void {
    this.use(owner, []);
  }

  async state(ref: DependencyRef): Promise<DependencyState | undefined> {
    if (ref.kind === 'Secret') return this.secrets.state(ref);
    if (!this.cache.store.synced) return undefined;
    const state = this.stateFromCache(ref);
    if (this.acquisitions.isAcquired(refKey(ref)) && !this.states.current(ref)) this.states.remember(state);
    return state;
  }

  watched(): DependencyRef[] {
    return this.acquisitions.acquiredRefs().filter((ref) => ref.kind === 'ConfigMap');
  }

  owners(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.acquisitions.owners();
  }

  cachedObjects(): number {
    return this.cache.store.size;
  }

  close(): void {
    this.subscription.unsubscribe();
    this.states.complete();
  }
}
