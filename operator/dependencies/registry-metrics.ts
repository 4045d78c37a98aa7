// The dependency registry's Prometheus gauges, computed from its state at each scrape.
import { Gauge, type Registry } from 'prom-client';
import type { StreamInfo } from './dependency-group.js';
import type { FailingList } from './list-health.js';
import type { DependencyKind, DependencyRef } from './source.js';

/** What the gauges read; a {@link DependencyRegistry} provides it. */
export interface RegistryView {
  watched(): DependencyRef[];
  subscribers(): Map<string, number>;
  streams(): StreamInfo[];
  failingLists(): readonly FailingList[];
}

const KINDS: readonly DependencyKind[] = ['ConfigMap', 'Secret'];

/**
 * Registers into `registry` (never the global one):
 * - `customapp_dependency_watches_active{kind}`: distinct referenced objects being watched;
 * - `customapp_watch_streams_open{kind,scope}`: physical watch requests, `scope` `object` or `namespace`;
 * - `customapp_dependency_subscribers{kind}`: logical subscriptions over all referenced objects;
 * - `customapp_dependency_lists_failing{kind}`: streams whose list has failed and not completed since.
 *
 * Each gauge is computed when scraped, so it cannot drift from the registry. Every label combination is always
 * present (0 when idle), which keeps dashboards and `absent()` alerts simple.
 */
export function registerRegistryMetrics(registry: Registry, view: RegistryView): void {
  countByKind(registry, 'customapp_dependency_watches_active', 'Distinct referenced ConfigMaps and Secrets being watched', () =>
    view.watched(),
  );
  new Gauge({
    name: 'customapp_watch_streams_open',
    help: 'Open dependency watch requests, per object or per namespace',
    labelNames: ['kind', 'scope'],
    registers: [registry],
    collect() {
      const streams = view.streams();
      for (const kind of KINDS) {
        for (const scope of ['object', 'namespace'] as const) {
          this.set({ kind, scope }, streams.filter((stream) => stream.kind === kind && stream.scope === scope).length);
        }
      }
    },
  });
  new Gauge({
    name: 'customapp_dependency_subscribers',
    help: 'Logical subscriptions to referenced ConfigMaps and Secrets',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const counts = [...view.subscribers()];
      for (const kind of KINDS)
        this.set(
          { kind },
          counts.filter(([key]) => key.startsWith(`${kind}/`)).reduce((sum, [, count]) => sum + count, 0),
        );
    },
  });
  countByKind(
    registry,
    'customapp_dependency_lists_failing',
    'Dependency streams whose list has failed and not completed since (their refs stay unknown meanwhile)',
    () => view.failingLists(),
  );
}

/** A gauge `{kind}` of how many of the items `read` answers at each scrape are of each kind (0 for a kind with none). */
function countByKind(registry: Registry, name: string, help: string, read: () => readonly { readonly kind: DependencyKind }[]): void {
  new Gauge({
    name,
    help,
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const items = read();
      for (const kind of KINDS) this.set({ kind }, items.filter((item) => item.kind === kind).length);
    },
  });
}
