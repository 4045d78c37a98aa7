// Reads the real node's API server audit log: who held the operator's Lease when each of its writes landed, and the
// LISTs and WATCHes its replicas sent after a fault.
import { readFileSync } from 'node:fs';
import { parseJsonLines } from '../support/json-lines.js';

/** The fields of an audit event (audit.k8s.io/v1 Event) the checks read. */
export interface AuditEvent {
  readonly stage: string;
  readonly verb: string;
  readonly requestURI: string;
  readonly user: { readonly username: string; readonly extra?: Readonly<Record<string, readonly string[]>> };
  readonly sourceIPs?: readonly string[];
  readonly objectRef?: {
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
    readonly apiGroup?: string;
  };
  readonly responseStatus?: { readonly code?: number };
  /** A Lease write's answer (the policy records Lease writes in full): its holder, its times, a ring member's annotations. */
  readonly responseObject?: {
    readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> };
    readonly spec?: {
      readonly holderIdentity?: string;
      readonly leaseDurationSeconds?: number;
      readonly acquireTime?: string;
      readonly renewTime?: string;
      readonly leaseTransitions?: number;
    };
  };
  readonly requestReceivedTimestamp: string;
  readonly stageTimestamp: string;
}

/**
 * The events of the audit log (JSON lines), of `username` alone when given: each request at its end, and each WATCH
 * also at its start (one still open when the log is read has no end yet).
 */
export function readAuditLog(path: string, username?: string): AuditEvent[] {
  const text = readFileSync(path, 'utf8');
  // The API server appends each event as a request ends: a last line without its newline is still being written.
  return parseJsonLines<AuditEvent>(text.slice(0, text.lastIndexOf('\n') + 1)).filter(
    (event) =>
      (event.stage === 'ResponseComplete' || (event.stage === 'ResponseStarted' && event.verb === 'watch')) &&
      (username === undefined || event.user.username === username),
  );
}

/** The pod a bound ServiceAccount token was issued to, as the API server recorded it. */
const POD_NAME = 'authentication.kubernetes.io/pod-name';

/** Who sent a request: the pod its token was bound to when known (every in-cluster client's), else its address. */
export function senderOf(event: AuditEvent): string {
  return event.user.extra?.[POD_NAME]?.[0] ?? event.sourceIPs?.[0] ?? '';
}

/** An audit timestamp (RFC 3339 with microseconds) in milliseconds since the epoch, the microseconds kept as a fraction. */
export function auditMs(timestamp: string): number {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-].*)$/.exec(timestamp);
  if (!match) throw new Error(`not an audit timestamp: "${timestamp}"`);
  return Date.parse(`${match[1]}${match[3]}`) + Number(`0.${match[2] ?? '0'}`) * 1000;
}

/** One holder's time with the Lease: from the write that gave it the Lease until the write that gave it to another. */
export interface LeaseTerm {
  /** The holder identity (`<pod>_<uuid>`), or '' for a released Lease. */
  readonly holder: string;
  /** Who its Lease writes came from ({@link senderOf}). */
  readonly sender: string;
  readonly fromMs: number;
}

const isLeaseWrite = (event: AuditEvent, lease: string): boolean =>
  event.objectRef?.resource === 'leases' &&
  event.objectRef.name === lease &&
  ['create', 'update', 'patch'].includes(event.verb) &&
  (event.responseStatus?.code ?? 500) < 300;

/** The Lease's terms in order, from its successful writes (a renewal by the same holder continues its term). */
export function leaseTerms(events: readonly AuditEvent[], lease: string): LeaseTerm[] {
  const terms: LeaseTerm[] = [];
  const writes = events.filter((event) => isLeaseWrite(event, lease)).sort((a, b) => auditMs(a.stageTimestamp) - auditMs(b.stageTimestamp));
  for (const write of writes) {
    const holder = write.responseObject?.spec?.holderIdentity ?? '';
    if (terms.at(-1)?.holder === holder) continue;
    terms.push({ holder, sender: senderOf(write), fromMs: auditMs(write.stageTimestamp) });
  }
  return terms;
}

/** Requests that change nothing stored: reviews the operator asks for (metrics authentication, its access gate). */
const REVIEWS = new Set(['tokenreviews', 'subjectaccessreviews', 'selfsubjectaccessreviews', 'localsubjectaccessreviews']);
/** The verbs that store. */
export const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** A successful write (not a Lease write, not a review) by a replica that did not hold the Lease when it arrived. */
export interface FencingViolation {
  readonly write: string;
  readonly at: string;
  readonly writer: string;
  readonly holder: string;
}

/**
 * The successful writes (every verb that stores, the Lease's own excepted) that arrived while the Lease was held by
 * another replica than the writer, or by no one: writer and holder are told apart by {@link senderOf} (their pods).
 * A write that arrived before the first term is reported too.
 */
export function writesOutsideTerms(events: readonly AuditEvent[], lease: string): { violations: FencingViolation[]; writes: number } {
  const terms = leaseTerms(events, lease);
  const violations: FencingViolation[] = [];
  let writes = 0;
  for (const event of events) {
    if (!WRITE_VERBS.has(event.verb) || isLeaseWrite(event, lease) || event.objectRef?.resource === 'leases') continue;
    if (REVIEWS.has(event.objectRef?.resource ?? '') || (event.responseStatus?.code ?? 500) >= 300) continue;
    writes += 1;
    const at = auditMs(event.requestReceivedTimestamp);
    const term = terms.filter((each) => each.fromMs <= at).at(-1);
    const writer = senderOf(event);
    if (!term || term.holder === '' || term.sender !== writer) {
      violations.push({
        write: `${event.verb} ${event.requestURI}`,
        at: event.requestReceivedTimestamp,
        writer,
        holder: term ? `${term.holder || '(released)'} from ${term.sender}` : '(before any holder)',
      });
    }
  }
  return { violations, writes };
}

/** The LISTs and the distinct WATCH streams each sender sent within a window. */
export interface ListsAndWatches {
  /** {@link senderOf}: the pod. */
  readonly sender: string;
  readonly lists: number;
  /** Distinct watched collections (resource, namespace, selectors), each counted once however often it resumed. */
  readonly watches: number;
  /** The collections it listed, with how often. */
  readonly listed: Readonly<Record<string, number>>;
}

/** What a request reads: its path and selectors, without the resourceVersion, timeout or bookmarks it asked with. */
function collectionOf(event: AuditEvent): string {
  const url = new URL(event.requestURI, 'https://audit.invalid');
  const selectors = ['labelSelector', 'fieldSelector']
    .map((name) => url.searchParams.get(name))
    .filter(Boolean)
    .join(',');
  return selectors ? `${url.pathname}?${selectors}` : url.pathname;
}

/** The LISTs and distinct WATCH streams per sender among `events` that arrived in [fromMs, toMs). */
export function listsAndWatches(events: readonly AuditEvent[], fromMs: number, toMs: number): ListsAndWatches[] {
  const perSender = new Map<string, { listed: Record<string, number>; watched: Set<string> }>();
  for (const event of events) {
    const at = auditMs(event.requestReceivedTimestamp);
    if (at < fromMs || at >= toMs || (event.verb !== 'list' && event.verb !== 'watch')) continue;
    const sender = senderOf(event);
    const entry = perSender.get(sender) ?? { listed: {}, watched: new Set<string>() };
    perSender.set(sender, entry);
    const collection = collectionOf(event);
    if (event.verb === 'list') entry.listed[collection] = (entry.listed[collection] ?? 0) + 1;
    else entry.watched.add(collection);
  }
  return [...perSender].map(([sender, { listed, watched }]) => ({
    sender,
    lists: Object.values(listed).reduce((sum, count) => sum + count, 0),
    watches: watched.size,
    listed,
  }));
}
