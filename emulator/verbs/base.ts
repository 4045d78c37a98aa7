// What every verb shares: the store, the resource registry, the clock, and the stored and served forms of an object.
import { notFound } from '../errors.js';
import { canonicalObject } from '../metadata.js';
import { type KubeObject, objectKey, sortedKeys } from '../object.js';
import { groupVersion, type ResourceRegistry, type ResourceType, type StrategyContext } from '../resources.js';
import type { Collection, Store, StoredObject } from '../store.js';
import { ClusterIpAllocator } from './cluster-ip.js';
import type { ApiOptions } from './types.js';

export class ApiBase {
  private readonly clusterIPs: ClusterIpAllocator;

  constructor(
    readonly store: Store,
    readonly registry: ResourceRegistry,
    readonly options: ApiOptions,
  ) {
    this.clusterIPs = new ClusterIpAllocator(store);
  }

  now(): Date {
    return this.options.clock();
  }

  collectionOf(rt: ResourceType): Collection {
    return this.store.collection(rt.storage);
  }

  /** The stored form: Go field order for built-in kinds, sorted keys for custom resources (as unstructured JSON). */
  canonical(rt: ResourceType, obj: KubeObject): KubeObject {
    obj.metadata.resourceVersion ??= '';
    return rt.strategicMerge ? canonicalObject(obj) : sortedKeys(obj);
  }

  /** The object in the resource's own version and shape (events.k8s.io views convert from storage). */
  present(rt: ResourceType, obj: KubeObject): KubeObject {
    if (rt.fromStorage !== undefined) return rt.fromStorage(obj);
    if (obj.apiVersion !== groupVersion(rt)) return { ...obj, apiVersion: groupVersion(rt) };
    return obj;
  }

  /** What a resource's strategy may use while it prepares a create or an update. */
  strategyContext(): StrategyContext {
    return { now: this.now(), allocateClusterIP: () => this.clusterIPs.allocate() };
  }

  get(rt: ResourceType, namespace: string, name: string): KubeObject {
    const stored = this.collectionOf(rt).objects.get(objectKey(rt.namespaced ? namespace : undefined, name));
    if (stored === undefined) throw notFound(rt, name);
    return this.present(rt, stored.object);
  }

  getStored(rt: ResourceType, namespace: string, name: string): StoredObject | undefined {
    return this.collectionOf(rt).objects.get(objectKey(rt.namespaced ? namespace : undefined, name));
  }
}
