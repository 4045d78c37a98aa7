// The access gates of the operator's three informers, with what to do when the CRD is missing or RBAC forbids a list or watch.
import type { SchedulerLike } from 'rxjs';
import { CRD_NAME, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../infra/customapp-api.js';
import { CUSTOM_APPS } from '../customapp/custom-app.js';
import { AccessGate, type GateClient } from '../kube/access-gate.js';
import { DEPLOYMENTS, SERVICES } from '../kube/resources.js';
import type { Logger } from '../log.js';

/** How dist/ is installed: the CRD, the namespace, the ServiceAccount and its ClusterRole and binding. */
export const INSTALL_COMMAND = 'kubectl apply -f dist/';

/** The remedy of a missing CRD. */
export const CRD_REMEDY = `install the CRD ${CRD_NAME}: ${INSTALL_COMMAND}`;

/** The remedy of a missing permission: the identity the operator runs as needs dist/'s ClusterRole. */
export const RBAC_REMEDY = `grant it to the identity the operator runs as (${INSTALL_COMMAND} grants it to the ServiceAccount ${OPERATOR_NAMESPACE}/${OPERATOR_NAME})`;

/** The gates in front of the informers' list and watch requests. */
export interface ApiAccess {
  readonly apps: AccessGate;
  readonly deployments: AccessGate;
  readonly services: AccessGate;
  /** Why the operator cannot list or watch what it needs, with the remedy (for /readyz); undefined when nothing is known wrong. */
  reason(): string | undefined;
  /** Starts the first discovery checks. */
  start(): void;
  /** Cancels every check. */
  close(): void;
}

/** Options of {@link apiAccess}. */
export interface ApiAccessOptions {
  /** The informers' namespace. @default all namespaces */
  readonly namespace?: string;
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
    namespace: options.namespace,
    logger: options.logger.child({ component: 'api-access' }),
    scheduler: options.scheduler,
  };
  const apps = new AccessGate({ ...common, resource: CUSTOM_APPS, remedies: { NotServed: CRD_REMEDY, Forbidden: RBAC_REMEDY } });
  const deployments = new AccessGate({ ...common, resource: DEPLOYMENTS, remedies: { Forbidden: RBAC_REMEDY } });
  const services = new AccessGate({ ...common, resource: SERVICES, remedies: { Forbidden: RBAC_REMEDY } });
  const gates = [apps, deployments, services];
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
      for (const gate of gates) gate.close();
    },
  };
}
