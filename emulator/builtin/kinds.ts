// The built-in resources the emulator serves, with the strategy of each (defaults, status, generation, validation).
import { badRequest, type FieldError } from '../errors.js';
import { crdStrategy } from '../crd/controller.js';
import { validateCrd } from '../crd/definition.js';
import { builtinType } from '../openapi/builtin.js';
import { isObject, type KubeObject } from '../object.js';
import type { NameRule } from '../names.js';
import type { GenerationPolicy, ResourceType, StatusPolicy, StrategyContext } from '../resources.js';
import { type FieldGetters, metadataFieldGetters, pathGetter } from '../selectors.js';
import { builtinColumns, defaultColumns } from '../table.js';
import { pruneUnknownFields } from '../fieldvalidation.js';
import * as defaults from './defaults.js';
import { eventFromStorage, eventToStorage } from './events.js';
import { dropOmittedZeros } from './omitempty.js';
import * as validation from './validation.js';

type Obj = Record<string, any>;

/** The annotation in which apps/v1 shows a DaemonSet's internal template generation. */
const DAEMONSET_TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';

const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

interface BuiltinSpec {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  openapiName: string;
  shortNames?: string[];
  categories?: string[];
  verbs?: string[];
  subresources?: string[];
  storage?: string;
  nameRule?: NameRule;
  statusPolicy?: StatusPolicy;
  generation?: GenerationPolicy;
  fields?: string[];
  fieldSelectorStyle?: 'known' | 'label';
  createOnUpdate?: boolean;
  applyDefaults?: (obj: KubeObject) => void;
  prepareForCreate?: (obj: KubeObject, ctx: StrategyContext) => void;
  prepareForUpdate?: (obj: KubeObject, old: KubeObject, ctx: StrategyContext) => void;
  prepareForStatusUpdate?: (obj: KubeObject, old: KubeObject) => void;
  prepareForDeletion?: (obj: KubeObject, now: Date) => void;
  validate?: (obj: KubeObject, old: KubeObject | undefined) => FieldError[];
  toStorage?: (obj: KubeObject) => KubeObject;
  fromStorage?: (obj: KubeObject) => KubeObject;
}

function builtin(spec: BuiltinSpec): ResourceType {
  const getters: Record<string, (obj: KubeObject) => string> = { ...metadataFieldGetters };
  for (const f of spec.fields ?? []) getters[f] = pathGetter(f);
  const schema = () => builtinType(spec.openapiName);
  const userDefaults = spec.applyDefaults;
  return {
    group: spec.group,
    version: spec.version,
    resource: spec.resource,
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    singular: spec.kind.toLowerCase(),
    namespaced: spec.namespaced,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    verbs: spec.verbs ?? allVerbs,
    subresources: spec.subresources ?? [],
    storage: spec.storage ?? `${spec.group}/${spec.resource}`,
    nameRule: spec.nameRule ?? 'dns1123-subdomain',
    statusPolicy: spec.statusPolicy ?? 'none',
    generation: spec.generation ?? 'none',
    fieldGetters: getters as FieldGetters,
    fieldSelectorStyle: spec.fieldSelectorStyle ?? 'known',
    createOnUpdate: spec.createOnUpdate ?? false,
    unconditionalUpdate: true,
    strategicMerge: true,
    schema,
    openapiName: spec.openapiName,
    columns: () => builtinColumns[spec.kind] ?? defaultColumns,
    toStorage: spec.toStorage,
    fromStorage: spec.fromStorage,
    applyDefaults: (obj) => {
      userDefaults?.(obj);
      dropOmittedZeros(obj, spec.openapiName);
    },
    prepareForCreate: spec.prepareForCreate,
    prepareForUpdate: spec.prepareForUpdate,
    prepareForStatusUpdate: spec.prepareForStatusUpdate,
    prepareForDeletion: spec.prepareForDeletion,
    validate: spec.validate,
    prune: (obj) => pruneUnknownFields(obj, schema()),
  };
}

/** Folds stringData into data (base64), and checks that data is base64, as decoding a Secret does. */
function foldStringData(secret: KubeObject): void {
  const s = secret as Obj;
  if (isObject(s.data)) {
    for (const value of Object.values(s.data)) {
      if (typeof value !== 'string' || !isBase64(value)) {
        throw badRequest(
          `Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${firstBadBase64Byte(String(value))}`,
        );
      }
    }
  }
  if (isObject(s.stringData)) {
    s.data = isObject(s.data) ? s.data : {};
    for (const [key, value] of Object.entries(s.stringData)) s.data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  }
  delete s.stringData;
}

function isBase64(value: string): boolean {
  return /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value);
}

function firstBadBase64Byte(value: string): number {
  for (let i = 0; i < value.length; i++) if (!/[A-Za-z0-9+/=]/.test(value[i])) return i;
  return Math.floor(value.length / 4) * 4;
}

function needsClusterIP(spec: Obj): boolean {
  return spec.type !== 'ExternalName';
}

function needsNodePorts(spec: Obj): boolean {
  return spec.type === 'NodePort' || spec.type === 'LoadBalancer';
}

function allocateServiceAddresses(service: KubeObject, ctx: StrategyContext, old?: KubeObject): void {
  const spec: Obj = isObject(service.spec) ? (service.spec as Obj) : ((service as Obj).spec = {});
  const oldSpec: Obj | undefined = old !== undefined && isObject(old.spec) ? (old.spec as Obj) : undefined;
  if (needsClusterIP(spec)) {
    if (!spec.clusterIP && oldSpec?.clusterIP && needsClusterIP(oldSpec)) {
      spec.clusterIP = oldSpec.clusterIP;
      spec.clusterIPs = oldSpec.clusterIPs;
    }
    if (!spec.clusterIP) spec.clusterIP = ctx.allocateClusterIP();
    if (!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0) spec.clusterIPs = [spec.clusterIP];
    if (!Array.isArray(spec.ipFamilies)) spec.ipFamilies = oldSpec?.ipFamilies ?? ['IPv4'];
    if (!spec.ipFamilyPolicy) spec.ipFamilyPolicy = oldSpec?.ipFamilyPolicy ?? 'SingleStack';
  } else {
    delete spec.clusterIP;
    delete spec.clusterIPs;
  }
  if (needsNodePorts(spec)) {
    for (const port of Array.isArray(spec.ports) ? spec.ports : []) {
      if (port.nodePort) continue;
      const previous = (oldSpec?.ports ?? []).find((p: Obj) => p.port === port.port && p.protocol === port.protocol && p.nodePort);
      port.nodePort = previous?.nodePort ?? 30000 + Math.floor(Math.random() * 2768);
    }
  }
}

function keep(obj: KubeObject, old: KubeObject, field: string): void {
  if (old[field] === undefined) delete obj[field];
  else obj[field] = old[field];
}

/** An apps/v1 workload other than the Deployment: status subresource, generation on spec changes. */
const appsWorkload = (kind: 'StatefulSet' | 'DaemonSet', rest: Partial<BuiltinSpec>): BuiltinSpec => ({
  group: 'apps',
  version: 'v1',
  resource: `${kind.toLowerCase()}s`,
  kind,
  namespaced: true,
  openapiName: `io.k8s.api.apps.v1.${kind}`,
  categories: ['all'],
  statusPolicy: 'subresource',
  generation: 'spec',
  prepareForStatusUpdate: (obj, old) => keep(obj, old, 'spec'),
  ...rest,
});

const core = (resource: string, kind: string, rest: Partial<BuiltinSpec> = {}): BuiltinSpec => ({
  group: '',
  version: 'v1',
  resource,
  kind,
  namespaced: true,
  openapiName: `io.k8s.api.core.v1.${kind}`,
  ...rest,
});

const rbac = (resource: string, kind: string, namespaced: boolean, rest: Partial<BuiltinSpec> = {}): BuiltinSpec => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource,
  kind,
  namespaced,
  openapiName: `io.k8s.api.rbac.v1.${kind}`,
  nameRule: 'path-segment',
  createOnUpdate: true,
  ...rest,
});

export const coreEventFields = [
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
];

/** Every built-in resource, in discovery order. */
// long-functions: data table: one entry per resource, read as a table.
export function builtinResources(): ResourceType[] {
  return [
    builtin(
      core('namespaces', 'Namespace', {
        namespaced: false,
        shortNames: ['ns'],
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
        subresources: ['finalize', 'status'],
        nameRule: 'dns1123-label',
        statusPolicy: 'subresource',
        fields: ['status.phase'],
        fieldSelectorStyle: 'label',
        applyDefaults: defaults.namespaceDefaults,
        prepareForCreate: (obj) => {
          const spec: Obj = isObject(obj.spec) ? (obj.spec as Obj) : ((obj as Obj).spec = {});
          if (!Array.isArray(spec.finalizers) || spec.finalizers.length === 0) spec.finalizers = ['kubernetes'];
          (obj as Obj).status = { phase: 'Active' };
        },
        prepareForUpdate: (obj, old) => {
          const spec: Obj = isObject(obj.spec) ? (obj.spec as Obj) : ((obj as Obj).spec = {});
          const oldSpec: Obj = isObject(old.spec) ? (old.spec as Obj) : {};
          if (oldSpec.finalizers === undefined) delete spec.finalizers;
          else spec.finalizers = oldSpec.finalizers;
        },
        prepareForStatusUpdate: (obj, old) => keep(obj, old, 'spec'),
        validate: (obj) => validation.validateNamespace(obj),
      }),
    ),
    builtin(core('configmaps', 'ConfigMap', { shortNames: ['cm'], validate: validation.validateConfigMap })),
    builtin(
      core('events', 'Event', {
        shortNames: ['ev'],
        fields: coreEventFields,
        fieldSelectorStyle: 'label',
        createOnUpdate: true,
        applyDefaults: defaults.coreEventDefaults,
        validate: (obj) => validation.validateEvent(obj, false),
      }),
    ),
    builtin(
      core('secrets', 'Secret', {
        fields: ['type'],
        fieldSelectorStyle: 'label',
        // The v1 → internal conversion folds stringData into data while decoding, before managedFields are computed.
        applyDefaults: (obj) => {
          foldStringData(obj);
          defaults.secretDefaults(obj);
        },
        validate: validation.validateSecret,
      }),
    ),
    builtin(core('serviceaccounts', 'ServiceAccount', { shortNames: ['sa'], subresources: ['token'] })),
    builtin(
      core('services', 'Service', {
        shortNames: ['svc'],
        categories: ['all'],
        subresources: ['status'],
        nameRule: 'dns1035-label',
        statusPolicy: 'subresource',
        fields: ['spec.clusterIP', 'spec.type'],
        fieldSelectorStyle: 'label',
        createOnUpdate: true,
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        applyDefaults: defaults.serviceDefaults,
        prepareForCreate: (obj, ctx) => {
          allocateServiceAddresses(obj, ctx);
          (obj as Obj).status = { loadBalancer: {} };
        },
        prepareForUpdate: (obj, old, ctx) => allocateServiceAddresses(obj, ctx, old),
        prepareForStatusUpdate: (obj, old) => keep(obj, old, 'spec'),
        validate: validation.validateService,
      }),
    ),
    builtin({
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      kind: 'Deployment',
      namespaced: true,
      openapiName: 'io.k8s.api.apps.v1.Deployment',
      shortNames: ['deploy'],
      categories: ['all'],
      subresources: ['scale', 'status'],
      statusPolicy: 'subresource',
      generation: 'spec-and-annotations',
      applyDefaults: defaults.deploymentDefaults,
      prepareForCreate: (obj) => {
        (obj as Obj).status = {};
      },
      prepareForStatusUpdate: (obj, old) => {
        keep(obj, old, 'spec');
        if (old.metadata.labels === undefined) delete obj.metadata.labels;
        else obj.metadata.labels = old.metadata.labels;
      },
      validate: validation.validateDeployment,
    }),
    builtin(
      appsWorkload('StatefulSet', {
        shortNames: ['sts'],
        subresources: ['scale', 'status'],
        applyDefaults: defaults.statefulSetDefaults,
        prepareForCreate: (obj) => {
          (obj as Obj).status = { replicas: 0, availableReplicas: 0 };
        },
        validate: validation.validateStatefulSet,
      }),
    ),
    builtin(
      appsWorkload('DaemonSet', {
        shortNames: ['ds'],
        subresources: ['status'],
        // apps/v1 shows the internal spec.templateGeneration as an annotation: 1 at creation (owned by its writer), +1
        // per template change.
        applyDefaults: (obj) => {
          defaults.daemonSetDefaults(obj);
          (obj.metadata.annotations ??= {})[DAEMONSET_TEMPLATE_GENERATION] ??= '1';
        },
        prepareForCreate: (obj) => {
          (obj as Obj).status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
        },
        prepareForUpdate: (obj, old) => {
          const previous = Number(old.metadata.annotations?.[DAEMONSET_TEMPLATE_GENERATION] ?? '1');
          const changed = JSON.stringify((obj.spec as Obj)?.template) !== JSON.stringify((old.spec as Obj)?.template);
          (obj.metadata.annotations ??= {})[DAEMONSET_TEMPLATE_GENERATION] = String(changed ? previous + 1 : previous);
        },
        validate: validation.validateDaemonSet,
      }),
    ),
    builtin({
      group: 'events.k8s.io',
      version: 'v1',
      resource: 'events',
      kind: 'Event',
      namespaced: true,
      openapiName: 'io.k8s.api.events.v1.Event',
      shortNames: ['ev'],
      storage: '/events',
      fields: [
        'reason',
        'type',
        'reportingController',
        'regarding.kind',
        'regarding.namespace',
        'regarding.name',
        'regarding.uid',
        'regarding.apiVersion',
        'regarding.resourceVersion',
        'regarding.fieldPath',
      ],
      fieldSelectorStyle: 'label',
      createOnUpdate: true,
      toStorage: eventToStorage,
      fromStorage: eventFromStorage,
      validate: (obj, old) => (old === undefined ? validation.validateEvent(eventToStorage(obj), true) : []),
    }),
    builtin(
      rbac('clusterrolebindings', 'ClusterRoleBinding', false, {
        applyDefaults: defaults.bindingDefaults,
        validate: (obj, old) => validation.validateBinding(obj, old, true),
      }),
    ),
    builtin(rbac('clusterroles', 'ClusterRole', false, { validate: validation.validateRole })),
    builtin(
      rbac('rolebindings', 'RoleBinding', true, {
        applyDefaults: defaults.bindingDefaults,
        validate: (obj, old) => validation.validateBinding(obj, old, false),
      }),
    ),
    builtin(rbac('roles', 'Role', true, { validate: validation.validateRole })),
    builtin({
      group: 'coordination.k8s.io',
      version: 'v1',
      resource: 'leases',
      kind: 'Lease',
      namespaced: true,
      openapiName: 'io.k8s.api.coordination.v1.Lease',
      createOnUpdate: true,
      validate: (obj) => validation.validateLease(obj),
    }),
    builtin({
      group: 'networking.k8s.io',
      version: 'v1',
      resource: 'networkpolicies',
      kind: 'NetworkPolicy',
      namespaced: true,
      openapiName: 'io.k8s.api.networking.v1.NetworkPolicy',
      shortNames: ['netpol'],
      generation: 'spec',
      applyDefaults: defaults.networkPolicyDefaults,
      validate: (obj) => validation.validateNetworkPolicy(obj),
    }),
    builtin({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      resource: 'customresourcedefinitions',
      kind: 'CustomResourceDefinition',
      namespaced: false,
      openapiName: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      subresources: ['status'],
      statusPolicy: 'subresource',
      generation: 'spec',
      applyDefaults: defaults.crdDefaults,
      prepareForCreate: crdStrategy.prepareForCreate,
      prepareForUpdate: crdStrategy.prepareForUpdate,
      prepareForDeletion: crdStrategy.prepareForDeletion,
      prepareForStatusUpdate: (obj, old) => keep(obj, old, 'spec'),
      validate: validateCrd,
    }),
  ];
}
