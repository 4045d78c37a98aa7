// OpenAPI v3 documents (/openapi/v3 and per group-version), enough for kubectl's server-side field validation
// detection, its client-side patch metadata and `kubectl explain`; rebuilt when custom resources change.
import { createHash } from 'node:crypto';
import { builtinSchemas, type OpenApiSchema } from './openapi/builtin.js';
import type { ResourceRegistry, ResourceType } from './resources.js';

const refPrefix = '#/components/schemas/';

/** The component name of a custom resource's schema ("com.example.app.v1.CustomApp"), as the apiserver names it. */
export function customSchemaName(rt: ResourceType): string {
  return `${rt.group.split('.').reverse().join('.')}.${rt.version}.${rt.kind}`;
}

function collectRefs(value: unknown, into: Set<string>, schemas: Record<string, OpenApiSchema>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectRefs(v, into, schemas);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    if (key === '$ref' && typeof child === 'string' && child.startsWith(refPrefix)) {
      const name = child.slice(refPrefix.length);
      if (!into.has(name) && schemas[name] !== undefined) {
        into.add(name);
        collectRefs(schemas[name], into, schemas);
      }
    } else collectRefs(child, into, schemas);
  }
}

function parameter(name: string, type = 'string'): Record<string, unknown> {
  return { name, in: 'query', schema: { type, uniqueItems: true } };
}

function operation(rt: ResourceType, action: string, params: string[]): Record<string, unknown> {
  return {
    operationId: `${action}${rt.kind}`,
    parameters: params.map((p) => parameter(p, p === 'force' ? 'boolean' : 'string')),
    responses: { '200': { description: 'OK' } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: rt.group, version: rt.version, kind: rt.kind },
  };
}

function pathsOf(rt: ResourceType): Record<string, unknown> {
  const base = rt.group === '' ? `/api/${rt.version}` : `/apis/${rt.group}/${rt.version}`;
  const collection = rt.namespaced ? `${base}/namespaces/{namespace}/${rt.resource}` : `${base}/${rt.resource}`;
  const item = `${collection}/{name}`;
  const paths: Record<string, unknown> = {};
  const writes = ['dryRun', 'fieldManager', 'fieldValidation'];
  paths[collection] = {
    get: operation(rt, 'list', ['labelSelector', 'fieldSelector', 'limit', 'continue', 'resourceVersion', 'watch']),
    post: operation(rt, 'post', writes),
  };
  paths[item] = {
    get: operation(rt, 'get', []),
    put: operation(rt, 'put', writes),
    patch: operation(rt, 'patch', [...writes, 'force']),
    delete: operation(rt, 'delete', ['dryRun', 'gracePeriodSeconds', 'propagationPolicy']),
  };
  for (const sub of rt.subresources) {
    if (sub === 'status')
      paths[`${item}/status`] = {
        get: operation(rt, 'get', []),
        put: operation(rt, 'put', writes),
        patch: operation(rt, 'patch', [...writes, 'force']),
      };
  }
  return paths;
}

/** Builds and caches the OpenAPI v3 documents per group-version path ("api/v1", "apis/apps/v1"). */
export class OpenApiDocuments {
  private cached: { generation: number; docs: Map<string, string> } | undefined;

  constructor(
    private readonly registry: ResourceRegistry,
    private readonly customSchema: (rt: ResourceType) => OpenApiSchema | undefined,
  ) {}

  private build(): Map<string, string> {
    const schemas = builtinSchemas();
    const byGv = new Map<string, ResourceType[]>();
    for (const rt of this.registry.all()) {
      const key = rt.group === '' ? `api/${rt.version}` : `apis/${rt.group}/${rt.version}`;
      byGv.set(key, [...(byGv.get(key) ?? []), rt]);
    }
    const docs = new Map<string, string>();
    for (const [path, types] of byGv) {
      const components: Record<string, OpenApiSchema> = {};
      const paths: Record<string, unknown> = {};
      const refs = new Set<string>(['io.k8s.apimachinery.pkg.apis.meta.v1.Status', 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions']);
      for (const rt of types) {
        Object.assign(paths, pathsOf(rt));
        if (rt.openapiName !== undefined) refs.add(rt.openapiName);
        else {
          const schema = this.customSchema(rt);
          if (schema !== undefined) {
            components[customSchemaName(rt)] = schema;
            refs.add('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
          }
        }
      }
      const closure = new Set<string>();
      for (const name of refs) {
        closure.add(name);
        collectRefs(schemas[name], closure, schemas);
      }
      for (const name of [...closure].sort()) if (schemas[name] !== undefined) components[name] = schemas[name];
      docs.set(
        path,
        JSON.stringify({
          openapi: '3.0.0',
          info: { title: 'Kubernetes', version: 'v1.33.0' },
          paths,
          components: { schemas: components },
        }),
      );
    }
    return docs;
  }

  private documents(): Map<string, string> {
    if (this.cached === undefined || this.cached.generation !== this.registry.generation) {
      this.cached = { generation: this.registry.generation, docs: this.build() };
    }
    return this.cached.docs;
  }

  /** The /openapi/v3 index: each group-version document with a content hash in its URL. */
  index(): Record<string, unknown> {
    const paths: Record<string, unknown> = {};
    for (const [path, doc] of this.documents()) {
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${createHash('sha512').update(doc).digest('hex').toUpperCase()}` };
    }
    return { paths };
  }

  document(path: string): string | undefined {
    return this.documents().get(path);
  }
}

/** The schema component of a custom resource version: its openAPIV3Schema with ObjectMeta and the GVK extension. */
export function customResourceSchema(rt: ResourceType, openAPIV3Schema: OpenApiSchema): OpenApiSchema {
  const properties = { ...(openAPIV3Schema.properties ?? {}) };
  properties.apiVersion = { type: 'string' };
  properties.kind = { type: 'string' };
  properties.metadata = { allOf: [{ $ref: `${refPrefix}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta` }] };
  return {
    ...openAPIV3Schema,
    type: 'object',
    properties,
    'x-kubernetes-group-version-kind': [{ group: rt.group, kind: rt.kind, version: rt.version }],
  };
}
