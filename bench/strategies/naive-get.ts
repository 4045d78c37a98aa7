// naive-get: no ConfigMap watch at all; every reconcile GETs the ConfigMap it needs, and edits go unnoticed.
import { NEVER, type Observable } from 'rxjs';
import type { DependencyObject } from '../../operator/dependencies/dependency-watch.js';
import type { DependencyRef, DependencyState } from '../../operator/dependencies/source.js';
import { isNotFound } from '../../operator/kube/errors.js';
import { CONFIGMAPS, SECRETS } from '../../operator/kube/resources.js';
import { Acquisitions } from './acquisitions.js';
import { stateOf } from './state-changes.js';
import type { BenchSource, StrategyContext } from './strategy.js';

/**
 * The naive way: `state()` is a GET, so a reconcile always sees the current content, but nothing ever triggers a
 * reconcile when a ConfigMap changes (`changes` never emits). It caches nothing and opens no watch.
 */
export class NaiveGetSource implements BenchSource {
  private readonly acquisitions = new Acquisitions();
  readonly changes: Observable<DependencyState> = NEVER;

  constructor(private readonly context: StrategyContext) {}

  use(owner: string, refs: readonly DependencyRef[]): void {
    this.acquisitions.use(owner, refs);
  }

  release(owner: string): void {
    this.acquisitions.use(owner, []);
  }

  async state(ref: DependencyRef): Promise<DependencyState> {
    const resource = ref.kind === 'Secret' ? SECRETS : CONFIGMAPS;
    try {
      return stateOf(ref, await this.context.client.get<DependencyObject>(resource, ref.namespace, ref.name));
    } catch (error) {
      if (isNotFound(error)) return stateOf(ref, undefined);
      throw new Error(`naive-get: GET ${ref.kind} ${ref.namespace}/${ref.name} failed`, { cause: error });
    }
  }

  watched(): DependencyRef[] {
    return [];
  }

  owners(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.acquisitions.owners();
  }

  cachedObjects(): number {
    return 0;
  }

  close(): void {}
}
