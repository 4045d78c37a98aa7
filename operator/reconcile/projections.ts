// The ConfigMaps and Secrets a CustomApp lists (spec.configMaps, spec.secrets): their refs, and how the container reads them.
import type { CustomApp } from '../customapp/custom-app.js';
import type { DependencyKind, DependencyRef } from '../dependencies/source.js';
import type { Container, EnvFromSource, PodTemplate } from '../kube/objects.js';
import { hashKey, parseJsonObject } from '../podtemplate/hash-annotation.js';

/** One entry of `spec.configMaps` or `spec.secrets`, with its kind. */
export interface Projection {
  readonly kind: DependencyKind;
  readonly name: string;
  /** Absent: environment variables. Present: a read-only volume mounted there. */
  readonly mountPath?: string;
  /** The keys projected and followed; absent or empty: the whole object. */
  readonly keys?: readonly string[];
  readonly optional: boolean;
}

/**
 * What is known of one listed object: present with the hash it rolls out with (of its keys alone when it lists keys)
 * and the listed keys it lacks, or missing.
 */
export type ProjectedView = Projection &
  (
    | {
        readonly phase: 'present';
        readonly hash: string;
        readonly missingKeys?: readonly string[];
        /** One digest per listed key the object has (for a projection with keys, when the source keeps digests). */
        readonly keyDigests?: ReadonlyMap<string, string>;
      }
    | { readonly phase: 'missing' }
  );

/**
 * Why a listed object keeps the pods from starting: missing, or lacking a listed key, and not `optional` (the kubelet
 * refuses such a pod). Undefined when the pods can start.
 */
export function blocking(view: ProjectedView): string | undefined {
  if (view.optional) return undefined;
  if (view.phase === 'missing') return `${view.kind} "${view.name}" not found`;
  if (view.missingKeys && view.missingKeys.length > 0) {
    return `${view.kind} "${view.name}" lacks key${view.missingKeys.length > 1 ? 's' : ''} ${view.missingKeys.map((key) => `"${key}"`).join(', ')}`;
  }
  return undefined;
}

/** The entries of `spec.configMaps`, then `spec.secrets`, in the order the spec lists them. */
export function projections(app: CustomApp): Projection[] {
  const entries = (kind: DependencyKind, list: CustomApp['spec']['configMaps']): Projection[] =>
    (list ?? []).map(({ name, mountPath, keys, optional }) => ({
      kind,
      name,
      ...(mountPath ? { mountPath } : {}),
      ...(keys && keys.length > 0 ? { keys: [...keys] } : {}),
      optional: optional === true,
    }));
  return [...entries('ConfigMap', app.spec.configMaps), ...entries('Secret', app.spec.secrets)];
}

/**
 * The ref a projection is followed by: with its keys, so that the registry's state is the hash of those keys alone and
 * a change to another key neither emits nor rolls.
 */
export function projectionRef(namespace: string, projection: Projection): DependencyRef {
  const { kind, name, keys } = projection;
  return { kind, namespace, name, ...(keys ? { keys } : {}) };
}

/** `ConfigMap/<name>`: a projection's key in the pod template's hashes annotation (one entry per listed object). */
export function projectionKey(projection: Projection): string {
  return hashKey(projection.kind, projection.name);
}

type Element<T> = T extends readonly (infer E)[] ? E : never;

/** What the app container and the pod read the projections through. */
export interface ProjectedSources {
  readonly envFrom: EnvFromSource[];
  readonly env: Element<Container['env']>[];
  readonly volumes: Element<PodTemplate['spec']['volumes']>[];
  readonly volumeMounts: Element<Container['volumeMounts']>[];
}

/**
 * The envFrom, env, volumes and mounts of the projections, in spec order. Without `mountPath`: envFrom of the whole
 * object, or one variable per listed key (named after the key) through `configMapKeyRef`/`secretKeyRef`. With it: a
 * read-only volume, with `items` for the listed keys (each file named after its key). `optional` is always written,
 * true or false (the API server stores either as given), so that turning it off is drift.
 * Volumes are named by kind and position (`configmap-0`, `secret-1`): an object name may be longer than a volume name.
 */
export function projectedSources(list: readonly Projection[]): ProjectedSources {
  const sources: ProjectedSources = { envFrom: [], env: [], volumes: [], volumeMounts: [] };
  const position = { ConfigMap: 0, Secret: 0 };
  for (const projection of list) {
    const { kind, name, mountPath, keys, optional } = projection;
    // Written both ways: drift compares only the fields the desired object sets, so an `optional` left out when false
    // would leave a live `optional: true` in place after the user turned it off.
    const maybe = { optional };
    if (mountPath === undefined) {
      if (!keys) {
        sources.envFrom.push(kind === 'ConfigMap' ? { configMapRef: { name, ...maybe } } : { secretRef: { name, ...maybe } });
        continue;
      }
      for (const key of keys) {
        const selector = { name, key, ...maybe };
        sources.env.push({
          name: key,
          valueFrom: kind === 'ConfigMap' ? { configMapKeyRef: selector } : { secretKeyRef: selector },
        });
      }
      continue;
    }
    const volume = `${kind === 'ConfigMap' ? 'configmap' : 'secret'}-${position[kind]++}`;
    const items = keys ? { items: keys.map((key) => ({ key, path: key })) } : {};
    sources.volumes.push(
      kind === 'ConfigMap'
        ? { name: volume, configMap: { name, ...items, ...maybe } }
        : { name: volume, secret: { secretName: name, ...items, ...maybe } },
    );
    sources.volumeMounts.push({ name: volume, mountPath, readOnly: true });
  }
  return sources;
}

/** Per listed object read by keys (`ConfigMap/<name>`), the digest of each listed key the pods run with. */
export type KeyDigests = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** The annotation value: objects and keys sorted, so that the same digests always write the same bytes. */
export function encodeKeyDigests(digests: KeyDigests): string {
  const sorted = <T>(entries: Iterable<[string, T]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(Object.fromEntries(sorted(digests).map(([object, keys]) => [object, Object.fromEntries(sorted(keys))])));
}

/** The digests an annotation value holds; an absent or malformed value (edited by hand) holds none, so no key is named. */
export function decodeKeyDigests(value: string | undefined): KeyDigests {
  const digests = new Map<string, ReadonlyMap<string, string>>();
  for (const [object, keys] of Object.entries(parseJsonObject(value) ?? {})) {
    if (typeof keys !== 'object' || keys === null || Array.isArray(keys)) continue;
    const entries = Object.entries(keys as Record<string, unknown>).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    );
    digests.set(object, new Map(entries));
  }
  return digests;
}

/**
 * The listed keys whose digest differs between what the pods run with and now (a key gone or added counts), or
 * undefined when either side is not known: the change is then named by its object alone.
 */
export function changedKeys(
  keys: readonly string[] | undefined,
  before: ReadonlyMap<string, string> | undefined,
  now: ReadonlyMap<string, string> | undefined,
): string[] | undefined {
  if (!keys || !before || !now) return undefined;
  const changed = keys.filter((key) => before.get(key) !== now.get(key));
  return changed.length > 0 ? changed : undefined;
}
