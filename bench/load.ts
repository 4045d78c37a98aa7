// The benchmark's load: which namespaces, ConfigMaps and CustomApps a run creates, and the writes of its phases.
import { API_VERSION, KIND } from '../api/customapp.js';
import type { KubeObject } from '../operator/kube/objects.js';

/** The image every CustomApp starts with; spec updates move to {@link imageAt}. */
export const FIRST_IMAGE = 'registry.example.com/bench/app:1.0.0';

/** The image of the `n`th spec update of an app. */
export function imageAt(n: number): string {
  return `registry.example.com/bench/app:1.${n}.0`;
}

/** What a ConfigMap is for in the load. */
export type ConfigMapRole = 'own' | 'shared' | 'handoff' | 'unrelated';

export interface PlannedConfigMap {
  readonly namespace: string;
  readonly name: string;
  readonly role: ConfigMapRole;
}

export interface PlannedApp {
  readonly namespace: string;
  readonly name: string;
  /** The ConfigMap it names at creation. */
  readonly configMapName: string;
  /** True when it names its namespace's shared ConfigMap. */
  readonly sharer: boolean;
  /** For the sharers that switch in the spec-update phase: the ConfigMap of their own they switch to. */
  readonly handoffTo?: string;
}

/** Every object of one run, in creation order (namespaces, then ConfigMaps, then CustomApps). */
export interface LoadPlan {
  readonly size: number;
  readonly namespaces: readonly string[];
  readonly configMaps: readonly PlannedConfigMap[];
  readonly apps: readonly PlannedApp[];
}

export interface LoadShape {
  readonly size: number;
  readonly namespaces: number;
  readonly unrelatedConfigMaps: number;
  /** Share of each namespace's CustomApps that name the namespace's one shared ConfigMap. @default 0.1 */
  readonly sharedShare?: number;
  /** Share of those sharers that switch to a ConfigMap of their own in the spec-update phase. */
  readonly handoffShare: number;
}

export const SHARED_CONFIGMAP = 'shared-config';
const pad = (n: number): string => String(n).padStart(5, '0');

/**
 * Plans a run: `size` CustomApps spread evenly over `namespaces` namespaces (`bench-0`, …). In each namespace
 * every tenth CustomApp (10%) names the namespace's `shared-config`; the others name a ConfigMap of their own
 * (`app-NNNNN-config`). A share of the sharers gets a spare ConfigMap (`app-NNNNN-own-config`) to switch to.
 * The unrelated ConfigMaps (`unrelated-NNNNN`) are spread over the same namespaces, so that a namespace-wide
 * watch sees them too.
 */
export function planLoad(shape: LoadShape): LoadPlan {
  const namespaces = Array.from({ length: shape.namespaces }, (_, index) => `bench-${index}`);
  const sharedEvery = Math.round(1 / (shape.sharedShare ?? 0.1));
  const configMaps: PlannedConfigMap[] = namespaces.map((namespace) => ({ namespace, name: SHARED_CONFIGMAP, role: 'shared' }));
  const apps: PlannedApp[] = [];
  const sharersPerNamespace = new Map<string, number>();
  for (let index = 0; index < shape.size; index += 1) {
    const namespace = namespaces[index % namespaces.length]!;
    const name = `app-${pad(index)}`;
    const slot = Math.floor(index / namespaces.length);
    if (slot % sharedEvery === 0) {
      const sharerIndex = sharersPerNamespace.get(namespace) ?? 0;
      sharersPerNamespace.set(namespace, sharerIndex + 1);
      const switches = sharerIndex % Math.round(1 / shape.handoffShare) === 0;
      const handoffTo = switches ? `${name}-own-config` : undefined;
      if (handoffTo) configMaps.push({ namespace, name: handoffTo, role: 'handoff' });
      apps.push({ namespace, name, configMapName: SHARED_CONFIGMAP, sharer: true, handoffTo });
    } else {
      configMaps.push({ namespace, name: `${name}-config`, role: 'own' });
      apps.push({ namespace, name, configMapName: `${name}-config`, sharer: false });
    }
  }
  for (let index = 0; index < shape.unrelatedConfigMaps; index += 1) {
    configMaps.push({ namespace: namespaces[index % namespaces.length]!, name: `unrelated-${pad(index)}`, role: 'unrelated' });
  }
  return { size: shape.size, namespaces, configMaps, apps };
}

/** About 1 KiB of properties, different for every ConfigMap and version. */
export function configMapData(name: string, version: number): Record<string, string> {
  const lines = [`# ${name}, version ${version}`];
  for (let line = 0; line < 20; line += 1) lines.push(`setting.${line}=${name}-v${version}-${line}-abcdefghijklmnop`);
  return { 'app.properties': `${lines.join('\n')}\n` };
}

export function namespaceObject(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

export function configMapObject(configMap: PlannedConfigMap, version = 0): KubeObject & { data: Record<string, string> } {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: configMap.name, namespace: configMap.namespace, labels: { 'bench.app.example.com/role': configMap.role } },
    data: configMapData(configMap.name, version),
  };
}

export function customAppObject(app: PlannedApp): KubeObject & { spec: Record<string, unknown> } {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: app.name, namespace: app.namespace },
    spec: { image: FIRST_IMAGE, configMapName: app.configMapName, replicas: 1 },
  };
}

/** Runs `work` on every item with at most `concurrency` in flight; rejects with the first failure. */
export async function forEachConcurrent<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        await work(items[index]!, index);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failure !== undefined) throw failure;
}
