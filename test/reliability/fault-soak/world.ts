// The soak's own picture of the cluster it drives (names and specs, not content), and the races it tolerates.
import type { CustomApp } from '../../../operator/customapp/custom-app.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../../operator/kube/errors.js';
import { objects } from '../../support/operator-harness.js';
import { MAX_SERVICES } from '../support/limits.js';
import type { SeededRandom } from '../support/random.js';

export type RefKind = 'ConfigMap' | 'Secret';

export interface AppSpec {
  image: string;
  configMapName?: string;
  secretName?: string;
  replicas: number;
  port?: number;
}

/** The soak's own picture of what it asked for: names, not content (the cluster is the truth at the end). */
export class World {
  /** Namespace → ConfigMap and Secret names (whether they exist now). */
  readonly refs = new Map<string, Record<RefKind, Map<string, boolean>>>();
  /** `namespace/name` → spec of live CustomApps. */
  readonly live = new Map<string, AppSpec>();
  readonly everCreated = new Set<string>();
  /** CustomApps whose Deployment the operator is about to update (the competing writer races it there first). */
  private readonly changed: string[] = [];
  private version = 0;

  constructor(readonly random: SeededRandom) {}

  nextValue(): string {
    this.version += 1;
    return `v${this.version}`;
  }

  /** Notes that the operator is about to write these CustomApps' Deployments. */
  touched(...keys: string[]): void {
    this.changed.push(...keys);
    this.changed.splice(0, Math.max(0, this.changed.length - 5));
  }

  /** The CustomApp whose Deployment was most recently due for an update, if any is left. */
  takeTouched(): string | undefined {
    return this.changed.pop();
  }

  /** The live CustomApps that reference a ConfigMap or Secret. */
  referencing(namespace: string, kind: RefKind, name: string): string[] {
    return [...this.live]
      .filter(([key, spec]) => key.startsWith(`${namespace}/`) && (kind === 'ConfigMap' ? spec.configMapName : spec.secretName) === name)
      .map(([key]) => key);
  }

  namespaces(): string[] {
    return [...this.refs.keys()];
  }

  refNames(namespace: string, kind: RefKind, existing?: boolean): string[] {
    return [...this.refs.get(namespace)![kind]].filter(([, exists]) => existing === undefined || exists === existing).map(([name]) => name);
  }

  randomSpec(namespace: string): AppSpec {
    const random = this.random;
    return {
      image: `example/soak:${random.int(1000)}`,
      configMapName: random.chance(0.9) ? random.pick(this.refNames(namespace, 'ConfigMap')) : undefined,
      secretName: random.chance(0.7) ? random.pick(this.refNames(namespace, 'Secret')) : undefined,
      replicas: 1 + random.int(3),
      port: random.chance(0.3) ? this.randomPort() : undefined,
    };
  }

  /** A port for a CustomApp, or undefined when the live Services would exceed {@link MAX_SERVICES}. */
  randomPort(): number | undefined {
    const ported = [...this.live.values()].filter((spec) => spec.port).length;
    return ported < MAX_SERVICES ? 8000 + this.random.int(100) : undefined;
  }
}

/** Namespace sizes from a seed: some far past the collapse threshold, some below the split threshold, some between. */
export function namespaceSizes(total: number, random: SeededRandom): number[] {
  const sizes: number[] = [];
  for (let left = total; left > 0; ) {
    const size = Math.min(left, random.pick([2, 3, 4, 6, 8, 9, 14, 25, 40, 80]));
    sizes.push(size);
    left -= size;
  }
  return sizes;
}

/** Errors of the soak's own requests that are races with its earlier requests (404, 409), not failures. */
export const tolerated = (error: unknown): boolean => isNotFound(error) || isConflict(error) || isAlreadyExists(error);

export function customApp(namespace: string, name: string, spec: AppSpec): CustomApp {
  return objects.customApp(namespace, name, { ...spec });
}
