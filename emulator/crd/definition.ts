// From a CustomResourceDefinition to the resource types it serves (one per served version), and CRD validation.
import { type FieldError, forbiddenField, invalidValue, notSupported, requiredValue } from '../errors.js';
import { isObject, type KubeObject } from '../object.js';
import { dns1035LabelErrors, dns1123SubdomainErrors } from '../names.js';
import type { ResourceType } from '../resources.js';
import { type FieldGetters, metadataFieldGetters } from '../selectors.js';
import { evaluateJsonPath, parseJsonPath } from '../jsonpath.js';
import { customColumns, type PrinterColumn } from '../table.js';
import { applyDefaults, type JsonSchema, pruneUnknown, structuralNode } from './schema.js';
import { validateAgainstSchema } from './validate.js';

type Obj = Record<string, any>;

/** A CRD's `spec.names`: the names its resource is served under (the plural is the resource's URL segment). */
export interface CrdNames extends Pick<ResourceType, 'singular' | 'kind' | 'listKind' | 'shortNames' | 'categories'> {
  readonly plural: string;
}

export function crdNames(crd: KubeObject): CrdNames {
  const names: Obj = (crd.spec as Obj)?.names ?? {};
  return {
    plural: names.plural ?? '',
    singular: names.singular ?? String(names.kind ?? '').toLowerCase(),
    kind: names.kind ?? '',
    listKind: names.listKind ?? `${names.kind}List`,
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
  };
}

/** The served versions of a CRD as resource types; the storage is shared by all versions (conversion None). */
export function customResourceTypes(crd: KubeObject): ResourceType[] {
  const spec: Obj = crd.spec as Obj;
  const names = crdNames(crd);
  const group: string = spec.group;
  const namespaced = spec.scope === 'Namespaced';
  return (spec.versions ?? [])
    .filter((v: Obj) => v.served === true)
    .map((v: Obj): ResourceType => {
      const schema: JsonSchema = v.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
      const hasStatus = isObject(v.subresources?.status);
      const scale = isObject(v.subresources?.scale) ? v.subresources.scale : undefined;
      const getters: Record<string, (obj: KubeObject) => string> = { ...metadataFieldGetters };
      for (const field of v.selectableFields ?? []) {
        const steps = parseJsonPath(field.jsonPath);
        getters[String(field.jsonPath).replace(/^\./, '')] = (obj) => {
          const found = evaluateJsonPath(steps, obj)[0];
          return found === undefined || found === null ? '' : String(found);
        };
      }
      let node: ReturnType<typeof structuralNode> | undefined;
      // kube-apiserver's order in discovery: status, then scale.
      const subresources = [...(hasStatus ? ['status'] : []), ...(scale ? ['scale'] : [])];
      return {
        group,
        version: v.name,
        resource: names.plural,
        kind: names.kind,
        listKind: names.listKind,
        singular: names.singular,
        namespaced,
        shortNames: names.shortNames,
        categories: names.categories,
        verbs: ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'],
        subresources,
        storage: `${group}/${names.plural}`,
        nameRule: 'dns1123-subdomain',
        statusPolicy: hasStatus ? 'subresource' : 'inline',
        generation: 'non-metadata',
        fieldGetters: getters as FieldGetters,
        fieldSelectorStyle: 'label',
        createOnUpdate: false,
        unconditionalUpdate: false,
        strategicMerge: false,
        schema: () => (node ??= structuralNode(schema, true)),
        scale:
          scale === undefined
            ? undefined
            : {
                specReplicasPath: scale.specReplicasPath,
                statusReplicasPath: scale.statusReplicasPath,
                labelSelectorPath: scale.labelSelectorPath,
              },
        columns: () => customColumns(v.additionalPrinterColumns as PrinterColumn[] | undefined),
        prune: (obj) => pruneUnknown(obj, schema),
        applyDefaults: (obj) => applyDefaults(obj, schema),
        validate: (obj) => {
          const { metadata: _m, ...body } = obj;
          const value: Obj = { ...body };
          if (hasStatus && value.status === undefined) delete value.status;
          return [...(scale ? scaleSpecErrors(obj, scale.specReplicasPath) : []), ...validateAgainstSchema(value, schema, '')];
        },
      };
    });
}

/**
 * The check kube-apiserver makes of every write of a custom resource with a scale subresource (customResourceValidator's
 * ValidateScaleSpec), before its schema: the spec replicas, when present, are a non-negative int32.
 */
function scaleSpecErrors(obj: KubeObject, specReplicasPath: string): FieldError[] {
  let value: unknown = obj;
  for (const step of specReplicasPath.replace(/^\./, '').split('.')) value = isObject(value) ? value[step] : undefined;
  if (value === undefined) return [];
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    const type = typeof value === 'number' ? 'float64' : typeof value === 'string' ? 'string' : typeof value;
    return [
      invalidValue(specReplicasPath, 0, `${specReplicasPath} accessor error: ${String(value)} is of the type ${type}, expected int64`),
    ];
  }
  if (value < 0) return [invalidValue(specReplicasPath, value, 'should be a non-negative integer')];
  if (value > 2147483647) return [invalidValue(specReplicasPath, value, 'should be less than or equal to 2147483647')];
  return [];
}

/** The schema of each served version, for the OpenAPI documents. */
export function servedSchemas(crd: KubeObject): Map<string, JsonSchema> {
  const out = new Map<string, JsonSchema>();
  for (const v of (crd.spec as Obj)?.versions ?? []) {
    if (v.served === true && v.schema?.openAPIV3Schema) out.set(v.name, v.schema.openAPIV3Schema);
  }
  return out;
}

/** The commonly hit CRD validation rules (names, scope, versions, schema presence). */
export function validateCrd(crd: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const spec: Obj = isObject(crd.spec) ? crd.spec : {};
  const names: Obj = isObject(spec.names) ? spec.names : {};
  const expected = `${names.plural ?? ''}.${spec.group ?? ''}`;
  if (crd.metadata.name !== expected)
    errors.push(invalidValue('metadata.name', crd.metadata.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  if (!spec.group) errors.push(requiredValue('spec.group'));
  else if (!String(spec.group).includes('.'))
    errors.push(invalidValue('spec.group', spec.group, 'should be a domain with at least one dot'));
  else for (const e of dns1123SubdomainErrors(spec.group)) errors.push(invalidValue('spec.group', spec.group, e));
  if (!['Namespaced', 'Cluster'].includes(spec.scope)) errors.push(notSupported('spec.scope', spec.scope ?? '', ['Cluster', 'Namespaced']));
  if (!names.plural) errors.push(requiredValue('spec.names.plural'));
  else for (const e of dns1035LabelErrors(names.plural)) errors.push(invalidValue('spec.names.plural', names.plural, e));
  if (!names.kind) errors.push(requiredValue('spec.names.kind'));
  const versions: Obj[] = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0)
    errors.push(invalidValue('spec.versions', versions, 'must have exactly one version marked as storage version'));
  const storage = versions.filter((v) => v.storage === true);
  if (versions.length > 0 && storage.length !== 1) {
    errors.push(invalidValue('spec.versions', versions, 'must have exactly one version marked as storage version'));
  }
  versions.forEach((v, i) => {
    if (!v.schema?.openAPIV3Schema) errors.push(requiredValue(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
  });
  if (old !== undefined) {
    const oldSpec: Obj = isObject(old.spec) ? old.spec : {};
    if (oldSpec.group !== spec.group) errors.push(invalidValue('spec.group', spec.group, 'field is immutable'));
    if (oldSpec.scope !== spec.scope) errors.push(invalidValue('spec.scope', spec.scope, 'field is immutable'));
    const stored: string[] = (old.status as Obj)?.storedVersions ?? [];
    for (const version of stored) {
      if (!versions.some((v) => v.name === version))
        errors.push(forbiddenField('status.storedVersions', `must appear in spec.versions: ${version}`));
    }
  }
  return errors;
}
