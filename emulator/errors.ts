// Kubernetes API errors (metav1.Status) as thrown values, with the kube-apiserver's reasons and message texts.

export interface StatusCause {
  readonly reason?: string;
  readonly message: string;
  readonly field?: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

/** A group and resource, as the apiserver names them in messages ("configmaps", "customapps.app.example.com"). */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

/** A Kind in a group, as Invalid errors name it ("ConfigMap", "CustomApp.app.example.com"). */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The metav1.Status body, field for field as the apiserver writes it. */
  status(): Record<string, unknown> {
    const status: Record<string, unknown> = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
    };
    if (this.reason !== '') status.reason = this.reason;
    if (this.details !== undefined) status.details = compactDetails(this.details);
    status.code = this.code;
    return status;
  }
}

function compactDetails(details: StatusDetails): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (details.name) out.name = details.name;
  if (details.group) out.group = details.group;
  if (details.kind) out.kind = details.kind;
  if (details.uid) out.uid = details.uid;
  if (details.causes && details.causes.length > 0) out.causes = details.causes;
  if (details.retryAfterSeconds) out.retryAfterSeconds = details.retryAfterSeconds;
  return out;
}

export function qualifiedResource(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

export function qualifiedKind(gk: GroupKind): string {
  return gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`;
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

export function conflict(gr: GroupResource, name: string, why: string): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

export const staleObject = 'the object has been modified; please apply your changes to the latest version and try again';

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

export function unsupportedMediaType(accepted: readonly string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

export function notAcceptable(accepted: readonly string[]): ApiError {
  return new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
}

/** The path-not-found answer of the apiserver's NotFound handler (an unknown URL, not a missing object). */
export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** The mux's plain-text 404 for paths outside any API group the server knows ("404 page not found"). */
export class PageNotFound extends ApiError {
  constructor() {
    super(404, 'NotFound', '404 page not found');
  }
}

export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function gone(message: string): ApiError {
  return new ApiError(410, 'Gone', message);
}

export function forbidden(gr: GroupResource, name: string, message: string): ApiError {
  const subject = name === '' ? qualifiedResource(gr) : `${qualifiedResource(gr)} "${name}"`;
  return new ApiError(403, 'Forbidden', `${subject} is forbidden: ${message}`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ message }],
  });
}

export function tooManyRequests(retryAfterSeconds: number): ApiError {
  return new ApiError(
    429,
    'TooManyRequests',
    'Too many requests, please try again later.',
    { retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  );
}

export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

/** One field error, as k8s.io/apimachinery/pkg/util/validation/field renders it. */
export interface FieldError {
  readonly type:
    | 'FieldValueInvalid'
    | 'FieldValueRequired'
    | 'FieldValueNotSupported'
    | 'FieldValueForbidden'
    | 'FieldValueTypeInvalid'
    | 'FieldValueDuplicate'
    | 'FieldValueTooLong'
    | 'FieldValueTooMany';
  readonly field: string;
  /** The message after the field path ("Invalid value: \"x\": must be ..."). */
  readonly detail: string;
}

export function invalidValue(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, detail: `Invalid value: ${renderValue(value)}: ${detail}` };
}

export function requiredValue(field: string, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field, detail: detail === '' ? 'Required value' : `Required value: ${detail}` };
}

export function forbiddenField(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, detail: `Forbidden: ${detail}` };
}

export function notSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
  const list = supported.map((s) => JSON.stringify(s)).join(', ');
  return { type: 'FieldValueNotSupported', field, detail: `Unsupported value: ${renderValue(value)}: supported values: ${list}` };
}

export function tooLong(field: string, max: number): FieldError {
  return { type: 'FieldValueTooLong', field, detail: `Too long: may not be more than ${max} bytes` };
}

export function duplicateValue(field: string, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field, detail: `Duplicate value: ${renderValue(value)}` };
}

/** A value already rendered as Go's %#v would print it (maps, structs), for Invalid messages. */
export class GoValue {
  constructor(readonly text: string) {}
}

/** Renders a value the way field.Error does: strings quoted, numbers and booleans bare, objects as Go would. */
export function renderValue(value: unknown): string {
  if (value instanceof GoValue) return value.text;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return 'null';
  return JSON.stringify(value);
}

/** 422 Invalid with the apiserver's aggregate message ("Kind \"name\" is invalid: [a, b]"). */
export function invalid(gk: GroupKind, name: string, errors: readonly FieldError[]): ApiError {
  const rendered = [...new Set(errors.map((e) => (e.field === '' ? e.detail : `${e.field}: ${e.detail}`)))];
  const summary = rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${qualifiedKind(gk)} "${name}" is invalid: ${summary}`, {
    name,
    group: gk.group,
    kind: gk.kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.detail, field: e.field })),
  });
}
