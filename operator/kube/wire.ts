// The API's wire format: query strings, error answers and watch lines, read without quoting payloads.
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, type Status } from './errors.js';
import type { RawWatchEvent } from './objects.js';

/** A query string of the given parameters, leaving out undefined and empty ones. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** The metav1.Status in an error answer's body, if it is one. */
export function statusFromBody(text: string): Status | undefined {
  try {
    const parsed = JSON.parse(text) as Status;
    return parsed && parsed.kind === 'Status' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Seconds to wait before retrying, from `Retry-After` or the Status's `retryAfterSeconds`. */
export function retryAfter(headers: IncomingHttpHeaders, status: Status | undefined): number | undefined {
  const header = Number(headers['retry-after']);
  if (Number.isFinite(header) && header >= 0) return header;
  return status?.details?.retryAfterSeconds;
}

/** One line of a watch stream as an event; `path` names the watch in errors, which never quote the line. */
export function parseWatchLine<T>(line: string, path: string): RawWatchEvent<T> {
  // Errors carry no excerpt of the line (nor V8's SyntaxError, which quotes it): it may hold Secret data.
  let event: RawWatchEvent<T>;
  try {
    event = JSON.parse(line) as RawWatchEvent<T>;
  } catch {
    throw new ApiError(`watch ${path}: malformed event (${line.length} bytes)`, 0);
  }
  if (!event || typeof event.type !== 'string' || typeof event.object !== 'object' || event.object === null) {
    throw new ApiError(`watch ${path}: event without type or object (${line.length} bytes)`, 0);
  }
  return event;
}
