// The access gates of the operator's three informers, with what to do when the CRD is missing or RBAC forbids a list or watch.
import type { SchedulerLike } from 'rxjs';
import { CRD_NAME, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { CUSTOM_APPS } from '../customapp/custom-app.js';
import type { Observable } from 'rxjs';
import { AccessGate, type AccessGateOptions, type GateClient } from '../kube/access-gate.js';
import type { KubeObject } from '../kube/objects.js';
import { DEPLOYMENTS, type Resource, SERVICES } from '../kube/resources.js';
import type { Logger } from '../log.js';
import type { WatcherConfig, WatcherDeps } from '../watch/config.js';
import type { WatcherEvent } from '../watch/events.js';
import { acrossNamespaces } from '../watch/namespaces.js';
import { watcher } from '../watch/watcher.js';

/** How dist/ is installed: the CRD, the namespace, the ServiceAccount and its ClusterRole and binding. */
export const INSTALL_COMMAND = 'kubectl apply -f dist/';

/** The remedy of a missing CRD. */
export const CRD_REMEDY = `install the CRD ${CRD_NAME}: ${INSTALL_COMMAND}`;

/**
 * The remedy of a missing permission: the identity the operator runs as needs dist/'s ClusterRole, or, when it
 * watches some namespaces, the Role of each (the operator chart's `namespaces` prop).
 */
export const RBAC_REMEDY = `grant it to the identity the operator runs as (${INSTALL_COMMAND} grants it to the ServiceAccount ${OPERATOR_NAMESPACE}/${OPERATOR_NAME}; with --namespaces, a Role in each namespace: the operator chart's namespaces prop)`;

/**
 * The gates of one resource's watchers: one per watched namespace (a 403 in one namespace, its RoleBinding missing,
 * closes the gate of that namespace's watcher alone and names it), or one for every namespace.
 */
export interface ScopedGates {
  readonly gates: readonly AccessGate[];
  /**
   * The events of `resource` in every watched namespace: one watcher per namespace through that namespace's gate,
   * named by `config(scope)` (`scope`: the namespace, or `*`), merged into one stream ({@link acrossNamespaces}).
   */
  watch<T extends KubeObject>(
    resource: Resource,
    config: (scope: string) => Omit<WatcherConfig, 'namespace'>,
    deps: WatcherDeps,
  ): Observable<WatcherEvent<T>>;
}

/** One gate per namespace of `namespaces` (or one for every namespace when undefined), each made by `gate`. */
export function gatesIn(namespaces: readonly string[] | undefined, gate: (namespace: string | undefined) => AccessGate): ScopedGates {
  const byNamespace = new Map((namespaces ?? [undefined]).map((namespace) => [namespace, gate(namespace)] as const));
  return {
    gates: [...byNamespace.values()],
    watch: <T extends KubeObject>(resource: Resource, config: (scope: string) => Omit<WatcherConfig, 'namespace'>, deps: WatcherDeps) =>
      acrossNamespaces<T>(namespaces, (namespace) =>
        watcher<T>(byNamespace.get(namespace)!.client, resource, { ...config(namespace ?? '*'), namespace }, deps),
      ),
  };
}

/** The gates in front of the informers' list and watch requests. */
export interface ApiAccess {
  readonly apps: ScopedGates;
  readonly deployments: ScopedGates;
  readonly services: ScopedGates;
  /** Why the operator cannot list or watch what it needs, with the remedy (for /readyz); undefined when nothing is known wrong. */
  reason(): string | undefined;
  /** Starts the first discovery checks. */
  start(): void;
  /** Cancels every check. */
  close(): void;
}

/** Options of {@link apiAccess}. */
export interface ApiAccessOptions {
  /** The informers' namespaces, each with its own gates. @default all namespaces */
  readonly namespaces?: readonly string[];
  readonly logger: Logger;
  readonly scheduler?: SchedulerLike;
}

/**
 * Builds the gates of the CustomApp, Deployment and Service informers (see {@link AccessGate}): a missing CRD
 * names the CRD and `kubectl apply -f dist/`; a 403 names the permission and the ClusterRole that grants it.
 */
export function apiAccess(client: GateClient, options: ApiAccessOptions): ApiAccess {
  const common = {
    client,
    logger: options.logger.child({ component: 'api-access' }),
    scheduler: options.scheduler,
  };
  const scoped = (resource: Resource, remedies: AccessGateOptions['remedies']): ScopedGates =>
    gatesIn(options.namespaces, (namespace) => new AccessGate({ ...common, namespace, resource, remedies }));
  const apps = scoped(CUSTOM_APPS, { NotServed: CRD_REMEDY, Forbidden: RBAC_REMEDY });
  const deployments = scoped(DEPLOYMENTS, { Forbidden: RBAC_REMEDY });
  const services = scoped(SERVICES, { Forbidden: RBAC_REMEDY });
  const gates = [apps, deployments, services].flatMap((each) => each.gates);
  return {
    apps,
    deployments,
    services,
    reason: () => {
      const reasons = gates.map((gate) => gate.reason).filter((reason) => reason !== undefined);
      return reasons.length === 0 ? undefined : reasons.join('; ');
    },
    start: () => {
      for (const gate of gates) gate.start();
    },
    close: () => {
      for (const gate of gates) gate.stop();
    },
  };
}
