// The controller's sources of work: every change that matters, mapped to the CustomApp keys it concerns.
import { Subscription } from 'rxjs';
import type { EchoFilter } from '../cache/fresh-cache.js';
import type { Indexers } from '../cache/store.js';
import type { Informer } from '../cache/informer.js';
import type { CustomApp } from './custom-app.js';
import type { DependencySource } from '../dependencies/source.js';
import type { Deployment, Service } from '../kube/objects.js';
import { controllingAppName } from './labels.js';
import type { Trigger } from '../controller/controller.js';
import type { Logger } from '../log.js';

/** Index of the CustomApp cache: `namespace/name` of each ConfigMap it references (configMapName, configMaps) → CustomApp keys. */
export const BY_CONFIGMAP = 'byConfigMap';
/** Index of the CustomApp cache: `namespace/name` of each Secret it references (secretName, secrets) → CustomApp keys. */
export const BY_SECRET = 'bySecret';

/** `namespace/name` of the seed field's object and of each listed one, each once. */
function referenced(app: CustomApp, seed: string | undefined, listed: readonly { readonly name: string }[] | undefined): string[] {
  const names = new Set([...(seed ? [seed] : []), ...(listed ?? []).map((entry) => entry.name)]);
  return [...names].map((name) => `${app.metadata.namespace}/${name}`);
}

/** The CustomApp cache's indexes: which CustomApps reference a ConfigMap or a Secret (by their spec). */
export const CUSTOM_APP_INDEXERS: Indexers<CustomApp> = {
  [BY_CONFIGMAP]: (app) => referenced(app, app.spec?.configMapName, app.spec?.configMaps),
  [BY_SECRET]: (app) => referenced(app, app.spec?.secretName, app.spec?.secrets),
};

/** The keys a `trigger` line names (its `count` says how many there are in all). */
const TRIGGER_LOG_KEYS = 10;

/** What the triggers watch. */
export interface TriggerSources {
  readonly apps: Informer<CustomApp>;
  readonly deployments: Informer<Deployment>;
  readonly services: Informer<Service>;
  readonly dependencies: DependencySource;
  /**
   * What tells the watch's delivery of this process's own writes (the reconcile's FreshCaches): such an echo queues
   * nothing, since the reconcile that wrote it knew that state. @default every change counts
   */
  readonly echoes?: {
    readonly apps?: EchoFilter<CustomApp>;
    readonly deployments?: EchoFilter<Deployment>;
    readonly services?: EchoFilter<Service>;
  };
}

/** The parts of a CustomApp whose change needs a reconcile: not its status (the reconcile's own output). */
function appSignature(app: CustomApp): string {
  const { uid, generation, deletionTimestamp, finalizers } = app.metadata;
  return JSON.stringify([uid, generation, deletionTimestamp ?? null, finalizers ?? []]);
}

/**
 * Subscribes the triggers (which starts the informers' watches) and calls `enqueue` for:
 * - a CustomApp added or deleted, or whose generation, deletion timestamp or finalizers changed (a status-only
 *   update, which the reconcile itself causes, queues nothing);
 * - a Deployment or Service added, changed or deleted: its controlling CustomApp;
 * - but no echo (`echoes`): the version a write of this process made, delivered by the watch, queues nothing (one
 *   reconcile per new CustomApp at a cold start instead of two, one per rollout instead of two);
 * - a ConfigMap or Secret whose existence or content changed (the DependencySource's `changes`): every CustomApp
 *   whose spec references it, through the CustomApp index. Each such change logs one `trigger` line (the object,
 *   the change, the keys it maps to) before the enqueues: the step between a watch `event` and `enqueue` in a trace.
 * Unsubscribe the result to stop them all.
 */
export function subscribeTriggers(
  sources: TriggerSources,
  enqueue: (key: string, trigger: Trigger) => void,
  logger?: Logger,
): Subscription {
  const { apps, deployments, services, dependencies, echoes } = sources;
  const signatures = new Map<string, string>();
  const subscriptions = new Subscription();
  subscriptions.add(
    apps.events$.subscribe((change) => {
      if (change.type === 'delete') {
        signatures.delete(change.key);
        enqueue(change.key, { source: 'customapp', reason: 'deleted' });
        return;
      }
      // Asked of every change, so that the echo of a status update (no new signature) is no longer awaited.
      const echo = echoes?.apps?.isEcho(change) ?? false;
      const signature = appSignature(change.object);
      if (signatures.get(change.key) === signature) return;
      signatures.set(change.key, signature);
      if (echo) {
        logger?.debug({ object: `customapp ${change.key}`, resourceVersion: change.object.metadata.resourceVersion }, 'echo');
        return;
      }
      enqueue(change.key, { source: 'customapp', reason: change.object.metadata.deletionTimestamp ? 'deleting' : 'applied' });
    }),
  );
  for (const [source, owned, filter] of [
    ['deployment', deployments, echoes?.deployments],
    ['service', services, echoes?.services],
  ] as const) {
    subscriptions.add(
      (owned.events$ as Informer<Deployment | Service>['events$']).subscribe((change) => {
        const owner = controllingAppName(change.object);
        if (!owner) return;
        if ((filter as EchoFilter<Deployment | Service> | undefined)?.isEcho(change)) {
          logger?.debug({ object: `${source} ${change.key}`, resourceVersion: change.object.metadata.resourceVersion }, 'echo');
          return;
        }
        enqueue(`${change.object.metadata.namespace}/${owner}`, {
          source,
          object: change.key,
          reason: change.type === 'delete' ? 'deleted' : 'applied',
        });
      }),
    );
  }
  subscriptions.add(
    dependencies.changes.subscribe((state) => {
      const index = state.ref.kind === 'ConfigMap' ? BY_CONFIGMAP : BY_SECRET;
      const object = `${state.ref.namespace}/${state.ref.name}`;
      const reason = state.exists ? `content ${state.hash.slice(0, 12)}` : 'absent';
      const source = state.ref.kind.toLowerCase();
      const keys = apps.store.byIndex(index, object);
      logger?.info({ object: `${source} ${object}`, change: reason, count: keys.length, keys: keys.slice(0, TRIGGER_LOG_KEYS) }, 'trigger');
      for (const key of keys) enqueue(key, { source, object, reason });
    }),
  );
  return subscriptions;
}
