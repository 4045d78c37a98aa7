// Admin-side reads the cluster tests share: an object or its absence, and a namespace's CustomApps, children, Events and conditions, by name.
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import type { Condition } from '../../api/customapp-status.js';
import type { KubeClient } from '../../operator/kube/client.js';
import { isNotFound } from '../../operator/kube/errors.js';
import { DEPLOYMENTS, EVENTS, SERVICES, type Resource } from '../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { CoreEvent, Deployment, KubeObject, Service } from '../../operator/kube/objects.js';
import { eventually } from './eventually.js';

/** An object, or undefined when the API answers 404. */
export async function getIfExists<T extends KubeObject>(
  client: KubeClient,
  resource: Resource,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  try {
    return await client.get<T>(resource, namespace, name);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Reads of one namespace through an admin client. */
export class NamespaceReads {
  constructor(
    private readonly admin: KubeClient,
    readonly namespace: string,
  ) {}

  app(name: string): Promise<CustomApp | undefined> {
    return getIfExists<CustomApp>(this.admin, CUSTOM_APPS, this.namespace, name);
  }

  deployment(name: string): Promise<Deployment | undefined> {
    return getIfExists<Deployment>(this.admin, DEPLOYMENTS, this.namespace, name);
  }

  /** Waits until the Deployment `name` exists (polling with {@link eventually}) and answers it as it was read then. */
  deploymentCreated(name: string, timeoutMs?: number): Promise<Deployment> {
    return eventually(`${this.namespace}/${name}: the Deployment exists`, () => this.deployment(name), timeoutMs);
  }

  service(name: string): Promise<Service | undefined> {
    return getIfExists<Service>(this.admin, SERVICES, this.namespace, name);
  }

  /** The Events whose involved object is `name`. */
  async events(name: string): Promise<CoreEvent[]> {
    return (await this.admin.list<CoreEvent>(EVENTS, { namespace: this.namespace })).items.filter(
      (event) => event.involvedObject.name === name,
    );
  }

  /** The condition of `type`, when the CustomApp exists and has it. */
  async condition(name: string, type: string): Promise<Condition | undefined> {
    return conditionOf(await this.app(name), type);
  }
}

/**
 * Waits until the CustomApp `name` has a condition of `type` with `reason` (polling with {@link eventually}), and
 * answers the CustomApp as it was read then.
 */
export function conditionReached(
  reads: NamespaceReads,
  name: string,
  type: string,
  reason: string,
  timeoutMs = 20_000,
): Promise<CustomApp> {
  return eventually(
    `${reads.namespace}/${name}: ${type} has reason ${reason}`,
    async () => {
      const app = await reads.app(name);
      return conditionOf(app, type)?.reason === reason ? app : undefined;
    },
    timeoutMs,
  );
}

export function conditionOf(app: CustomApp | undefined, type: string): Condition | undefined {
  return app?.status?.conditions?.find((condition) => condition.type === type);
}

/** A pod-template annotation of a Deployment. */
export function podAnnotation(deployment: Deployment | undefined, key: string): string | undefined {
  return deployment?.spec.template.metadata?.annotations?.[key];
}
