// The apiextensions controllers: serve a CRD's resources as soon as it is stored, mark it Established, and on
// deletion delete its custom resources before releasing the cleanup finalizer.
import type { Api } from '../api.js';
import type { ControllerQueue } from '../controllers/queue.js';
import { deepCopy, isObject, type KubeObject, timestamp } from '../object.js';
import type { ResourceRegistry, ResourceType } from '../resources.js';
import type { Collection, StoreEvent } from '../store.js';
import { crdNames, customResourceTypes } from './definition.js';

type Obj = Record<string, any>;

export const cleanupFinalizer = 'customresourcecleanup.apiextensions.k8s.io';

export function crdStorage(crd: KubeObject): string {
  return `${(crd.spec as Obj).group}/${crdNames(crd).plural}`;
}

function storageVersion(crd: KubeObject): string | undefined {
  return ((crd.spec as Obj).versions ?? []).find((v: Obj) => v.storage === true)?.name;
}

export function setCondition(status: Obj, condition: { type: string; status: string; reason: string; message: string }, now: Date): void {
  const conditions: Obj[] = Array.isArray(status.conditions) ? [...status.conditions] : [];
  const i = conditions.findIndex((c) => c.type === condition.type);
  const previous = i >= 0 ? conditions[i] : undefined;
  const next = {
    type: condition.type,
    status: condition.status,
    lastTransitionTime: previous !== undefined && previous.status === condition.status ? previous.lastTransitionTime : timestamp(now),
    reason: condition.reason,
    message: condition.message,
  };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
  status.conditions = conditions;
}

/** CRD strategy hooks (status on create and update, cleanup on delete), as the apiextensions registry does them. */
export const crdStrategy = {
  prepareForCreate(crd: KubeObject): void {
    const version = storageVersion(crd);
    (crd as Obj).status = {
      conditions: null,
      acceptedNames: { plural: '', kind: '' },
      storedVersions: version === undefined ? [] : [version],
    };
  },
  prepareForUpdate(crd: KubeObject, old: KubeObject): void {
    const status: Obj = deepCopy(isObject(old.status) ? old.status : {});
    const version = storageVersion(crd);
    const stored: string[] = Array.isArray(status.storedVersions) ? status.storedVersions : [];
    if (version !== undefined && !stored.includes(version)) status.storedVersions = [...stored, version];
    (crd as Obj).status = status;
  },
  prepareForDeletion(crd: KubeObject, now: Date): void {
    const finalizers = crd.metadata.finalizers ?? [];
    if (!finalizers.includes(cleanupFinalizer)) crd.metadata.finalizers = [...finalizers, cleanupFinalizer];
    const status: Obj = deepCopy(isObject(crd.status) ? crd.status : {});
    setCondition(
      status,
      {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      },
      now,
    );
    (crd as Obj).status = status;
  },
};

/** Whether an update makes the apiserver rebuild a CRD's storage: a new generation (a spec change) or new accepted names. */
function storageChanged(previous: KubeObject, current: KubeObject): boolean {
  const accepted = (crd: KubeObject): string => JSON.stringify((crd.status as Obj | undefined)?.acceptedNames ?? null);
  return previous.metadata.generation !== current.metadata.generation || accepted(previous) !== accepted(current);
}

export class CrdController {
  /**
   * @param onRemoved called when a CRD's storage is torn down, as the apiserver's crdHandler does when the CRD is
   * deleted or its generation or accepted names change: the open watches of its resources end there (a client's
   * next request meets the new state, a 404 when it is no longer served)
   */
  constructor(
    private readonly api: Api,
    private readonly registry: ResourceRegistry,
    private readonly queue: ControllerQueue,
    private readonly crdType: ResourceType,
    private readonly onRemoved: (group: string, resource: string) => void = () => undefined,
  ) {}

  start(): void {
    this.api.store.listeners.add((collection, event) => this.observe(collection, event));
    for (const stored of this.api.collectionOf(this.crdType).objects.values()) this.serve(stored.object);
  }

  private observe(collection: Collection, event: StoreEvent): void {
    if (collection.name === this.crdType.storage) {
      if (event.type === 'DELETED') {
        const spec = event.object.spec as Obj;
        const plural = crdNames(event.object).plural;
        this.registry.removeCustom(spec.group, plural);
        this.onRemoved(spec.group, plural);
        return;
      }
      const previous = event.previous;
      if (event.type === 'MODIFIED' && previous !== undefined && storageChanged(previous, event.object)) {
        this.onRemoved((previous.spec as Obj).group, crdNames(previous).plural);
      }
      this.serve(event.object);
      return;
    }
    if (event.type === 'DELETED') {
      const crd = this.terminatingOwnerOf(collection.name);
      if (crd !== undefined) this.queue.enqueue('crd-cleanup', () => this.cleanup(crd.metadata.name!));
    }
  }

  private terminatingOwnerOf(storage: string): KubeObject | undefined {
    for (const stored of this.api.collectionOf(this.crdType).objects.values()) {
      if (stored.object.metadata.deletionTimestamp !== undefined && crdStorage(stored.object) === storage) return stored.object;
    }
    return undefined;
  }

  /** Registers the CRD's versions synchronously (discovery and the endpoints update at once), then establishes it. */
  private serve(crd: KubeObject): void {
    const spec = crd.spec as Obj;
    if (crd.metadata.deletionTimestamp === undefined) {
      this.registry.setCustom(spec.group, crdNames(crd).plural, customResourceTypes(crd));
      const conditions: Obj[] = (crd.status as Obj)?.conditions ?? [];
      if (!conditions.some((c) => c.type === 'Established' && c.status === 'True')) {
        this.queue.enqueue('crd-establish', () => this.establish(crd.metadata.name!));
      }
    } else if ((crd.metadata.finalizers ?? []).includes(cleanupFinalizer)) {
      this.queue.enqueue('crd-cleanup', () => this.cleanup(crd.metadata.name!));
    }
  }

  private establish(name: string): void {
    const stored = this.api.getStored(this.crdType, '', name);
    if (stored === undefined || stored.object.metadata.deletionTimestamp !== undefined) return;
    const crd = deepCopy(stored.object);
    const names = crdNames(crd);
    const status: Obj = isObject(crd.status) ? (crd.status as Obj) : {};
    const accepted: Obj = { plural: names.plural, singular: names.singular };
    if (names.shortNames.length > 0) accepted.shortNames = names.shortNames;
    accepted.kind = names.kind;
    accepted.listKind = names.listKind;
    if (names.categories.length > 0) accepted.categories = names.categories;
    status.acceptedNames = accepted;
    const now = this.api.now();
    setCondition(status, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, now);
    setCondition(
      status,
      { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
      now,
    );
    crd.status = status;
    this.api.writeAsController(this.crdType, crd, { manager: 'kube-apiserver', subresource: 'status' });
  }

  private cleanup(name: string): void {
    const stored = this.api.getStored(this.crdType, '', name);
    if (stored === undefined) return;
    const crd = stored.object;
    const types = this.registry.all().filter((rt) => rt.storage === crdStorage(crd));
    const collection = this.api.store.collection(crdStorage(crd));
    if (collection.objects.size === 0 || types.length === 0) {
      this.api.removeFinalizer(this.crdType, crd, cleanupFinalizer);
      return;
    }
    const conditions: Obj[] = (crd.status as Obj)?.conditions ?? [];
    if (!conditions.some((c) => c.type === 'Terminating' && c.reason === 'InstanceDeletionInProgress')) {
      const next = deepCopy(crd);
      setCondition(
        next.status as Obj,
        { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' },
        this.api.now(),
      );
      this.api.writeAsController(this.crdType, next, { manager: 'kube-apiserver', subresource: 'status' });
    }
    for (const item of [...collection.objects.values()]) {
      if (item.object.metadata.deletionTimestamp !== undefined) continue;
      this.api.delete(types[0], item.object.metadata.namespace ?? '', item.object.metadata.name!, {});
    }
    if (collection.objects.size === 0)
      this.api.removeFinalizer(this.crdType, this.api.getStored(this.crdType, '', name)!.object, cleanupFinalizer);
  }
}
