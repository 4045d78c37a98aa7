// The API verbs over the store (get, list, create, update, patch, delete, deletecollection): the apiserver's generic
// registry with decoding, defaulting, admission, validation, preconditions, finalizers and managedFields.
import { randomUUID } from 'node:crypto';
import type { Attributes, Authorizer, UserInfo } from './authz.js';
import {
  alreadyExists,
  ApiError,
  badRequest,
  conflict,
  expired,
  type FieldError,
  forbidden,
  forbiddenField,
  invalid,
  invalidValue,
  notFound,
  requiredValue,
  staleObject,
  tooLargeResourceVersion,
  unsupportedMediaType,
} from './errors.js';
import { FieldSet, fieldElement } from './fieldset.js';
import { builtinTypeError, type FieldValidation, unknownFieldOutcome } from './fieldvalidation.js';
import { decodeManagedFields, defaultManager, encodeManagedFields, type ManagerSet, updateManagedFields } from './managedfields.js';
import {
  canonicalObject,
  isTerminating,
  sameContent,
  standardFinalizers,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './metadata.js';
import { generatedNameSuffix } from './names.js';
import { deepCopy, deepEqual, isObject, type KubeObject, objectKey, sortedKeys, timestamp } from './object.js';
import { builtinSchemas, zeroValue } from './openapi/builtin.js';
import { applyJsonPatch, parseJsonPatch } from './patch/json-patch.js';
import { applyMergePatch } from './patch/merge-patch.js';
import { resetFields, serverSideApply } from './patch/apply.js';
import { applyStrategicMergePatch } from './patch/strategic.js';
import { groupVersion, type ResourceRegistry, type ResourceType, type StrategyContext } from './resources.js';
import {
  checkFieldSelector,
  type FieldSelector,
  fieldsMatch,
  type LabelSelector,
  labelsMatch,
  parseFieldSelector,
  parseLabelSelector,
} from './selectors.js';
import { type Collection, HistoryExpired, type Store, type StoredObject } from './store.js';

/** Per-request options of a write. */
export interface WriteContext {
  readonly user: UserInfo;
  readonly userAgent?: string;
  readonly fieldManager?: string;
  readonly dryRun: boolean;
  readonly fieldValidation: FieldValidation;
  /** Collects `Warning` headers. */
  readonly warnings: string[];
  readonly authorize: Authorizer;
}

export interface ListOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: string;
}

export interface ListResult {
  readonly items: KubeObject[];
  readonly resourceVersion: number;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

export interface DeleteOptions {
  readonly propagationPolicy?: string;
  readonly preconditions?: { uid?: string; resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
  readonly orphanDependents?: boolean;
  readonly dryRun?: boolean;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface WriteResult {
  readonly object: KubeObject;
  /** 201 for a create (POST, PUT that creates, apply that creates), else 200. */
  readonly created: boolean;
}

export type DeleteResult =
  | { readonly kind: 'object'; readonly object: KubeObject }
  | { readonly kind: 'status'; readonly object: KubeObject };

export interface ApiOptions {
  readonly clock: () => Date;
  readonly random: () => number;
}

/** Selectors of a list or watch, parsed and checked against the resource. */
export interface Selection {
  readonly namespace: string;
  readonly labels: LabelSelector;
  readonly fields: FieldSelector;
}

const continuePrefix = 'meta.k8s.io/v1';

/** The namespaces the NamespaceLifecycle admission plugin refuses to delete. */
const immortalNamespaces = ['default', 'kube-system', 'kube-public'];
/** Host addresses of the service range 10.0.0.0/16 (without the network and broadcast addresses). */
const SERVICE_RANGE_SIZE = 65_534;

export class Api {
  private nextIp = 2;

  constructor(
    readonly store: Store,
    readonly registry: ResourceRegistry,
    private readonly options: ApiOptions,
  ) {}

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

  private strategyContext(): StrategyContext {
    return { now: this.now(), allocateClusterIP: () => this.allocateClusterIP() };
  }

  /**
   * The next free address of the service range 10.0.0.0/16 (10.0.0.1 is the kubernetes Service), like the
   * apiserver's bitmap allocator; the envtest harness serves the same range.
   */
  private allocateClusterIP(): string {
    const used = new Set<string>();
    for (const stored of this.store.collection('/services').objects.values()) {
      const ip = (stored.object.spec as Record<string, unknown> | undefined)?.clusterIP;
      if (typeof ip === 'string') used.add(ip);
    }
    const size = SERVICE_RANGE_SIZE;
    for (let i = 0; i < size; i++) {
      const host = ((this.nextIp + i - 1) % size) + 1;
      const candidate = `10.0.${host >> 8}.${host & 0xff}`;
      if (!used.has(candidate)) {
        this.nextIp = (host % size) + 1;
        return candidate;
      }
    }
    throw new ApiError(500, 'InternalError', 'Internal error occurred: failed to allocate a serviceIP: range is full');
  }

  parseSelection(rt: ResourceType, namespace: string, labelSelector = '', fieldSelector = ''): Selection {
    const labels = parseLabelSelector(labelSelector);
    const fields = parseFieldSelector(fieldSelector);
    checkFieldSelector(fields, rt.fieldGetters, rt.fieldSelectorStyle);
    return { namespace, labels, fields };
  }

  /** Whether a (storage-form) object is selected; field selectors see the resource's own shape. */
  selects(rt: ResourceType, selection: Selection, obj: KubeObject): boolean {
    if (selection.namespace !== '' && obj.metadata.namespace !== selection.namespace) return false;
    if (selection.labels.length > 0 && !labelsMatch(selection.labels, obj.metadata.labels)) return false;
    if (selection.fields.length > 0 && !fieldsMatch(selection.fields, rt.fieldGetters, rt.fromStorage ? rt.fromStorage(obj) : obj))
      return false;
    return true;
  }

  get(rt: ResourceType, namespace: string, name: string): KubeObject {
    const stored = this.collectionOf(rt).objects.get(objectKey(rt.namespaced ? namespace : undefined, name));
    if (stored === undefined) throw notFound(rt, name);
    return this.present(rt, stored.object);
  }

  getStored(rt: ResourceType, namespace: string, name: string): StoredObject | undefined {
    return this.collectionOf(rt).objects.get(objectKey(rt.namespaced ? namespace : undefined, name));
  }

  list(rt: ResourceType, namespace: string, options: ListOptions): ListResult {
    const selection = this.parseSelection(rt, namespace, options.labelSelector, options.fieldSelector);
    const collection = this.collectionOf(rt);
    const rvParam = options.resourceVersion ?? '';
    const match = options.resourceVersionMatch ?? '';
    const listOptionsInvalid = (error: FieldError) => invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', [error]);
    if (match !== '' && rvParam === '')
      throw listOptionsInvalid(
        forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'),
      );
    if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
      throw listOptionsInvalid({
        type: 'FieldValueNotSupported',
        field: 'resourceVersionMatch',
        detail: `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"`,
      });
    }
    if (options.continue && rvParam !== '' && rvParam !== '0')
      throw badRequest('specifying resource version is not allowed when using continue');
    if (match === 'Exact' && rvParam === '0')
      throw listOptionsInvalid(forbiddenField('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    const requested = rvParam === '' ? 0 : parseResourceVersion(rvParam);
    if (requested > this.store.currentRv) throw tooLargeResourceVersion(requested, this.store.currentRv);

    let state: Iterable<[string, KubeObject]>;
    let listRv = this.store.currentRv;
    let start = '';
    const limit = rvParam === '0' && !options.continue ? 0 : (options.limit ?? 0);
    if (options.continue) {
      const token = decodeContinue(options.continue);
      listRv = token.rv;
      start = token.start;
      state = this.snapshot(collection, listRv, () => {
        const fresh = encodeContinue(this.store.currentRv, start);
        return new ApiError(
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
          { causes: [] },
          { 'X-Continue': fresh },
        );
      });
    } else if (match === 'Exact') {
      listRv = requested;
      state = this.snapshot(collection, requested, () =>
        expired(`too old resource version: ${requested} (${collection.compactedThrough})`),
      );
    } else {
      state = [...collection.sortedKeys()].map((k) => [k, collection.objects.get(k)!.object] as [string, KubeObject]);
    }

    const prefix = rt.namespaced && namespace !== '' ? `${namespace}/` : '';
    const items: KubeObject[] = [];
    let lastKey = '';
    let remaining = 0;
    let more = false;
    for (const [key, obj] of state) {
      if (prefix !== '' && !key.startsWith(prefix)) continue;
      const relative = `/${key.slice(prefix.length)}`;
      if (start !== '' && relative < start) continue;
      if (!this.selects(rt, selection, obj)) continue;
      if (limit > 0 && items.length >= limit) {
        more = true;
        remaining++;
        continue;
      }
      items.push(this.present(rt, obj));
      lastKey = relative;
    }
    const result: { items: KubeObject[]; resourceVersion: number; continue?: string; remainingItemCount?: number } = {
      items,
      resourceVersion: listRv,
    };
    if (more) {
      result.continue = encodeContinue(listRv, `${lastKey}\u0000`);
      if (selection.labels.length === 0 && selection.fields.length === 0) result.remainingItemCount = remaining;
    }
    return result;
  }

  private snapshot(collection: Collection, rv: number, onExpired: () => ApiError): [string, KubeObject][] {
    let state: Map<string, KubeObject>;
    try {
      state = collection.snapshotAt(rv);
    } catch (e) {
      if (e instanceof HistoryExpired) throw onExpired();
      throw e;
    }
    return [...state.keys()].sort().map((k) => [k, state.get(k)!]);
  }

  // ---------------------------------------------------------------- writes

  /** Parses a request body object into the storage form after type checks; unknown fields handled per fieldValidation. */
  private decode(rt: ResourceType, body: unknown, ctx: WriteContext): KubeObject {
    if (!isObject(body))
      throw badRequest(
        `the object provided is unrecognized (must be of type ${rt.kind}): couldn't get version/kind; json parse error: expected an object`,
      );
    const obj = deepCopy(body) as KubeObject;
    const gv = groupVersion(rt);
    const isCustom = !rt.strategicMerge;
    if (isCustom && (obj.kind === undefined || obj.kind === '')) throw badRequest(`Object 'Kind' is missing in '${JSON.stringify(body)}'`);
    if (obj.apiVersion !== undefined && obj.apiVersion !== '' && obj.apiVersion !== gv) {
      const dataVersion = String(obj.apiVersion).split('/').pop();
      const kind = obj.kind === undefined || obj.kind === '' ? rt.kind : String(obj.kind);
      if (isCustom)
        throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${gv})`);
      throw badRequest(
        `${kind} in version "${dataVersion}" cannot be handled as a ${rt.kind}: no kind "${kind}" is registered for version "${String(obj.apiVersion)}" in scheme "pkg/runtime/scheme.go:110"`,
      );
    }
    if (obj.kind !== undefined && obj.kind !== '' && obj.kind !== rt.kind) {
      throw badRequest(
        `${String(obj.kind)} in version "${rt.version}" cannot be handled as a ${rt.kind}: no kind "${String(obj.kind)}" is registered for version "${gv}" in scheme`,
      );
    }
    obj.apiVersion = gv;
    obj.kind = rt.kind;
    if (rt.openapiName !== undefined) {
      const typeError = builtinTypeError(obj, rt.openapiName, builtinSchemas());
      if (typeError !== undefined)
        throw badRequest(`${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${typeError}`);
    }
    if (!isObject(obj.metadata)) obj.metadata = {};
    const unknown = rt.prune(obj);
    ctx.warnings.push(...unknownFieldOutcome(ctx.fieldValidation, rt.kind, rt.version, unknown));
    return obj;
  }

  /** Turns a decoded object into its storage form with the storage kind's defaults (decoding defaults). */
  private defaulted(rt: ResourceType, obj: KubeObject): { storageRt: ResourceType; obj: KubeObject } {
    const storageObj = rt.toStorage !== undefined ? rt.toStorage(obj) : obj;
    const storageRt = rt.toStorage !== undefined ? (this.registry.byStorage(rt.storage) ?? rt) : rt;
    storageRt.applyDefaults?.(storageObj);
    return { storageRt, obj: storageObj };
  }

  private namespaceCheck(rt: ResourceType, namespace: string, name: string): void {
    if (!rt.namespaced) return;
    const ns = this.store.collection('/namespaces').objects.get(namespace);
    if (ns === undefined) throw notFound({ group: '', resource: 'namespaces' }, namespace);
    if (isTerminating(ns.object)) {
      throw forbidden(rt, name, `unable to create new content in namespace ${namespace} because it is being terminated`);
    }
  }

  private validate(rt: ResourceType, obj: KubeObject, old: KubeObject | undefined): void {
    const errors: FieldError[] = [...validateObjectMeta(obj.metadata, rt.namespaced, rt.nameRule)];
    if (old !== undefined) errors.push(...validateObjectMetaUpdate(obj.metadata, old.metadata));
    errors.push(...(rt.validate?.(obj, old) ?? []));
    // Validation runs on the internal (storage) type, so a view's errors name the storage kind (Event, not Event.events.k8s.io).
    const named = rt.toStorage !== undefined ? (this.registry.byStorage(rt.storage) ?? rt) : rt;
    if (errors.length > 0) throw invalid(named, obj.metadata.name ?? obj.metadata.generateName ?? '', errors);
  }

  private manager(ctx: WriteContext): string {
    return ctx.fieldManager ?? defaultManager(ctx.userAgent);
  }

  private ignoredFields(rt: ResourceType, subresource: string): FieldSet {
    if (subresource === 'status') {
      const set = new FieldSet();
      for (const field of Object.keys(zeroValue(rt.openapiName ?? '')).concat(['spec']))
        if (field !== 'status' && field !== 'metadata') set.insert([fieldElement(field)]);
      return set;
    }
    return rt.statusPolicy === 'subresource' ? resetFields(['status']) : new FieldSet();
  }

  /** OwnerReferencesPermissionEnforcement: changing ownerReferences needs delete on the object, blocking ones need owner/finalizers update. */
  private admitOwnerReferences(
    rt: ResourceType,
    obj: KubeObject,
    old: KubeObject | undefined,
    subresource: string,
    ctx: WriteContext,
  ): void {
    if (deepEqual(obj.metadata.ownerReferences ?? [], old?.metadata.ownerReferences ?? [])) return;
    const name = obj.metadata.name ?? '';
    const base: Omit<Attributes, 'verb' | 'resource' | 'subresource' | 'name' | 'apiGroup' | 'apiVersion'> = {
      user: ctx.user,
      resourceRequest: true,
      namespace: obj.metadata.namespace ?? '',
      path: '',
    };
    if (old !== undefined) {
      const decision = ctx.authorize({
        ...base,
        verb: 'delete',
        apiGroup: rt.group,
        apiVersion: rt.version,
        resource: rt.resource,
        subresource,
        name,
      });
      if (!decision.allowed) throw forbidden(rt, name, `cannot set an ownerRef on a resource you can't delete: ${decision.reason}, <nil>`);
    }
    const oldRefs = old?.metadata.ownerReferences ?? [];
    const blocking = (obj.metadata.ownerReferences ?? []).filter((ref) => {
      if (ref.blockOwnerDeletion !== true) return false;
      const previous = oldRefs.find((o) => o.uid === ref.uid);
      return previous === undefined || previous.blockOwnerDeletion !== true;
    });
    if (blocking.length === 0) return;
    const anything = ctx.authorize({
      ...base,
      verb: 'update',
      apiGroup: '*',
      apiVersion: '*',
      resource: '*',
      subresource: 'finalizers',
      name: '',
      namespace: '',
    });
    if (anything.allowed) return;
    for (const ref of blocking) {
      const ownerType = this.registry.byKind(ref.apiVersion, ref.kind);
      if (ownerType === undefined) {
        throw forbidden(
          rt,
          name,
          `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion} Kind ${ref.kind}: no matches for kind "${ref.kind}" in version "${ref.apiVersion}"`,
        );
      }
      const decision = ctx.authorize({
        ...base,
        verb: 'update',
        apiGroup: ownerType.group,
        apiVersion: ownerType.version,
        resource: ownerType.resource,
        subresource: 'finalizers',
        name: ref.name,
      });
      if (!decision.allowed) {
        throw forbidden(
          rt,
          name,
          `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${decision.reason}, <nil>`,
        );
      }
    }
  }

  private bumpGeneration(rt: ResourceType, obj: KubeObject, old: KubeObject): void {
    const previous = old.metadata.generation ?? 0;
    obj.metadata.generation = previous;
    let changed = false;
    switch (rt.generation) {
      case 'none':
        if (previous === 0) delete obj.metadata.generation;
        return;
      case 'spec':
        changed = !deepEqual(obj.spec, old.spec);
        break;
      case 'spec-and-annotations':
        changed = !deepEqual(obj.spec, old.spec) || !deepEqual(obj.metadata.annotations, old.metadata.annotations);
        break;
      case 'non-metadata': {
        const strip = (o: KubeObject) => {
          const { metadata: _m, status: _s, ...rest } = o;
          return rt.statusPolicy === 'subresource' ? rest : { ...rest, status: _s };
        };
        changed = !deepEqual(strip(obj), strip(old));
        break;
      }
    }
    if (changed) obj.metadata.generation = previous + 1;
  }

  create(rt: ResourceType, namespace: string, body: unknown, ctx: WriteContext, managedOverride?: Map<string, ManagerSet>): WriteResult {
    const decoded = this.decode(rt, body, ctx);
    return this.createDecoded(rt, namespace, decoded, ctx, managedOverride);
  }

  private createDecoded(
    rt: ResourceType,
    namespace: string,
    decoded: KubeObject,
    ctx: WriteContext,
    managedOverride?: Map<string, ManagerSet>,
  ): WriteResult {
    const meta = decoded.metadata;
    if (rt.namespaced) {
      if (meta.namespace && meta.namespace !== namespace)
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      meta.namespace = namespace;
    } else if (meta.namespace) {
      delete meta.namespace;
    }
    if (meta.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${generatedNameSuffix(this.options.random)}`;
    this.namespaceCheck(rt, namespace, meta.name ?? '');
    for (const field of [
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
      'selfLink',
      'managedFields',
    ])
      delete meta[field];
    const { storageRt, obj } = this.defaulted(rt, decoded);
    const now = this.now();
    const zero = storageRt.openapiName !== undefined ? (zeroValue(storageRt.openapiName) as KubeObject) : undefined;
    const managed =
      managedOverride ??
      updateManagedFields(new Map(), {
        before: rt.toStorage !== undefined ? undefined : zero,
        after: rt.toStorage !== undefined ? decoded : obj,
        node: rt.schema(),
        manager: this.manager(ctx),
        subresource: '',
        apiVersion: groupVersion(rt),
        now,
        ignored: this.ignoredFields(storageRt, ''),
      });
    if (storageRt.statusPolicy === 'subresource') delete obj.status;
    storageRt.prepareForCreate?.(obj, this.strategyContext());
    if (storageRt.generation !== 'none') obj.metadata.generation = 1;
    this.validate(rt, rt.toStorage ? decoded : obj, undefined);
    this.admitOwnerReferences(rt, obj, undefined, '', ctx);
    obj.metadata.uid = randomUUID();
    obj.metadata.creationTimestamp = timestamp(now);
    const managedFields = encodeManagedFields(managed);
    if (managedFields !== undefined) obj.metadata.managedFields = managedFields;
    const final = this.canonical(rt, obj);
    const collection = this.collectionOf(rt);
    const key = objectKey(rt.namespaced ? namespace : undefined, final.metadata.name!);
    if (collection.objects.has(key)) throw alreadyExists(rt, final.metadata.name!);
    if (ctx.dryRun) {
      delete final.metadata.resourceVersion;
      return { object: this.present(rt, final), created: true };
    }
    this.store.add(collection, key, final);
    return { object: this.present(rt, final), created: true };
  }

  update(rt: ResourceType, namespace: string, name: string, body: unknown, subresource: string, ctx: WriteContext): WriteResult {
    const decoded = this.decode(rt, body, ctx);
    if (decoded.metadata.name !== undefined && decoded.metadata.name !== name) {
      throw badRequest(`the name of the object (${decoded.metadata.name}) does not match the name on the URL (${name})`);
    }
    decoded.metadata.name = name;
    if (rt.namespaced && decoded.metadata.namespace && decoded.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const stored = this.getStored(rt, namespace, name);
    if (stored === undefined) {
      if (rt.createOnUpdate && subresource === '') {
        delete decoded.metadata.resourceVersion;
        return this.createDecoded(rt, namespace, decoded, ctx);
      }
      throw notFound(rt, name);
    }
    const rv = decoded.metadata.resourceVersion;
    if (rv === undefined || rv === '') {
      if (!rt.unconditionalUpdate)
        throw invalid({ group: rt.group, kind: rt.resource }, name, [
          invalidValue('metadata.resourceVersion', 0, 'must be specified for an update'),
        ]);
    } else if (rv !== String(stored.rv)) {
      throw conflict(rt, name, staleObject);
    }
    return this.updateDecoded(rt, namespace, name, decoded, stored, subresource, ctx, undefined);
  }

  private updateDecoded(
    rt: ResourceType,
    namespace: string,
    name: string,
    decoded: KubeObject,
    stored: StoredObject,
    subresource: string,
    ctx: WriteContext,
    managedOverride: Map<string, ManagerSet> | undefined,
  ): WriteResult {
    const old = stored.object;
    if (decoded.metadata.uid && decoded.metadata.uid !== old.metadata.uid) {
      throw conflict(
        rt,
        name,
        `Precondition failed: UID in precondition: ${decoded.metadata.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    const { storageRt, obj } = this.defaulted(rt, decoded);
    const meta = obj.metadata;
    meta.namespace = old.metadata.namespace;
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    if (old.metadata.deletionTimestamp !== undefined) meta.deletionTimestamp = old.metadata.deletionTimestamp;
    else delete meta.deletionTimestamp;
    if (old.metadata.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
    else delete meta.deletionGracePeriodSeconds;
    delete meta.managedFields;
    meta.resourceVersion = old.metadata.resourceVersion;
    if (subresource === 'finalize') {
      const finalizers = (obj.spec as { finalizers?: string[] } | undefined)?.finalizers;
      const next: KubeObject = deepCopy(old);
      next.spec = { ...(isObject(old.spec) ? old.spec : {}), finalizers };
      if (finalizers === undefined) delete (next.spec as Record<string, unknown>).finalizers;
      for (const key of Object.keys(obj)) delete obj[key];
      Object.assign(obj, next);
    } else if (subresource === 'status') {
      storageRt.prepareForStatusUpdate?.(obj, old);
      if (storageRt.prepareForStatusUpdate === undefined) {
        for (const key of Object.keys(obj)) if (key !== 'status' && key !== 'metadata') delete obj[key];
        for (const key of Object.keys(old)) if (key !== 'status' && key !== 'metadata') obj[key] = old[key];
        obj.metadata = { ...old.metadata };
      }
      obj.metadata.generation = old.metadata.generation;
      if (obj.metadata.generation === undefined) delete obj.metadata.generation;
    } else {
      if (storageRt.statusPolicy === 'subresource') {
        if (old.status === undefined) delete obj.status;
        else obj.status = old.status;
      }
      storageRt.prepareForUpdate?.(obj, old, this.strategyContext());
      this.bumpGeneration(storageRt, obj, old);
    }
    const view = rt.toStorage !== undefined;
    const managed =
      managedOverride ??
      updateManagedFields(decodeManagedFields(old.metadata.managedFields), {
        before: view ? this.present(rt, old) : old,
        after: view ? this.present(rt, obj) : obj,
        node: rt.schema(),
        manager: this.manager(ctx),
        subresource,
        apiVersion: groupVersion(rt),
        now: this.now(),
        ignored: this.ignoredFields(storageRt, subresource),
      });
    delete obj.metadata.managedFields;
    const managedFields = encodeManagedFields(managed);
    if (managedFields !== undefined) obj.metadata.managedFields = managedFields;
    this.validate(rt, rt.toStorage ? this.present(rt, obj) : obj, rt.toStorage ? this.present(rt, old) : old);
    this.admitOwnerReferences(rt, obj, old, subresource, ctx);
    const final = this.canonical(rt, obj);
    if (sameContent(final, old)) return { object: this.present(rt, old), created: false };
    const collection = this.collectionOf(rt);
    const key = objectKey(rt.namespaced ? namespace : undefined, name);
    const specFinalizers =
      storageRt.resource === 'namespaces' && storageRt.group === ''
        ? ((final.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [])
        : [];
    const finishesDeletion =
      final.metadata.deletionTimestamp !== undefined && (final.metadata.finalizers ?? []).length === 0 && specFinalizers.length === 0;
    if (ctx.dryRun) return { object: this.present(rt, final), created: false };
    if (finishesDeletion) {
      this.store.remove(collection, key);
      return { object: this.present(rt, final), created: false };
    }
    const written = this.store.replace(collection, key, final);
    return { object: this.present(rt, written.object), created: false };
  }

  patch(
    rt: ResourceType,
    namespace: string,
    name: string,
    type: PatchType,
    body: unknown,
    subresource: string,
    ctx: WriteContext & { readonly force?: boolean },
  ): WriteResult {
    if (type === 'strategic' && !rt.strategicMerge) {
      throw unsupportedMediaType(['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
    }
    const stored = this.getStored(rt, namespace, name);
    if (type === 'apply') return this.apply(rt, namespace, name, body, stored, subresource, ctx);
    if (stored === undefined) throw notFound(rt, name);
    const current = this.present(rt, stored.object);
    let patched: unknown;
    switch (type) {
      case 'json':
        patched = applyJsonPatch(current, parseJsonPatch(body as string));
        break;
      case 'merge':
        patched = applyMergePatch(current, body);
        break;
      case 'strategic':
        patched = applyStrategicMergePatch(current, body, rt.schema());
        break;
    }
    const decoded = this.decode(rt, patched, ctx);
    if (decoded.metadata.name !== name)
      throw badRequest(`the name of the object (${decoded.metadata.name ?? ''}) does not match the name on the URL (${name})`);
    const rv = decoded.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== String(stored.rv)) throw conflict(rt, name, staleObject);
    return this.updateDecoded(rt, namespace, name, decoded, stored, subresource, ctx, undefined);
  }

  private apply(
    rt: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    stored: StoredObject | undefined,
    subresource: string,
    ctx: WriteContext & { readonly force?: boolean },
  ): WriteResult {
    if (ctx.fieldManager === undefined || ctx.fieldManager === '') {
      throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [requiredValue('fieldManager', 'is required for apply patch')]);
    }
    if (!isObject(body)) throw badRequest('error decoding YAML: the applied configuration must be an object');
    const config = body as KubeObject;
    const gv = groupVersion(rt);
    if (config.apiVersion !== gv || config.kind !== rt.kind) {
      const apiVersion = String(config.apiVersion ?? '');
      throw badRequest(
        `invalid object type: ${apiVersion.includes('/') ? apiVersion : `/${apiVersion}`}, Kind=${String(config.kind ?? '')}`,
      );
    }
    if (!isObject(config.metadata)) config.metadata = {};
    if (config.metadata.name !== undefined && config.metadata.name !== name) {
      throw badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`);
    }
    if (config.metadata.managedFields !== undefined) throw badRequest('metadata.managedFields must be nil');
    const node = rt.schema();
    const probe = deepCopy(config);
    const unknown = rt.prune(probe);
    ctx.warnings.push(...unknownFieldOutcome(ctx.fieldValidation, rt.kind, rt.version, unknown));
    const storageRt = rt.toStorage !== undefined ? (this.registry.byStorage(rt.storage) ?? rt) : rt;
    const live = stored === undefined ? undefined : this.present(rt, stored.object);
    const result = serverSideApply({
      live,
      config: probe,
      node,
      managed: decodeManagedFields(live?.metadata.managedFields),
      manager: ctx.fieldManager,
      force: ctx.force === true,
      subresource,
      apiVersion: gv,
      now: this.now(),
      ignored: this.ignoredFields(storageRt, subresource),
    });
    const merged = result.object;
    merged.metadata.name = name;
    if (stored === undefined) {
      if (subresource !== '') throw notFound(rt, name);
      delete merged.metadata.managedFields;
      return this.createDecoded(rt, namespace, this.decode(rt, merged, { ...ctx, warnings: [] }), ctx, result.managed);
    }
    const rv = config.metadata.resourceVersion;
    if (rv !== undefined && rv !== String(stored.rv)) throw conflict(rt, name, staleObject);
    const decoded = this.decode(rt, merged, { ...ctx, warnings: [] });
    return this.updateDecoded(rt, namespace, name, decoded, stored, subresource, ctx, result.managed);
  }

  /** DELETE: preconditions, propagation finalizers, graceful deletion with finalizers, or removal. */
  delete(rt: ResourceType, namespace: string, name: string, options: DeleteOptions): DeleteResult {
    const stored = this.getStored(rt, namespace, name);
    if (stored === undefined) throw notFound(rt, name);
    if (rt.group === '' && rt.resource === 'namespaces' && immortalNamespaces.includes(name))
      throw forbidden(rt, name, 'this namespace may not be deleted');
    const old = stored.object;
    const pre = options.preconditions ?? {};
    const preconditionFailed = (message: string) =>
      new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${rt.kind} "${name}": ${message}`, {
        name,
        group: rt.group,
        kind: rt.kind,
      });
    if (pre.uid && pre.uid !== old.metadata.uid) {
      throw preconditionFailed(
        `the UID in the precondition (${pre.uid}) does not match the UID in record (${old.metadata.uid}). The object might have been deleted and then recreated`,
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== String(stored.rv)) {
      throw preconditionFailed(
        `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${stored.rv}). The object might have been modified`,
      );
    }
    const policy =
      options.propagationPolicy ??
      (options.orphanDependents === true ? 'Orphan' : options.orphanDependents === false ? 'Background' : undefined);
    if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
      throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
        {
          type: 'FieldValueNotSupported',
          field: 'propagationPolicy',
          detail: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`,
        },
      ]);
    }
    const finalizers = [...(old.metadata.finalizers ?? [])];
    const withFinalizer = (f: string) => {
      if (!finalizers.includes(f)) finalizers.push(f);
    };
    const without = (f: string) => {
      const i = finalizers.indexOf(f);
      if (i >= 0) finalizers.splice(i, 1);
    };
    if (policy === 'Orphan') {
      withFinalizer('orphan');
      without('foregroundDeletion');
    } else if (policy === 'Foreground') {
      withFinalizer('foregroundDeletion');
      without('orphan');
    } else if (policy === 'Background') {
      without('orphan');
      without('foregroundDeletion');
    }
    let prepared: KubeObject | undefined;
    if (!isTerminating(old) && rt.prepareForDeletion !== undefined) {
      prepared = deepCopy(old);
      prepared.metadata.finalizers = finalizers;
      rt.prepareForDeletion(prepared, this.now());
      finalizers.splice(0, finalizers.length, ...(prepared.metadata.finalizers ?? []));
    }
    const namespaceLike = rt.resource === 'namespaces' && rt.group === '';
    const collection = this.collectionOf(rt);
    const key = objectKey(rt.namespaced ? namespace : undefined, name);
    if (finalizers.length > 0 || namespaceLike) {
      if (isTerminating(old) && deepEqual(finalizers, old.metadata.finalizers ?? [])) {
        return { kind: 'object', object: this.present(rt, old) };
      }
      const next: KubeObject = prepared ?? deepCopy(old);
      next.metadata.finalizers = finalizers.length > 0 ? finalizers : undefined;
      if (!isTerminating(old)) {
        next.metadata.deletionTimestamp = timestamp(this.now());
        if (!namespaceLike) next.metadata.deletionGracePeriodSeconds = 0;
        if ((old.metadata.generation ?? 0) > 0) next.metadata.generation = (old.metadata.generation ?? 0) + 1;
      }
      if (namespaceLike) (next as Record<string, any>).status = { ...(isObject(next.status) ? next.status : {}), phase: 'Terminating' };
      const final = this.canonical(rt, next);
      if (options.dryRun) return { kind: 'object', object: this.present(rt, final) };
      const written = this.store.replace(collection, key, final);
      return { kind: 'object', object: this.present(rt, written.object) };
    }
    if (options.dryRun) return { kind: 'status', object: successStatus(rt, name, old.metadata.uid) };
    this.store.remove(collection, key);
    return { kind: 'status', object: successStatus(rt, name, old.metadata.uid) };
  }

  deleteCollection(rt: ResourceType, namespace: string, listOptions: ListOptions, options: DeleteOptions): KubeObject[] {
    const { items } = this.list(rt, namespace, { labelSelector: listOptions.labelSelector, fieldSelector: listOptions.fieldSelector });
    const deleted: KubeObject[] = [];
    for (const item of items) {
      try {
        const result = this.delete(rt, item.metadata.namespace ?? '', item.metadata.name!, { ...options, preconditions: undefined });
        deleted.push(result.kind === 'object' ? result.object : item);
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
    return deleted;
  }

  /** Removes a finalizer on behalf of a controller (GC, namespace or CRD cleanup), completing deletion when it was the last. */
  removeFinalizer(rt: ResourceType, obj: KubeObject, finalizer: string): void {
    const stored = this.getStored(rt, obj.metadata.namespace ?? '', obj.metadata.name!);
    if (stored === undefined || !(stored.object.metadata.finalizers ?? []).includes(finalizer)) return;
    const next = deepCopy(stored.object);
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    if (next.metadata.finalizers.length === 0) delete next.metadata.finalizers;
    const collection = this.collectionOf(rt);
    const key = objectKey(rt.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name!);
    if (next.metadata.deletionTimestamp !== undefined && next.metadata.finalizers === undefined) this.store.remove(collection, key);
    else this.store.replace(collection, key, this.canonical(rt, next));
  }

  /**
   * Writes an object as a controller would (no admission), unless it is unchanged; with `as`, the write is recorded
   * in managedFields as that manager's Update (e.g. kube-apiserver on a CRD's status).
   */
  writeAsController(rt: ResourceType, next: KubeObject, as?: { manager: string; subresource?: string }): void {
    const collection = this.collectionOf(rt);
    const key = objectKey(rt.namespaced ? next.metadata.namespace : undefined, next.metadata.name!);
    const stored = collection.objects.get(key);
    if (stored === undefined) {
      this.store.add(collection, key, this.canonical(rt, next));
      return;
    }
    if (as !== undefined) {
      const subresource = as.subresource ?? '';
      const managed = updateManagedFields(decodeManagedFields(stored.object.metadata.managedFields), {
        before: stored.object,
        after: next,
        node: rt.schema(),
        manager: as.manager,
        subresource,
        apiVersion: groupVersion(rt),
        now: this.now(),
        ignored: this.ignoredFields(rt, subresource),
      });
      next = { ...next, metadata: { ...next.metadata, managedFields: encodeManagedFields(managed) } };
    }
    const final = this.canonical(rt, { ...next, metadata: { ...next.metadata, resourceVersion: stored.object.metadata.resourceVersion } });
    if (!sameContent(final, stored.object)) this.store.replace(collection, key, final);
  }
}

export function successStatus(rt: ResourceType, name: string, uid: string | undefined): KubeObject {
  const details: Record<string, string> = { name };
  if (rt.group !== '') details.group = rt.group;
  details.kind = rt.resource;
  if (uid) details.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details } as unknown as KubeObject;
}

function parseResourceVersion(value: string): number {
  if (!/^\d+$/.test(value)) throw badRequest(`resourceVersion: Invalid value: "${value}": must be a non-negative integer`);
  return Number(value);
}

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: continuePrefix, rv, start })).toString('base64url');
}

function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (parsed.v !== continuePrefix || typeof parsed.rv !== 'number' || typeof parsed.start !== 'string') throw new Error('bad token');
    return { rv: parsed.rv, start: parsed.start };
  } catch {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
}

/** Whether a name is a standard finalizer the apiserver knows without a domain. */
export function isStandardFinalizer(name: string): boolean {
  return standardFinalizers.includes(name);
}
