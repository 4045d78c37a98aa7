// The token subresource of ServiceAccounts (TokenRequest) and the autoscaling/v1 Scale subresource.
import { ApiError, internalError, methodNotAllowed, notFound } from '../errors.js';
import { decodeObjectBody, decodePatchBody, patchKindOf, readBody, writeJson } from '../http.js';
import { deepCopy, isObject, type KubeObject } from '../object.js';
import { applyJsonPatch, parseJsonPatch } from '../patch/json-patch.js';
import { applyMergePatch } from '../patch/merge-patch.js';
import type { ResourceType } from '../resources.js';
import { tokenRequest } from '../reviews.js';
import type { ResourceCall } from './deps.js';
import { writeContext } from './options.js';

export async function serveToken({ deps, req, res, rt, namespace, info, pretty }: ResourceCall): Promise<void> {
  if (req.method !== 'POST') throw methodNotAllowed();
  const body = decodeObjectBody(req.headers['content-type'], await readBody(req), 'TokenRequest');
  const sa = deps.api.getStored(rt, namespace, info.name);
  if (sa === undefined) throw notFound(rt, info.name);
  writeJson(res, 201, tokenRequest(isObject(body) ? body : {}, sa.object, deps.authn, deps.api.now()), pretty);
}

/** The autoscaling/v1 Scale subresource of Deployments and of custom resources with a scale subresource. */
export async function serveScale({ deps, req, res, rt, namespace, info, query, user, pretty }: ResourceCall): Promise<void> {
  const { api } = deps;
  const paths = rt.scale ?? {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.status.selector',
  };
  const scaleOf = (obj: KubeObject) => scaleOfObject(rt, paths, obj);
  const current = api.get(rt, namespace, info.name);
  if (info.verb === 'get') {
    if (rt.scale !== undefined && readPath(current, paths.specReplicasPath) === undefined) {
      throw internalError(`the spec replicas field "${paths.specReplicasPath}" does not exist`);
    }
    return writeJson(res, 200, scaleOf(current), pretty);
  }
  const ctx = writeContext(deps, req, query, user);
  let scale: Record<string, any>;
  const text = await readBody(req);
  if (info.verb === 'update') scale = decodeObjectBody(req.headers['content-type'], text, 'Scale') as Record<string, any>;
  else if (info.verb === 'patch') {
    const kind = patchKindOf(req.headers['content-type']);
    const body = decodePatchBody(kind, text);
    scale = (
      kind === 'json' ? applyJsonPatch(scaleOf(current), parseJsonPatch(body as string)) : applyMergePatch(scaleOf(current), body)
    ) as Record<string, any>;
  } else throw methodNotAllowed();
  const replicas = scale?.spec?.replicas;
  // A custom resource's count is checked with the object it is written into (its schema and the scale check).
  if (typeof replicas !== 'number' || (replicas < 0 && rt.scale === undefined)) {
    throw new ApiError(
      422,
      'Invalid',
      `Scale.autoscaling "${info.name}" is invalid: spec.replicas: Invalid value: ${String(replicas)}: must be greater than or equal to 0`,
      {},
    );
  }
  const next = deepCopy(current);
  const segments = paths.specReplicasPath.replace(/^\./, '').split('.');
  let target: Record<string, any> = next as Record<string, any>;
  for (const s of segments.slice(0, -1)) target = isObject(target[s]) ? target[s] : (target[s] = {});
  target[segments[segments.length - 1]] = replicas;
  if (scale?.metadata?.resourceVersion) next.metadata.resourceVersion = scale.metadata.resourceVersion;
  const result = api.update(rt, namespace, info.name, next, '', ctx);
  writeJson(res, 200, scaleOf(result.object), pretty);
}

/** The value at a dotted path (`.spec.replicas`) of an object, or undefined. */
function readPath(obj: KubeObject, path: string | undefined): unknown {
  if (path === undefined) return undefined;
  let v: unknown = obj;
  for (const p of path.replace(/^\./, '').split('.')) v = isObject(v) ? v[p] : undefined;
  return v;
}

/** The autoscaling/v1 Scale of an object, read at its resource's scale paths. */
function scaleOfObject(rt: ResourceType, paths: NonNullable<ResourceType['scale']>, obj: KubeObject) {
  const selector =
    rt.scale === undefined ? selectorString((obj.spec as Record<string, unknown>)?.selector) : readPath(obj, paths.labelSelectorPath);
  const status: Record<string, unknown> = { replicas: readPath(obj, paths.statusReplicasPath) ?? 0 };
  if (selector) status.selector = selector;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    // A custom resource without its spec replicas has a Scale without them (kube-apiserver's scaleFromCustomResource):
    // a GET of it fails, a write must set them.
    spec:
      rt.scale === undefined
        ? { replicas: readPath(obj, paths.specReplicasPath) ?? 0 }
        : specReplicas(readPath(obj, paths.specReplicasPath)),
    status,
  };
}

function specReplicas(replicas: unknown): { replicas?: unknown } {
  return replicas === undefined ? {} : { replicas };
}

function selectorString(selector: unknown): string {
  if (!isObject(selector)) return '';
  const labels = isObject(selector.matchLabels) ? selector.matchLabels : {};
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${String(labels[k])}`)
    .join(',');
}
