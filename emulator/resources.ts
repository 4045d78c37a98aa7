// What the emulator knows about each served resource (names, scope, verbs, subresources, strategy hooks), and the registry of them.
import type { FieldError } from './errors.js';
import type { KubeObject } from './object.js';
import type { NameRule } from './names.js';
import type { FieldGetters } from './selectors.js';
import type { TypeNode } from './typeschema.js';
import type { TableColumn } from './table.js';

/** Context handed to strategy hooks: the clock and, for Service IPs, an allocator. */
export interface StrategyContext {
  readonly now: Date;
  readonly allocateClusterIP: () => string;
}

/** How `.status` is written: only through /status, inline with the rest, or not at all (no status). */
export type StatusPolicy = 'subresource' | 'inline' | 'none';

/** When metadata.generation is bumped: never set, on any change outside metadata (and status), or on spec (and annotations). */
export type GenerationPolicy = 'none' | 'non-metadata' | 'spec' | 'spec-and-annotations';

export interface ScaleSubresource {
  readonly specReplicasPath: string;
  readonly statusReplicasPath: string;
  readonly labelSelectorPath?: string;
}

export interface ResourceType {
  readonly group: string;
  readonly version: string;
  /** Plural lower-case name, as in URLs. */
  readonly resource: string;
  readonly kind: string;
  readonly listKind: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly string[];
  /** Subresource names served under the object: "status", "scale", "token", "finalize". */
  readonly subresources: readonly string[];
  /** The collection objects live in; two resources may share one (core and events.k8s.io Events). */
  readonly storage: string;
  readonly nameRule: NameRule;
  readonly statusPolicy: StatusPolicy;
  readonly generation: GenerationPolicy;
  /** Fields usable in fieldSelector, including metadata.name and metadata.namespace. */
  readonly fieldGetters: FieldGetters;
  /** The apiserver's wording for an unsupported field selector on this kind. */
  readonly fieldSelectorStyle: 'known' | 'label';
  /** Whether PUT may create a missing object (AllowCreateOnUpdate). */
  readonly createOnUpdate: boolean;
  /** Whether an update without metadata.resourceVersion is accepted (AllowUnconditionalUpdate). */
  readonly unconditionalUpdate: boolean;
  /** Whether strategic merge patch is accepted (built-in kinds only). */
  readonly strategicMerge: boolean;
  /** The root TypeNode, for patches, apply, managedFields and field validation. */
  readonly schema: () => TypeNode;
  /** The OpenAPI schema name of a built-in kind ("io.k8s.api.core.v1.ConfigMap"). */
  readonly openapiName?: string;
  readonly scale?: ScaleSubresource;
  /** Server-side printing columns (kubectl get). */
  readonly columns: () => readonly TableColumn[];
  /** Converts an object of this resource into its storage form, and back (e.g. events.k8s.io/v1 ↔ core/v1 Event). */
  readonly toStorage?: (obj: KubeObject) => KubeObject;
  readonly fromStorage?: (obj: KubeObject) => KubeObject;
  /** Fills defaults in place, like the apiserver's decoding does (before admission and validation). */
  readonly applyDefaults?: (obj: KubeObject) => void;
  /** Drops the fields the schema does not declare, in place; returns their paths (for fieldValidation). */
  readonly prune: (obj: KubeObject) => string[];
  /** Kind-specific create preparation after generic metadata handling (Secret stringData, Service IPs). */
  readonly prepareForCreate?: (obj: KubeObject, ctx: StrategyContext) => void;
  readonly prepareForUpdate?: (obj: KubeObject, old: KubeObject, ctx: StrategyContext) => void;
  /** Resets what /status may not change: everything but status for custom resources, spec for built-ins. */
  readonly prepareForStatusUpdate?: (obj: KubeObject, old: KubeObject) => void;
  /** Kind-specific changes when deletion starts (a CRD gets its cleanup finalizer and Terminating condition). */
  readonly prepareForDeletion?: (obj: KubeObject, now: Date) => void;
  /** Kind-specific validation, returning field errors (metadata is validated generically). */
  readonly validate?: (obj: KubeObject, old: KubeObject | undefined) => FieldError[];
}

export function groupVersion(rt: { group: string; version: string }): string {
  return rt.group === '' ? rt.version : `${rt.group}/${rt.version}`;
}

/** The served resources, indexed for URL routing and discovery; custom resources come and go with their CRDs. */
export class ResourceRegistry {
  private readonly byGvr = new Map<string, ResourceType>();
  private readonly builtinGroups: string[] = [];
  private readonly customGroups: string[] = [];
  private version = 0;

  constructor(builtins: readonly ResourceType[]) {
    for (const rt of builtins) {
      this.byGvr.set(gvrKey(rt.group, rt.version, rt.resource), rt);
      if (!this.builtinGroups.includes(rt.group)) this.builtinGroups.push(rt.group);
    }
  }

  /** Increases whenever a custom resource type is added or removed (discovery caches key on it). */
  get generation(): number {
    return this.version;
  }

  get(group: string, version: string, resource: string): ResourceType | undefined {
    return this.byGvr.get(gvrKey(group, version, resource));
  }

  /** Every served resource of a group/version, in registration order. */
  resourcesOf(group: string, version: string): ResourceType[] {
    return [...this.byGvr.values()].filter((rt) => rt.group === group && rt.version === version);
  }

  all(): ResourceType[] {
    return [...this.byGvr.values()];
  }

  /** The groups in discovery order: built-in groups first, then custom groups in order of creation. */
  groups(): string[] {
    return [...this.builtinGroups, ...this.customGroups].filter((g) => this.versionsOf(g).length > 0);
  }

  /** Whether the group is built in (its unknown paths answer a NotFound Status), not served by CRDs only ("404 page not found"). */
  isBuiltinGroup(group: string): boolean {
    return this.builtinGroups.includes(group);
  }

  /** The versions served for a group, the preferred one first. */
  versionsOf(group: string): string[] {
    const versions: string[] = [];
    for (const rt of this.byGvr.values()) if (rt.group === group && !versions.includes(rt.version)) versions.push(rt.version);
    return versions;
  }

  /** Adds or replaces the versions served for a custom resource (from its CRD). */
  setCustom(group: string, resource: string, versions: readonly ResourceType[]): void {
    this.removeCustom(group, resource, false);
    for (const rt of versions) this.byGvr.set(gvrKey(rt.group, rt.version, rt.resource), rt);
    if (!this.customGroups.includes(group) && !this.builtinGroups.includes(group)) this.customGroups.push(group);
    this.version++;
  }

  removeCustom(group: string, resource: string, bump = true): void {
    for (const [key, rt] of this.byGvr) if (rt.group === group && rt.resource === resource) this.byGvr.delete(key);
    if (this.versionsOf(group).length === 0) {
      const i = this.customGroups.indexOf(group);
      if (i >= 0) this.customGroups.splice(i, 1);
    }
    if (bump) this.version++;
  }

  /** The resource stored in a collection, at any version (the first registered). */
  byStorage(storage: string): ResourceType | undefined {
    for (const rt of this.byGvr.values()) if (rt.storage === storage && rt.toStorage === undefined) return rt;
    return undefined;
  }

  /** Finds a resource by kind within an apiVersion ("apps/v1", "Deployment"), for ownerReferences and RBAC. */
  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    for (const rt of this.byGvr.values()) if (rt.group === group && rt.version === version && rt.kind === kind) return rt;
    return undefined;
  }
}

function gvrKey(group: string, version: string, resource: string): string {
  return `${group}/${version}/${resource}`;
}
