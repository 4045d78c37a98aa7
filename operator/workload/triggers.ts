// The workload controller's sources of work: a workload's own changes, and new content of what it references.
import { createHash } from 'node:crypto';
import { Subscription } from 'rxjs';
import type { EchoFilter } from '../cache/fresh-cache.js';
import type { Informer } from '../cache/informer.js';
import type { Indexers } from '../cache/store.js';
import type { Trigger } from '../controller/controller.js';
import { type DependencySource, refKey } from '../dependencies/source.js';
import type { Logger } from '../log.js';
import { reloadSpec } from './reload-annotations.js';
import { type Workload, type WorkloadKind, workloadKey } from './workload.js';

/** Index of a workload cache: `refKey` of each ConfigMap and Secret whose content rolls it → workload keys. */
export const BY_REFERENCE = 'byReference';

/** The workload caches' index: the objects each workload's annotations select (none when it did not opt in). */
export const WORKLOAD_INDEXERS: Indexers<Workload> = {
  [BY_REFERENCE]: (workload) =>
    reloadSpec(workload.metadata.annotations, workload.spec.template).refs.map((ref) =>
      refKey({ kind: ref.kind, namespace: workload.metadata.namespace!, name: ref.name }),
    ),
};

/**
 * The parts of a cached (trimmed) workload whose change needs a reconcile (all of it but its resourceVersion), as a
 * SHA-1 digest in a 20-character one-byte string: the triggers keep one per workload, and that costs 40 bytes where
 * the JSON costs about 500 (a workload with one reference; 5 MB at 10k workloads).
 */
function signature(workload: Workload): string {
  const { resourceVersion: _rv, ...metadata } = workload.metadata;
  return createHash('sha1')
    .update(JSON.stringify({ ...workload, metadata }))
    .digest()
    .toString('latin1');
}

/**
 * Subscribes the triggers (which starts the workload informers' watches) and calls `enqueue` with a workload key for:
 * - a workload added, deleted, or changed in what its cache keeps (`transform.ts`: its annotations, references,
 *   generation, and its status only while a rollout of ours is in progress): a status update of a workload that is not
 *   rolling for us queues nothing;
 * - a ConfigMap or Secret whose existence or content changed: every workload whose annotations select it;
 * - but no echo (`echoes`, the reconciler's FreshCaches): the version a patch of this process made, delivered by the
 *   watch, queues nothing, since the reconcile that patched it knew that state.
 */
export function subscribeWorkloadTriggers(
  informers: Partial<Record<WorkloadKind, Informer<Workload>>>,
  dependencies: DependencySource,
  enqueue: (key: string, trigger: Trigger) => void,
  logger?: Logger,
  echoes: Partial<Record<WorkloadKind, EchoFilter<Workload>>> = {},
): Subscription {
  const subscriptions = new Subscription();
  const entries = Object.entries(informers) as [WorkloadKind, Informer<Workload>][];
  for (const [kind, workloads] of entries) {
    const signatures = new Map<string, string>();
    const source = kind.toLowerCase();
    subscriptions.add(
      workloads.events$.subscribe((change) => {
        const key = workloadKey(kind, ...(change.key.split('/') as [string, string]));
        if (change.type === 'delete') {
          signatures.delete(change.key);
          enqueue(key, { source, reason: 'deleted' });
          return;
        }
        const echo = echoes[kind]?.isEcho(change) ?? false;
        const now = signature(change.object);
        if (signatures.get(change.key) === now) return;
        signatures.set(change.key, now);
        if (echo) {
          logger?.debug({ object: `${source} ${change.key}`, resourceVersion: change.object.metadata.resourceVersion }, 'echo');
          return;
        }
        enqueue(key, { source, reason: 'applied' });
      }),
    );
  }
  subscriptions.add(
    dependencies.changes.subscribe((state) => {
      const ref = refKey(state.ref);
      const keys = entries.flatMap(([kind, workloads]) =>
        workloads.store.byIndex(BY_REFERENCE, ref).map((key) => workloadKey(kind, ...(key.split('/') as [string, string]))),
      );
      if (keys.length === 0) return;
      const object = `${state.ref.namespace}/${state.ref.name}`;
      const reason = state.exists ? `content ${state.hash.slice(0, 12)}` : 'absent';
      const source = state.ref.kind.toLowerCase();
      logger?.info({ object: `${source} ${object}`, change: reason, count: keys.length, keys: keys.slice(0, 10) }, 'trigger');
      for (const key of keys) enqueue(key, { source, object, reason });
    }),
  );
  return subscriptions;
}
