// The API server's audit log of the operator's identity: every request it made, counted on the server side.
import { open, type FileHandle } from 'node:fs/promises';
import { auditTimeMs } from '../envtest/audit.js';
import { countRequest, type RequestCounts } from './stats.js';

/**
 * The audit policy the benchmark gives kube-apiserver: metadata (verb, resource, URI, timestamps, status) of
 * every request by `username`, nothing for anyone else, and no RequestReceived stage (a request is logged once
 * when it completes; a watch also when its response starts).
 */
export function auditPolicy(username: string): string {
  return [
    'apiVersion: audit.k8s.io/v1',
    'kind: Policy',
    'omitStages: ["RequestReceived"]',
    'rules:',
    '- level: Metadata',
    `  users: ["${username}"]`,
    '- level: None',
    '',
  ].join('\n');
}

/** One request as the audit log tells it. */
export interface AuditedRequest {
  readonly id: string;
  readonly verb: string;
  /** `configmaps`, `deployments.apps`, `customapps.app.example.com/status`. */
  readonly resource: string;
  /** Epoch milliseconds (microsecond precision) when the server received it. */
  readonly receivedMs: number;
  /** When it completed (for a watch: when the stream ended); undefined while a watch is open. */
  completedMs?: number;
  /** What stream a list or watch serves: resource, namespace and selectors. */
  readonly streamKey: string;
  /** A watch's `timeoutSeconds` parameter, when the client sent one. */
  readonly timeoutSeconds?: number;
  code?: number;
}

interface AuditEvent {
  auditID: string;
  stage: string;
  verb: string;
  requestURI: string;
  objectRef?: { resource?: string; namespace?: string; apiGroup?: string; subresource?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

/** A request's stream identity: what a renewal of the same list or watch repeats. */
function streamKeyOf(uri: string, resource: string, namespace: string | undefined): string {
  const query = new URL(uri, 'http://x').searchParams;
  return [resource, namespace ?? '*', query.get('fieldSelector') ?? '', query.get('labelSelector') ?? ''].join('|');
}

/** Parses one audit line into the fields kept; undefined for lines of other stages or unparseable ones. */
export function parseAuditLine(line: string): (AuditedRequest & { stage: string }) | undefined {
  let event: AuditEvent;
  try {
    event = JSON.parse(line) as AuditEvent;
  } catch {
    return undefined;
  }
  if (!event.auditID || !event.verb) return undefined;
  const ref = event.objectRef ?? {};
  const resource = `${ref.resource ?? 'nonresource'}${ref.apiGroup ? `.${ref.apiGroup}` : ''}${ref.subresource ? `/${ref.subresource}` : ''}`;
  const timeout = new URL(event.requestURI, 'http://x').searchParams.get('timeoutSeconds');
  return {
    id: event.auditID,
    stage: event.stage,
    verb: event.verb,
    resource,
    receivedMs: auditTimeMs(event.requestReceivedTimestamp),
    completedMs: event.stage === 'ResponseComplete' || event.stage === 'Panic' ? auditTimeMs(event.stageTimestamp) : undefined,
    streamKey: streamKeyOf(event.requestURI, resource, ref.namespace),
    timeoutSeconds: timeout === null ? undefined : Number(timeout),
    code: event.responseStatus?.code,
  };
}

/** A list or watch received this soon after a watch of the same stream ended renews that stream. */
const RENEWAL_WINDOW_MS = 5_000;

/**
 * The audit log, read incrementally: {@link refresh} parses what was appended since the last call. Requests are
 * kept by audit ID (a watch appears twice: when its response starts and when it completes).
 */
export class AuditLog {
  private readonly requests = new Map<string, AuditedRequest>();
  private readonly ordered: AuditedRequest[] = [];
  private offset = 0;
  private pending = '';
  private file: FileHandle | undefined;

  constructor(private readonly path: string) {}

  /** Reads the lines appended since the last call. */
  async refresh(): Promise<void> {
    this.file ??= await open(this.path, 'r').catch(() => undefined);
    if (!this.file) return;
    const chunk = Buffer.alloc(1 << 20);
    for (;;) {
      const { bytesRead } = await this.file.read(chunk, 0, chunk.length, this.offset);
      if (bytesRead === 0) break;
      this.offset += bytesRead;
      this.pending += chunk.subarray(0, bytesRead).toString('utf8');
      let newline: number;
      while ((newline = this.pending.indexOf('\n')) >= 0) {
        const line = this.pending.slice(0, newline);
        this.pending = this.pending.slice(newline + 1);
        this.add(line);
      }
    }
  }

  async close(): Promise<void> {
    await this.file?.close();
    this.file = undefined;
  }

  private add(line: string): void {
    const parsed = parseAuditLine(line);
    if (!parsed) return;
    const known = this.requests.get(parsed.id);
    if (known) {
      known.completedMs ??= parsed.completedMs;
      known.code ??= parsed.code;
      return;
    }
    const { stage: _stage, ...request } = parsed;
    this.requests.set(request.id, request);
    this.ordered.push(request);
  }

  /** Requests received in [fromMs, toMs), in arrival order. */
  between(fromMs: number, toMs: number): AuditedRequest[] {
    return this.ordered.filter((request) => request.receivedMs >= fromMs && request.receivedMs < toMs);
  }

  /** Watches open at `atMs` (received before it, not completed by then). */
  openWatchesAt(atMs: number): AuditedRequest[] {
    return this.ordered.filter(
      (request) =>
        request.verb === 'watch' && request.receivedMs <= atMs && (request.completedMs === undefined || request.completedMs > atMs),
    );
  }

  /** Requests of [fromMs, toMs) counted by verb and resource, with renewals apart. */
  counts(fromMs: number, toMs: number): { work: RequestCounts; renewals: RequestCounts } {
    const work: RequestCounts = {};
    const renewals: RequestCounts = {};
    const endedWatches = new Map<string, number[]>();
    for (const request of this.ordered) {
      if (request.verb === 'watch' && request.completedMs !== undefined) {
        let ends = endedWatches.get(request.streamKey);
        if (!ends) endedWatches.set(request.streamKey, (ends = []));
        ends.push(request.completedMs);
      }
    }
    for (const request of this.between(fromMs, toMs)) {
      const ends = request.verb === 'watch' || request.verb === 'list' ? endedWatches.get(request.streamKey) : undefined;
      const renewal = ends?.some((end) => end <= request.receivedMs && request.receivedMs - end <= RENEWAL_WINDOW_MS) ?? false;
      countRequest(renewal ? renewals : work, request.verb, request.resource);
    }
    return { work, renewals };
  }
}
