// HTTP plumbing: reading and decoding request bodies, content negotiation, and writing JSON, Status and list responses.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest, notAcceptable, unsupportedMediaType } from './errors.js';
import type { KubeObject } from './object.js';
import { decodeProtobufObject } from './protobuf.js';

/** The apiserver's request body limit (3 MiB), answered with 413. */
export const maxBodyBytes = 3 * 1024 * 1024;

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        reject(new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}

/** Go's json error wording for the common parse failures. */
function jsonErrorText(e: unknown, body: string): string {
  const message = e instanceof Error ? e.message : String(e);
  const position = /position (\d+)/.exec(message);
  if (/end of (JSON|data)/i.test(message) || body.trim() === '' || (position !== null && Number(position[1]) >= body.length))
    return 'unexpected end of JSON input';
  const ch = position !== null ? body[Number(position[1])] : undefined;
  return ch !== undefined ? `invalid character '${ch}' looking for beginning of value` : message;
}

export function parseJson(body: string): unknown {
  return JSON.parse(body);
}

/** YAML as the apiserver reads it (sigs.k8s.io/yaml: YAML 1.1, so `yes`/`no`/`on`/`off` are booleans). */
export function parseYamlBody(body: string): unknown {
  return parseYaml(body, { version: '1.1' });
}

/** Decodes a create/update body (JSON, YAML, or protobuf for a few kinds); 415 for other media types, 400 for malformed input. */
export function decodeObjectBody(contentType: string | undefined, raw: Buffer, kind: string): unknown {
  const type = mediaType(contentType);
  if (type === 'application/vnd.kubernetes.protobuf') return decodeProtobufObject(raw);
  const body = raw.toString('utf8');
  if (type === '' || type === 'application/json' || type === '*/*') {
    try {
      return parseJson(body);
    } catch (e) {
      const snippet = body.length > 200 ? `${body.slice(0, 200)}...` : body;
      throw badRequest(
        `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ${jsonErrorText(e, body)} (${snippet})`,
      );
    }
  }
  if (type === 'application/yaml') {
    try {
      return parseYamlBody(body);
    } catch (e) {
      throw badRequest(`the object provided is unrecognized (must be of type ${kind}): ${(e as Error).message}`);
    }
  }
  throw unsupportedMediaType(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
}

export type PatchKind = 'json' | 'merge' | 'strategic' | 'apply';

export function patchKindOf(contentType: string | undefined): PatchKind {
  switch (mediaType(contentType)) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
      return 'apply';
    default:
      // The route only declares the patch types, so go-restful answers before the handler runs.
      throw new ApiError(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {});
  }
}

/** Decodes a patch body: JSON for merge and strategic patches, YAML (or JSON) for apply; JSON patches stay text. */
export function decodePatchBody(kind: PatchKind, raw: Buffer): unknown {
  const body = raw.toString('utf8');
  if (kind === 'json') return body;
  if (kind === 'apply') {
    try {
      return parseYamlBody(body);
    } catch (e) {
      throw badRequest(`error decoding YAML: ${(e as Error).message}`);
    }
  }
  try {
    return parseJson(body);
  } catch (e) {
    throw badRequest(`error decoding patch: ${jsonErrorText(e, body)}`);
  }
}

/** What the client accepts: plain JSON, a meta.k8s.io Table, or PartialObjectMetadata. */
export type Rendering = 'json' | 'table' | 'metadata';

export function renderingOf(accept: string | undefined): Rendering {
  if (accept === undefined || accept === '') return 'json';
  let sawJson = false;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';').map((p) => p.trim());
    const p = Object.fromEntries(params.map((x) => x.split('=').map((y) => y.trim())));
    if (type !== 'application/json' && type !== '*/*' && type !== 'application/*') continue;
    if (p.as === 'Table' && p.g === 'meta.k8s.io') return 'table';
    if ((p.as === 'PartialObjectMetadata' || p.as === 'PartialObjectMetadataList') && p.g === 'meta.k8s.io') return 'metadata';
    if (p.as === undefined) sawJson = true;
  }
  if (!sawJson && !accept.includes('application/json') && !accept.includes('*/*')) {
    throw notAcceptable(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
  }
  return 'json';
}

export function wantsPretty(query: URLSearchParams, userAgent: string | undefined): boolean {
  const pretty = query.get('pretty');
  if (pretty === 'true' || pretty === '1') return true;
  if (pretty === 'false' || pretty === '0') return false;
  return userAgent !== undefined && (userAgent.startsWith('curl') || userAgent.startsWith('Wget'));
}

const jsonCache = new WeakMap<object, string>();

/** The JSON of a stored (immutable) object, serialised once. */
export function cachedJson(obj: KubeObject): string {
  let json = jsonCache.get(obj);
  if (json === undefined) {
    json = JSON.stringify(obj);
    jsonCache.set(obj, json);
  }
  return json;
}

export function writeJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  pretty: boolean,
  headers: Record<string, string | string[]> = {},
): void {
  const text = pretty ? `${JSON.stringify(body, null, 2)}\n` : typeof body === 'string' ? body : JSON.stringify(body);
  writeText(res, code, text, headers);
}

export function writeText(res: ServerResponse, code: number, text: string, headers: Record<string, string | string[]> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Adds `Warning: 299 - "..."` headers, one per message. */
export function warningHeaders(warnings: readonly string[]): Record<string, string | string[]> {
  if (warnings.length === 0) return {};
  return { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) };
}
