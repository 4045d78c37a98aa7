// The namespace controller (kube-controller-manager's, which envtest lacks): a Terminating namespace has its
// content deleted, then its "kubernetes" finalizer released, and is removed once its content is gone.
import type { Api } from '../api.js';
import { ApiError } from '../errors.js';
import { deepCopy, type KubeObject } from '../object.js';
import type { ResourceRegistry, ResourceType } from '../resources.js';
import type { Collection, StoreEvent } from '../store.js';
import type { ControllerQueue } from './queue.js';
import { StoreController } from './store-controller.js';

export class NamespaceController extends StoreController {
  constructor(
    api: Api,
    private readonly registry: ResourceRegistry,
    queue: ControllerQueue,
    private readonly namespaceType: ResourceType,
  ) {
    super(api, queue);
  }

  protected observe(collection: Collection, event: StoreEvent): void {
    if (collection.name === this.namespaceType.storage) {
      if (event.type !== 'DELETED' && event.object.metadata.deletionTimestamp !== undefined) {
        const name = event.object.metadata.name!;
        this.queue.enqueue('namespace', () => this.finalize(name));
      }
      return;
    }
    const namespace = event.object.metadata.namespace;
    if (event.type !== 'DELETED' || namespace === undefined) return;
    const ns = this.api.store.collection(this.namespaceType.storage).objects.get(namespace);
    if (ns !== undefined && ns.object.metadata.deletionTimestamp !== undefined)
      this.queue.enqueue('namespace', () => this.finalize(namespace));
  }

  /** One storage per namespaced resource (a view like events.k8s.io shares its storage's objects). */
  private namespacedTypes(): ResourceType[] {
    const seen = new Set<string>();
    const out: ResourceType[] = [];
    for (const rt of this.registry.all()) {
      if (!rt.namespaced || rt.toStorage !== undefined || seen.has(rt.storage) || !rt.verbs.includes('delete')) continue;
      seen.add(rt.storage);
      out.push(rt);
    }
    return out;
  }

  private finalize(name: string): void {
    const stored = this.api.getStored(this.namespaceType, '', name);
    if (stored === undefined || stored.object.metadata.deletionTimestamp === undefined) return;
    let remaining = 0;
    for (const rt of this.namespacedTypes()) {
      const collection = this.api.collectionOf(rt);
      for (const item of [...collection.objects.values()]) {
        if (item.object.metadata.namespace !== name) continue;
        remaining++;
        if (item.object.metadata.deletionTimestamp !== undefined) continue;
        try {
          this.api.delete(rt, name, item.object.metadata.name!, { propagationPolicy: 'Background' });
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 404)) throw e;
        }
      }
    }
    const left = this.namespacedTypes().some((rt) =>
      [...this.api.collectionOf(rt).objects.values()].some((i) => i.object.metadata.namespace === name),
    );
    if (remaining > 0 && left) return;
    const current = this.api.getStored(this.namespaceType, '', name)!.object;
    const spec = (current.spec ?? {}) as { finalizers?: string[] };
    if ((spec.finalizers ?? []).includes('kubernetes')) {
      const next: KubeObject = deepCopy(current);
      const finalizers = (spec.finalizers ?? []).filter((f) => f !== 'kubernetes');
      next.spec = finalizers.length > 0 ? { ...(next.spec as object), finalizers } : {};
      this.api.writeAsController(this.namespaceType, next, { manager: 'kube-controller-manager', subresource: 'finalize' });
    }
    const after = this.api.getStored(this.namespaceType, '', name);
    const specFinalizers = ((after?.object.spec ?? {}) as { finalizers?: string[] }).finalizers ?? [];
    if (after !== undefined && specFinalizers.length === 0 && (after.object.metadata.finalizers ?? []).length === 0) {
      this.api.store.remove(this.api.collectionOf(this.namespaceType), name);
    }
  }
}
