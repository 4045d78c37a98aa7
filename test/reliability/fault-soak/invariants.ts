// The invariant checks: reads the whole cluster and the operator's metrics, and lists every broken invariant.
import { CONFIG_HASH_ANNOTATION, SECRET_HASH_ANNOTATION } from '../../../api/customapp.js';
import type { CustomApp } from '../../../operator/customapp/custom-app.js';
import { contentHash, type HashableContent } from '../../../operator/dependencies/content-hash.js';
import { keyedContentHash } from '../../../operator/dependencies/keyed-hash.js';
import { DEFAULT_COLLAPSE_THRESHOLD, DEFAULT_SPLIT_THRESHOLD } from '../../../operator/dependencies/registry.js';
import type { KubeClient } from '../../../operator/kube/client.js';
import type { KubeObject } from '../../../operator/kube/objects.js';
import { CONFIGMAPS, DEPLOYMENTS, SECRETS, SERVICES } from '../../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../../operator/customapp/custom-app.js';
import type { Deployment, Service } from '../../../operator/kube/objects.js';
import { isControlledBy, OWNED_SELECTOR } from '../../../operator/customapp/labels.js';
import type { TestCluster } from '../../support/targets.js';
import { OPERATOR_USER } from '../support/cluster-role.js';
import { podAnnotation } from '../../support/cluster-reads.js';
import { sumOf } from '../support/prometheus.js';
import type { Generation } from './operator-generation.js';
import type { Invariants } from './report.js';
import type { World } from './world.js';

const contentOf = (object: (KubeObject & HashableContent) | undefined): string | undefined => (object ? contentHash(object) : undefined);
/** A Secret's hash as the operator writes it: keyed with the Secret's uid. */
const secretContentOf = (object: (KubeObject & HashableContent) | undefined): string | undefined =>
  object ? keyedContentHash(object.metadata.uid, object) : undefined;

/** One read of the cluster: every CustomApp, and its children and dependencies keyed `namespace/name`. */
interface ClusterSnapshot {
  readonly apps: readonly CustomApp[];
  readonly appOf: ReadonlyMap<string, CustomApp>;
  readonly deploymentOf: ReadonlyMap<string, Deployment>;
  readonly serviceOf: ReadonlyMap<string, Service>;
  readonly configMapOf: ReadonlyMap<string, KubeObject & HashableContent>;
  readonly secretOf: ReadonlyMap<string, KubeObject & HashableContent>;
}

/** How a live CustomApp's Deployment, Service and status differ from its latest spec and content (empty: converged). */
function problemsOf(app: CustomApp, key: string, { deploymentOf, serviceOf, configMapOf, secretOf }: ClusterSnapshot): string[] {
  const namespace = app.metadata.namespace!;
  const { spec } = app;
  const deployment = deploymentOf.get(key);
  const problems: string[] = [];
  const expectedConfig = spec.configMapName ? (contentOf(configMapOf.get(`${namespace}/${spec.configMapName}`)) ?? 'missing') : undefined;
  const expectedSecret = spec.secretName ? (secretContentOf(secretOf.get(`${namespace}/${spec.secretName}`)) ?? 'missing') : undefined;
  if (!deployment) problems.push('no Deployment');
  else {
    const container = deployment.spec.template.spec.containers[0];
    if (!isControlledBy(deployment, app)) problems.push('Deployment not controlled by it');
    if (container?.image !== spec.image) problems.push(`image ${container?.image} ≠ ${spec.image}`);
    // Unset replicas are not the operator's to keep (an HPA on the Deployment sets them).
    if (spec.replicas !== undefined && deployment.spec.replicas !== spec.replicas)
      problems.push(`replicas ${deployment.spec.replicas} ≠ ${spec.replicas}`);
    if (podAnnotation(deployment, CONFIG_HASH_ANNOTATION) !== expectedConfig)
      problems.push(`config-hash ${podAnnotation(deployment, CONFIG_HASH_ANNOTATION)?.slice(0, 8)} ≠ ${expectedConfig?.slice(0, 8)}`);
    if (podAnnotation(deployment, SECRET_HASH_ANNOTATION) !== expectedSecret)
      problems.push(`secret-hash ${podAnnotation(deployment, SECRET_HASH_ANNOTATION)?.slice(0, 8)} ≠ ${expectedSecret?.slice(0, 8)}`);
  }
  const service = serviceOf.get(key);
  if (spec.port && service?.spec.ports?.[0]?.port !== spec.port)
    problems.push(`Service port ${service?.spec.ports?.[0]?.port} ≠ ${spec.port}`);
  if (!spec.port && service) problems.push('a Service without spec.port');
  if (app.status?.observedGeneration !== app.metadata.generation)
    problems.push(`observedGeneration ${app.status?.observedGeneration} ≠ ${app.metadata.generation}`);
  if (app.status?.configHash !== expectedConfig) problems.push('status.configHash');
  if (app.status?.secretHash !== expectedSecret) problems.push('status.secretHash');
  return problems;
}

/** Reads the whole cluster and the operator's metrics, and lists every broken invariant. */
export class InvariantChecker {
  constructor(
    private readonly admin: KubeClient,
    private readonly cluster: TestCluster,
    private readonly world: World,
    private readonly operator: () => Generation | undefined,
  ) {}

  /** The live CustomApps that do not run their latest spec and content yet (the cold-start check). */
  async unconverged(): Promise<readonly string[]> {
    if (!this.operator()?.leading) return ['the operator does not lead yet'];
    return (await this.check()).lostUpdates;
  }

  async check(): Promise<Invariants> {
    const snapshot = await this.read();
    const lostUpdates: string[] = [];
    const stuckFinalizers: string[] = [];
    const referenced = new Map<string, number>();
    for (const app of snapshot.apps) {
      const namespace = app.metadata.namespace!;
      const key = `${namespace}/${app.metadata.name}`;
      if (!this.world.everCreated.has(key)) continue;
      if (app.metadata.deletionTimestamp) {
        stuckFinalizers.push(key);
        continue;
      }
      for (const [kind, name] of [
        ['ConfigMap', app.spec.configMapName],
        ['Secret', app.spec.secretName],
      ] as const) {
        if (name) referenced.set(`${kind}/${namespace}/${name}`, (referenced.get(`${kind}/${namespace}/${name}`) ?? 0) + 1);
      }
      const problems = problemsOf(app, key, snapshot);
      if (problems.length > 0) lostUpdates.push(`${key}: ${problems.join(', ')}`);
    }
    const { mismatches, server, operator } = this.watches(referenced);
    return {
      liveApps: snapshot.apps.length,
      deletedApps: [...this.world.everCreated].filter((key) => !snapshot.appOf.has(key)).length,
      lostUpdates,
      stuckFinalizers,
      orphans: this.orphans(snapshot),
      watchMismatches: mismatches,
      openWatches: { server, operator },
    };
  }

  /** Every CustomApp, and the objects the checks compare them with, keyed `namespace/name`. */
  private async read(): Promise<ClusterSnapshot> {
    const { admin } = this;
    const [apps, deployments, services, configMaps, secrets] = await Promise.all([
      admin.list<CustomApp>(CUSTOM_APPS),
      admin.list<Deployment>(DEPLOYMENTS, { labelSelector: OWNED_SELECTOR }),
      admin.list<Service>(SERVICES, { labelSelector: OWNED_SELECTOR }),
      admin.list<KubeObject & HashableContent>(CONFIGMAPS),
      admin.list<KubeObject & HashableContent>(SECRETS),
    ]);
    const byKey = <T extends KubeObject>(items: readonly T[]): Map<string, T> =>
      new Map(items.map((item) => [`${item.metadata.namespace}/${item.metadata.name}`, item]));
    return {
      apps: apps.items,
      appOf: byKey(apps.items),
      deploymentOf: byKey(deployments.items),
      serviceOf: byKey(services.items),
      configMapOf: byKey(configMaps.items),
      secretOf: byKey(secrets.items),
    };
  }

  /** The children left behind by a CustomApp that is gone. */
  private orphans({ appOf, deploymentOf, serviceOf }: ClusterSnapshot): string[] {
    const orphans: string[] = [];
    for (const key of this.world.everCreated) {
      if (appOf.has(key)) continue;
      if (deploymentOf.has(key)) orphans.push(`${key}: Deployment left`);
      if (serviceOf.has(key)) orphans.push(`${key}: Service left`);
    }
    return orphans;
  }

  /** The operator's dependency watches against the referenced set: its metrics, and the server's open watches. */
  private watches(referenced: ReadonlyMap<string, number>): { mismatches: string[]; server: number; operator: number } {
    const counters = this.cluster.emulator!.counters;
    const metrics = this.operator()?.lastMetrics ?? [];
    const mismatches: string[] = [];
    for (const kind of ['ConfigMap', 'Secret'] as const) {
      const refs = [...referenced].filter(([key]) => key.startsWith(`${kind}/`));
      const watched = sumOf(metrics, 'customapp_dependency_watches_active', { kind });
      const subscribers = sumOf(metrics, 'customapp_dependency_subscribers', { kind });
      if (watched !== refs.length) mismatches.push(`${kind}: ${watched} watched ≠ ${refs.length} referenced`);
      const holders = refs.reduce((sum, [, count]) => sum + count, 0);
      if (subscribers !== holders) mismatches.push(`${kind}: ${subscribers} subscriptions ≠ ${holders} (CustomApp, ${kind}) pairs`);
      const resource = kind === 'ConfigMap' ? 'configmaps' : 'secrets';
      for (const namespace of this.world.namespaces()) {
        const count = refs.filter(([key]) => key.startsWith(`${kind}/${namespace}/`)).length;
        const open = counters.openWatchCount({ resource, namespace, user: OPERATOR_USER });
        const perObject = open === count && count <= DEFAULT_COLLAPSE_THRESHOLD;
        const collapsed = open === 1 && count >= DEFAULT_SPLIT_THRESHOLD;
        if (!(perObject || collapsed))
          mismatches.push(`${kind} in ${namespace}: ${open} open watches on the server for ${count} referenced objects`);
      }
    }
    for (const resource of ['customapps', 'deployments', 'services']) {
      const open = counters.openWatchCount({ resource, user: OPERATOR_USER });
      if (open !== 1) mismatches.push(`${open} open ${resource} watches on the server (one informer)`);
    }
    const server =
      counters.openWatchCount({ resource: 'configmaps', user: OPERATOR_USER }) +
      counters.openWatchCount({ resource: 'secrets', user: OPERATOR_USER });
    const operator = sumOf(metrics, 'customapp_watch_streams_open');
    if (server !== operator) mismatches.push(`the server has ${server} open dependency watches, the operator ${operator} streams`);
    return { mismatches, server, operator };
  }
}
