// The record of every write: who sent it (user, user agent), to which object, when it arrived and when it was answered.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The verbs that change stored objects, as the apiserver's RequestInfo names them. */
const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * One write, as kube-apiserver's audit log at the Metadata level tells it (user, user agent, objectRef, the time the
 * request was received and the time its response was complete, the response code), so that a test can attribute each
 * write to the process that sent it on the emulator as on a real API server.
 */
export interface WriteRecord {
  readonly verb: string;
  readonly group: string;
  /** "deployments", or "customapps/status" for a subresource. */
  readonly resource: string;
  readonly namespace: string;
  /** The object's name; for a create, the name of the object it created (empty when it failed before naming one). */
  name: string;
  readonly user: string;
  readonly userAgent: string;
  /** Epoch milliseconds, with the sub-millisecond fraction of the monotonic clock. */
  readonly receivedMs: number;
  /** When the response was complete (or the connection closed without one); undefined while in flight. */
  completedMs?: number;
  /** The response's status code; undefined while in flight, 0 when the connection closed first. */
  code?: number;
}

/** The time now as epoch milliseconds with a sub-millisecond fraction: fine enough to order two writes in one millisecond. */
function preciseNowMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * The emulator's write record. Off unless the emulator is started with `recordWrites` (an embedded emulator that runs
 * for days must not grow with every write); a test reads it with {@link writes} and empties it with {@link reset}.
 */
export class WriteLog {
  private readonly records: WriteRecord[] = [];
  private readonly byRequest = new WeakMap<IncomingMessage, WriteRecord>();

  constructor(readonly enabled: boolean) {}

  /** Starts the record of a write request, completed when its response is. Reads and non-resource requests are ignored. */
  begin(
    req: IncomingMessage,
    res: ServerResponse,
    request: { verb: string; group: string; resource: string; namespace: string; name: string; user: string },
  ): void {
    if (!this.enabled || !WRITE_VERBS.has(request.verb)) return;
    const agent = req.headers['user-agent'];
    const record: WriteRecord = { ...request, userAgent: typeof agent === 'string' ? agent : '', receivedMs: preciseNowMs() };
    this.records.push(record);
    this.byRequest.set(req, record);
    res.once('close', () => {
      record.completedMs = preciseNowMs();
      record.code = res.writableFinished ? res.statusCode : 0;
    });
  }

  /** Names the object a create made (its URL names none). */
  named(req: IncomingMessage, name: string | undefined): void {
    const record = this.byRequest.get(req);
    if (record && record.name === '') record.name = name ?? '';
  }

  /** The writes recorded since the start or the last reset, in arrival order. */
  writes(): readonly WriteRecord[] {
    return this.records;
  }

  reset(): void {
    this.records.length = 0;
  }
}
