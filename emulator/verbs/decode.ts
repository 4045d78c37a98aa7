// Decoding a request body into the storage form: kind and version checks, type errors, pruning, defaults.
import { badRequest } from '../errors.js';
import { builtinTypeError, unknownFieldOutcome } from '../fieldvalidation.js';
import { deepCopy, isObject, type KubeObject } from '../object.js';
import { builtinSchemas } from '../openapi/builtin.js';
import { groupVersion, type ResourceType } from '../resources.js';
import type { ApiBase } from './base.js';
import type { WriteContext } from './types.js';

/** Parses a request body object into the storage form after type checks; unknown fields handled per fieldValidation. */
export function decode(rt: ResourceType, body: unknown, ctx: WriteContext): KubeObject {
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
    if (typeError !== undefined) throw badRequest(`${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${typeError}`);
  }
  if (!isObject(obj.metadata)) obj.metadata = {};
  const unknown = rt.prune(obj);
  ctx.warnings.push(...unknownFieldOutcome(ctx.fieldValidation, rt.kind, rt.version, unknown));
  return obj;
}

/** Turns a decoded object into its storage form with the storage kind's defaults (decoding defaults). */
export function defaulted(api: ApiBase, rt: ResourceType, obj: KubeObject): { storageRt: ResourceType; obj: KubeObject } {
  const storageObj = rt.toStorage !== undefined ? rt.toStorage(obj) : obj;
  const storageRt = rt.toStorage !== undefined ? (api.registry.byStorage(rt.storage) ?? rt) : rt;
  storageRt.applyDefaults?.(storageObj);
  return { storageRt, obj: storageObj };
}
