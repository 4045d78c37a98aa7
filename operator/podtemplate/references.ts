// The ConfigMaps and Secrets a pod template uses: envFrom, env valueFrom, volumes and projected sources, of every container.
import type { DependencyKind } from '../dependencies/source.js';
import type { PodTemplate } from '../kube/objects.js';

/** One ConfigMap or Secret a pod template uses (in the pod's own namespace). */
export interface TemplateReference {
  readonly kind: DependencyKind;
  readonly name: string;
  /** True when every use is marked `optional: true`: the pods start without it, so it may be missing. */
  readonly optional: boolean;
  /**
   * The keys the pods read, when every use names its keys (env `configMapKeyRef`/`secretKeyRef`, volume `items`);
   * undefined when some use takes the whole object (envFrom, a volume without items).
   */
  readonly keys?: readonly string[];
}

interface Use {
  readonly kind: DependencyKind;
  readonly name?: string;
  readonly optional?: boolean;
  /** undefined: the whole object. */
  readonly keys?: readonly string[];
}

type Items = readonly { readonly key: string }[] | undefined;

const itemKeys = (items: Items): readonly string[] | undefined => (items && items.length > 0 ? items.map((item) => item.key) : undefined);

/** Every use in the template's init containers, containers and volumes, in document order. */
function uses(template: PodTemplate): Use[] {
  const found: Use[] = [];
  const spec = template.spec ?? { containers: [] };
  for (const container of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    for (const { configMapRef: configMap, secretRef: secret } of container.envFrom ?? []) {
      if (configMap) found.push({ kind: 'ConfigMap', name: configMap.name, optional: configMap.optional });
      if (secret) found.push({ kind: 'Secret', name: secret.name, optional: secret.optional });
    }
    for (const { valueFrom } of container.env ?? []) {
      const configMap = valueFrom?.configMapKeyRef;
      const secret = valueFrom?.secretKeyRef;
      if (configMap) found.push({ kind: 'ConfigMap', name: configMap.name, optional: configMap.optional, keys: [configMap.key] });
      if (secret) found.push({ kind: 'Secret', name: secret.name, optional: secret.optional, keys: [secret.key] });
    }
  }
  for (const { configMap, secret, projected } of spec.volumes ?? []) {
    if (configMap) found.push({ kind: 'ConfigMap', name: configMap.name, optional: configMap.optional, keys: itemKeys(configMap.items) });
    if (secret) found.push({ kind: 'Secret', name: secret.secretName, optional: secret.optional, keys: itemKeys(secret.items) });
    for (const source of projected?.sources ?? []) {
      const { configMap: projectedMap, secret: projectedSecret } = source;
      if (projectedMap) {
        found.push({ kind: 'ConfigMap', name: projectedMap.name, optional: projectedMap.optional, keys: itemKeys(projectedMap.items) });
      }
      if (projectedSecret) {
        found.push({
          kind: 'Secret',
          name: projectedSecret.name,
          optional: projectedSecret.optional,
          keys: itemKeys(projectedSecret.items),
        });
      }
    }
  }
  return found;
}

/**
 * The ConfigMaps and Secrets `template` uses, each once, in the order first used: from envFrom and env `valueFrom`
 * of every container and init container, and from `configMap`, `secret` and `projected` volumes. A reference is
 * optional only when every use of it is, and names keys only when every use does (their union). A use without a
 * name (invalid, but the API server lets an empty `name` through for a ConfigMap) is left out.
 */
export function templateReferences(template: PodTemplate): TemplateReference[] {
  const merged = new Map<string, { kind: DependencyKind; name: string; optional: boolean; keys: Set<string> | undefined }>();
  for (const use of uses(template)) {
    if (!use.name) continue;
    const id = `${use.kind}/${use.name}`;
    const previous = merged.get(id);
    const optional = use.optional === true;
    if (!previous) {
      merged.set(id, { kind: use.kind, name: use.name, optional, keys: use.keys ? new Set(use.keys) : undefined });
      continue;
    }
    previous.optional &&= optional;
    if (!use.keys) previous.keys = undefined;
    else if (previous.keys) for (const key of use.keys) previous.keys.add(key);
  }
  return [...merged.values()].map(({ kind, name, optional, keys }) => ({
    kind,
    name,
    optional,
    ...(keys ? { keys: [...keys].sort() } : {}),
  }));
}
