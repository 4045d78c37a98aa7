// The error of a failed API request, carrying the server's Status object.

/** A metav1.Status, as the API server returns for errors. */
export interface Status {
  readonly kind?: 'Status';
  readonly apiVersion?: string;
  readonly status?: 'Success' | 'Failure';
  readonly message?: string;
  /** CamelCase machine-readable reason: NotFound, AlreadyExists, Conflict, Invalid, Forbidden, Expired, Gone… */
  readonly reason?: string;
  readonly details?: {
    readonly name?: string;
    readonly kind?: string;
    readonly causes?: readonly { readonly field?: string; readonly message?: string; readonly reason?: string }[];
    readonly retryAfterSeconds?: number;
  };
  readonly code?: number;
}

/** A non-2xx answer of the API server (or a transport failure, with `statusCode` 0). */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    message: string,
    /** The HTTP status, or 0 when no answer arrived. */
    readonly statusCode: number,
    /** The server's Status object, when it sent one. */
    readonly status?: Status,
    /** Seconds from a `Retry-After` header or `details.retryAfterSeconds`. */
    readonly retryAfterSeconds?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** The Status reason (`NotFound`, `Conflict`, `Expired`…), or '' when there is none. */
  get reason(): string {
    return this.status?.reason ?? '';
  }
}

/** True for 404 NotFound. */
export const isNotFound = (error: unknown): boolean => error instanceof ApiError && error.statusCode === 404;
/** True for 409 Conflict (a stale resourceVersion), not AlreadyExists. */
export const isConflict = (error: unknown): boolean =>
  error instanceof ApiError && error.statusCode === 409 && error.reason !== 'AlreadyExists';
/** True for 409 AlreadyExists. */
export const isAlreadyExists = (error: unknown): boolean =>
  error instanceof ApiError && error.statusCode === 409 && error.reason === 'AlreadyExists';
/** True for 410 Gone / reason Expired: the requested resourceVersion is too old; relist. */
export const isGone = (error: unknown): boolean =>
  error instanceof ApiError && (error.statusCode === 410 || error.reason === 'Expired' || error.reason === 'Gone');
/** The reason of an answer the client stopped reading at its byte limit (`ListOptions.maxBytes`); no server sends it. */
export const ANSWER_TOO_LARGE = 'AnswerTooLarge';
/** True for an answer refused for its size: ask again for less (a smaller `limit`). */
export const isAnswerTooLarge = (error: unknown): boolean => error instanceof ApiError && error.reason === ANSWER_TOO_LARGE;
/** True for 403 Forbidden (RBAC denied the request). */
export const isForbidden = (error: unknown): boolean => error instanceof ApiError && error.statusCode === 403;

/**
 * An error's code, reason and message for a log line. Excerpts of a malformed answer (the client quotes them in
 * parentheses) are cut, because they may hold object payloads, and a Secret's value must never reach a log.
 */
export function loggableError(error: unknown): { code?: number; reason?: string; message: string } {
  const message = error instanceof Error ? error.message.replace(/\s\(.*\)\s*$/s, ' (…)') : String(error);
  return error instanceof ApiError ? { code: error.statusCode, reason: error.reason || undefined, message } : { message };
}
