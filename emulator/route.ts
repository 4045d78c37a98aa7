// Request routing: the apiserver's RequestInfo (verb, group, version, namespace, resource, name, subresource) from method and URL.

export interface RequestInfo {
  readonly resourceRequest: boolean;
  readonly path: string;
  /** get, list, watch, create, update, patch, delete, deletecollection (resource requests); the lower-case method otherwise. */
  readonly verb: string;
  readonly apiPrefix: 'api' | 'apis' | '';
  readonly group: string;
  readonly version: string;
  readonly namespace: string;
  readonly resource: string;
  readonly name: string;
  readonly subresource: string;
  /** Path segments from the resource on (resource, name, subresource, ...). */
  readonly parts: readonly string[];
}

const namespaceSubresources = new Set(['status', 'finalize']);

/** A percent-decoded path segment; a malformed escape is kept as written (it then matches nothing). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Parses a request the way k8s.io/apiserver's RequestInfoFactory does. */
export function requestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const nonResource: RequestInfo = {
    resourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    group: '',
    version: '',
    namespace: '',
    resource: '',
    name: '',
    subresource: '',
    parts: [],
  };
  const segments = path
    .split('/')
    .filter((s) => s !== '')
    .map(decodeSegment);
  if (segments.length === 0) return nonResource;
  const prefix = segments[0];
  if (prefix !== 'api' && prefix !== 'apis') return nonResource;
  let rest = segments.slice(1);
  let group = '';
  if (prefix === 'apis') {
    if (rest.length < 3) return { ...nonResource, apiPrefix: 'apis' };
    group = rest[0];
    rest = rest.slice(1);
  } else if (rest.length < 2) {
    return { ...nonResource, apiPrefix: 'api' };
  }
  const version = rest[0];
  rest = rest.slice(1);
  let verb: string;
  switch (method) {
    case 'POST':
      verb = 'create';
      break;
    case 'GET':
    case 'HEAD':
      verb = 'get';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = 'delete';
      break;
    default:
      verb = '';
  }
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    verb = 'watch';
    rest = rest.slice(1);
  }
  let namespace = '';
  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      namespace = rest[1];
      if (rest.length > 2 && !namespaceSubresources.has(rest[2])) rest = rest.slice(2);
    }
  }
  const resource = rest[0] ?? '';
  const name = rest.length >= 2 ? rest[1] : '';
  const subresource = rest.length >= 3 ? rest[2] : '';
  if (name === '' && verb === 'get') verb = 'list';
  if (name === '' && verb === 'delete') verb = 'deletecollection';
  const watchParam = query.get('watch');
  if (!legacyWatch && (verb === 'list' || verb === 'get') && (watchParam === 'true' || watchParam === '1')) verb = 'watch';
  return { resourceRequest: true, path, verb, apiPrefix: prefix, group, version, namespace, resource, name, subresource, parts: rest };
}
