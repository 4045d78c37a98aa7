// ours: the operator's own DependencySource, the reference-counted adaptive DependencyRegistry, exactly as createOperator builds it.
import type { Observable } from 'rxjs';
import { DependencyRegistry } from '../../operator/dependencies/registry.js';
import { RegistryDependencySource } from '../../operator/dependencies/registry-source.js';
import type { DependencyRef, DependencyState } from '../../operator/dependencies/source.js';
import type { BenchSource, StrategyContext } from './strategy.js';

/**
 * {@link RegistryDependencySource} over a {@link DependencyRegistry} with its defaults (what `createOperator` uses
 * when no `dependencies` factory is given). Its cache holds one hash per referenced object, never a payload.
 */
export class OursSource implements BenchSource {
  readonly registry: DependencyRegistry;
  private readonly source: RegistryDependencySource;
  readonly changes: Observable<DependencyState>;

  constructor(context: StrategyContext) {
    this.registry = new DependencyRegistry({ client: context.client, logger: context.logger, metrics: context.metrics });
    this.source = new RegistryDependencySource(this.registry, { logger: context.logger });
    this.changes = this.source.changes;
  }

  use(owner: string, refs: readonly DependencyRef[]): void {
    this.source.use(owner, refs);
  }

  batch(useAll: () => void): void {
    this.source.batch(useAll);
  }

  release(owner: string): void {
    this.source.release(owner);
  }

  state(ref: DependencyRef): Promise<DependencyState | undefined> {
    return this.source.state(ref);
  }

  watched(): DependencyRef[] {
    return this.source.watched();
  }

  owners(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.source.owners();
  }

  cachedObjects(): number {
    return this.registry.watched().length;
  }

  close(): void {
    this.source.close();
    this.registry.close();
  }
}
