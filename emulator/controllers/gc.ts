// The garbage collector (kube-controller-manager's, which envtest lacks): deletes dependents whose owners are gone
// (background), orphans dependents (orphan finalizer), and deletes dependents before their owner (foregroundDeletion).
import type { Api } from '../api.js';
import { ApiError } from '../errors.js';
import { deepCopy, type KubeObject, type OwnerReference } from '../object.js';
import type { ResourceRegistry, ResourceType } from '../resources.js';
import type { Collection, StoreEvent } from '../store.js';
import type { ControllerQueue } from './queue.js';
import { StoreController } from './store-controller.js';

const sep = '\u0000';

export class GarbageCollector extends StoreController {
  /** owner uid → "storage\0key" of its dependents. */
  private readonly dependents = new Map<string, Set<string>>();

  constructor(
    api: Api,
    private readonly registry: ResourceRegistry,
    queue: ControllerQueue,
  ) {
    super(api, queue);
  }

  protected observe(collection: Collection, event: StoreEvent): void {
    const id = `${collection.name}${sep}${event.key}`;
    const before = event.previous?.metadata.ownerReferences ?? [];
    const after = event.type === 'DELETED' ? [] : (event.object.metadata.ownerReferences ?? []);
    for (const ref of before) if (!after.some((r) => r.uid === ref.uid)) this.dependents.get(ref.uid)?.delete(id);
    for (const ref of after) {
      let set = this.dependents.get(ref.uid);
      if (set === undefined) this.dependents.set(ref.uid, (set = new Set()));
      set.add(id);
    }
    if (event.type === 'DELETED') {
      const uid = event.object.metadata.uid;
      if (uid !== undefined) {
        for (const dependent of this.dependents.get(uid) ?? []) this.queue.enqueue('gc', () => this.collect(dependent));
        this.dependents.delete(uid);
      }
      const namespace = event.object.metadata.namespace;
      for (const ref of before) this.queue.enqueue('gc-foreground', () => this.foreground({ ...ref, namespace }));
      return;
    }
    const refsChanged = event.type === 'ADDED' || before.length !== after.length || after.some((r) => !before.some((b) => b.uid === r.uid));
    if (after.length > 0 && refsChanged) this.queue.enqueue('gc', () => this.collect(id));
    const finalizers = event.object.metadata.finalizers ?? [];
    if (event.object.metadata.deletionTimestamp !== undefined) {
      const owner = this.refTo(event.object);
      if (finalizers.includes('orphan')) this.queue.enqueue('gc-orphan', () => this.orphan(owner));
      if (finalizers.includes('foregroundDeletion')) this.queue.enqueue('gc-foreground', () => this.foreground(owner));
    }
  }

  private refTo(obj: KubeObject): OwnerReference & { namespace?: string } {
    return {
      apiVersion: obj.apiVersion!,
      kind: obj.kind!,
      name: obj.metadata.name!,
      uid: obj.metadata.uid!,
      namespace: obj.metadata.namespace,
    };
  }

  private typeOf(storage: string): ResourceType | undefined {
    return this.registry.byStorage(storage);
  }

  private lookup(id: string): { rt: ResourceType; obj: KubeObject } | undefined {
    const [storage, key] = id.split(sep);
    const rt = this.typeOf(storage);
    const stored = this.api.store.collection(storage).objects.get(key);
    if (rt === undefined || stored === undefined) return undefined;
    return { rt, obj: stored.object };
  }

  /** The owner object a reference points to (same uid), or undefined when it is absent. */
  private owner(ref: OwnerReference, namespace: string | undefined): { rt: ResourceType; obj: KubeObject } | undefined {
    const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
    const rt = this.registry.byKind(ref.apiVersion, ref.kind) ?? this.registry.all().find((t) => t.group === group && t.kind === ref.kind);
    if (rt === undefined) return undefined;
    const stored = this.api.getStored(rt, rt.namespaced ? (namespace ?? '') : '', ref.name);
    if (stored === undefined || stored.object.metadata.uid !== ref.uid) return undefined;
    return { rt, obj: stored.object };
  }

  /** attemptToDeleteItem: delete a dependent whose owners are all absent; drop references to absent owners otherwise. */
  private collect(id: string): void {
    const found = this.lookup(id);
    if (found === undefined) return;
    const { rt, obj } = found;
    if (obj.metadata.deletionTimestamp !== undefined) return;
    const refs = obj.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    const present = refs.filter((ref) => this.owner(ref, obj.metadata.namespace) !== undefined);
    const waiting = present.filter((ref) => {
      const owner = this.owner(ref, obj.metadata.namespace)!;
      return owner.obj.metadata.deletionTimestamp !== undefined && (owner.obj.metadata.finalizers ?? []).includes('foregroundDeletion');
    });
    try {
      if (present.length === 0) {
        this.api.delete(rt, obj.metadata.namespace ?? '', obj.metadata.name!, { propagationPolicy: 'Background' });
      } else if (waiting.length === present.length) {
        const blocking = refs.some((r) => r.blockOwnerDeletion === true);
        this.api.delete(rt, obj.metadata.namespace ?? '', obj.metadata.name!, {
          propagationPolicy: blocking ? 'Foreground' : 'Background',
        });
      } else if (present.length < refs.length) {
        const next = deepCopy(obj);
        next.metadata.ownerReferences = present;
        this.api.writeAsController(rt, next, { manager: 'kube-controller-manager' });
      }
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
  }

  private dependentsOf(uid: string): { id: string; rt: ResourceType; obj: KubeObject }[] {
    const out: { id: string; rt: ResourceType; obj: KubeObject }[] = [];
    for (const id of this.dependents.get(uid) ?? []) {
      const found = this.lookup(id);
      if (found !== undefined) out.push({ id, ...found });
    }
    return out;
  }

  private ownerType(ref: OwnerReference): ResourceType | undefined {
    return this.registry.byKind(ref.apiVersion, ref.kind);
  }

  /** orphanDependents: remove the owner's reference from every dependent, then the orphan finalizer. */
  private orphan(ref: OwnerReference & { namespace?: string }): void {
    const rt = this.ownerType(ref);
    if (rt === undefined) return;
    for (const { rt: dependentType, obj } of this.dependentsOf(ref.uid)) {
      const next = deepCopy(obj);
      next.metadata.ownerReferences = (next.metadata.ownerReferences ?? []).filter((r) => r.uid !== ref.uid);
      if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
      this.api.writeAsController(dependentType, next, { manager: 'kube-controller-manager' });
    }
    const owner = this.api.getStored(rt, ref.namespace ?? '', ref.name);
    if (owner !== undefined && owner.object.metadata.uid === ref.uid) this.api.removeFinalizer(rt, owner.object, 'orphan');
  }

  /** Foreground deletion: delete the dependents; release the owner once no blocking dependent remains. */
  private foreground(ref: OwnerReference & { namespace?: string }): void {
    const rt = this.ownerType(ref);
    if (rt === undefined) return;
    const owner = this.api.getStored(rt, ref.namespace ?? '', ref.name);
    if (owner === undefined || owner.object.metadata.uid !== ref.uid) return;
    if (owner.object.metadata.deletionTimestamp === undefined || !(owner.object.metadata.finalizers ?? []).includes('foregroundDeletion'))
      return;
    const dependents = this.dependentsOf(ref.uid);
    for (const { id, obj } of dependents)
      if (obj.metadata.deletionTimestamp === undefined) this.queue.enqueue('gc', () => this.collect(id));
    const blocking = dependents.some(({ obj }) =>
      (obj.metadata.ownerReferences ?? []).some((r) => r.uid === ref.uid && r.blockOwnerDeletion === true),
    );
    if (!blocking) this.api.removeFinalizer(rt, owner.object, 'foregroundDeletion');
  }
}
