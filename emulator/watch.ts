// Watch streams: newline-delimited JSON events (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) with the apiserver's
// resourceVersion semantics, selector transitions, bookmarks, timeouts, and one serialisation per event and shape.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Api, Selection } from './api.js';
import { ApiError, invalid } from './errors.js';
import { cachedJson } from './http.js';
import type { KubeObject } from './object.js';
import { groupVersion, type ResourceType } from './resources.js';
import { type Collection, HistoryExpired, type StoreEvent } from './store.js';
import { tableOf, type TableColumn } from './table.js';

export interface WatchRequest {
  readonly rt: ResourceType;
  readonly selection: Selection;
  readonly resourceVersion: string;
  readonly resourceVersionMatch: string;
  readonly allowBookmarks: boolean;
  /** sendInitialEvents: undefined (not given), true or false. */
  readonly sendInitialEvents: boolean | undefined;
  readonly timeoutSeconds: number | undefined;
  readonly user: string;
  /** Table output (kubectl get -w): each event's object is a one-row Table; the first carries the column definitions. */
  readonly table?: { readonly columns: readonly TableColumn[]; readonly includeObject: string };
}

/** One open watch, as the hub tracks it (for counters and fault injection). */
export interface OpenWatch {
  readonly id: number;
  readonly resource: string;
  readonly group: string;
  readonly namespace: string;
  readonly user: string;
  readonly startedAt: number;
  /** Ends the stream: "end" finishes the chunked response cleanly, "reset" destroys the connection. */
  close(mode?: 'end' | 'reset'): void;
}

/** The longest a slow reader may lag (bytes buffered) before its watch is closed, as the apiserver drops slow watchers. */
const maxBufferedBytes = 32 * 1024 * 1024;

/** A watch line, and the same bytes framed as one HTTP/1.1 chunk (written straight to the socket). */
interface Line {
  readonly text: string;
  readonly chunk: Buffer;
}

function line(text: string): Line {
  const body = Buffer.from(text, 'utf8');
  return { text, chunk: Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')]) };
}

const lineCache = new WeakMap<StoreEvent, Map<string, Line>>();

/** The serialised line of an event for a resource shape, computed once and shared by every watcher. */
function eventLine(rt: ResourceType, api: Api, event: StoreEvent, type: string, useCurrent: boolean): Line {
  let lines = lineCache.get(event);
  if (lines === undefined) {
    lines = new Map();
    lineCache.set(event, lines);
  }
  const key = `${rt.group}/${rt.version}/${rt.resource}/${type}/${useCurrent ? 'c' : 'p'}`;
  let cached = lines.get(key);
  if (cached === undefined) {
    const object = useCurrent
      ? event.object
      : { ...event.previous!, metadata: { ...event.previous!.metadata, resourceVersion: String(event.rv) } };
    cached = line(`{"type":"${type}","object":${cachedJson(api.present(rt, object))}}\n`);
    lines.set(key, cached);
  }
  return cached;
}

export class WatchHub {
  private readonly open = new Map<number, OpenWatch & { bookmark?: () => void; lastBookmark: number }>();
  private nextId = 1;
  private ticker: NodeJS.Timeout | undefined;
  /** One-shot fault: the next watch (matching) starts with a 410 instead of its events. */
  forceExpired: ((w: WatchRequest) => boolean) | undefined;

  constructor(
    private readonly api: Api,
    private readonly bookmarkIntervalMs: number,
    private readonly clock: () => number,
  ) {}

  /** Starts the bookmark ticker; stopped by close(). */
  start(): void {
    if (this.ticker !== undefined) return;
    const period = Math.max(10, Math.min(1000, Math.floor(this.bookmarkIntervalMs / 2)));
    this.ticker = setInterval(() => this.sendBookmarks(), period);
    this.ticker.unref();
  }

  private sendBookmarks(): void {
    const now = this.clock();
    for (const w of this.open.values()) {
      if (w.bookmark !== undefined && now - w.lastBookmark >= this.bookmarkIntervalMs) {
        w.lastBookmark = now;
        w.bookmark();
      }
    }
  }

  watches(): OpenWatch[] {
    return [...this.open.values()];
  }

  /** Closes every watch matching the predicate; returns how many. */
  drop(predicate: (w: OpenWatch) => boolean, mode: 'end' | 'reset' = 'end'): number {
    let n = 0;
    for (const w of [...this.open.values()]) {
      if (predicate(w)) {
        w.close(mode);
        n++;
      }
    }
    return n;
  }

  close(): void {
    if (this.ticker !== undefined) clearInterval(this.ticker);
    this.ticker = undefined;
    this.drop(() => true, 'end');
  }

  /** Validates the watch options like ListOptions validation does; throws a Status for the HTTP layer. */
  static validate(req: Omit<WatchRequest, 'selection' | 'user' | 'rt'>): void {
    if (req.sendInitialEvents !== undefined && req.resourceVersionMatch !== 'NotOlderThan') {
      throw invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', [
        {
          type: 'FieldValueForbidden',
          field: 'resourceVersionMatch',
          detail: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        },
      ]);
    }
    if (req.sendInitialEvents === undefined && req.resourceVersionMatch !== '') {
      throw invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', [
        {
          type: 'FieldValueForbidden',
          field: 'resourceVersionMatch',
          detail: 'Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        },
      ]);
    }
  }

  /** Serves a watch on an HTTP response until timeout, client disconnect, fault or server close. */
  serve(req: WatchRequest, res: ServerResponse, onClose: () => void): void {
    const { rt, selection } = req;
    const collection: Collection = this.api.collectionOf(rt);
    const id = this.nextId++;
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    let unsubscribe: (() => void) | undefined;
    // After the headers, a chunked response is written straight to its socket with pre-framed chunks: one buffer
    // per event shared by every watcher, instead of ServerResponse framing and encoding per watcher.
    let direct: Socket | undefined;
    const write = (payload: Line | string) => {
      if (closed) return;
      const l = typeof payload === 'string' ? line(payload) : payload;
      if (direct !== undefined) {
        direct.write(l.chunk);
        if (direct.writableLength > maxBufferedBytes) finish('reset');
      } else {
        res.write(l.text);
        if (res.writableLength > maxBufferedBytes) finish('reset');
      }
    };
    const finish = (mode: 'end' | 'reset') => {
      if (closed) return;
      closed = true;
      unsubscribe?.();
      this.open.delete(id);
      if (timer !== undefined) clearTimeout(timer);
      if (mode === 'reset') res.destroy();
      else res.end();
      onClose();
    };
    const matches = (obj: KubeObject | undefined) => obj !== undefined && this.api.selects(rt, selection, obj);
    let columnsSent = false;
    const tableLine = (type: string, obj: KubeObject) => {
      const presented = this.api.present(rt, obj);
      const table = tableOf(
        req.table!.columns,
        [presented],
        { resourceVersion: presented.metadata.resourceVersion },
        req.table!.includeObject,
        this.api.now(),
      );
      if (columnsSent) table.columnDefinitions = null;
      columnsSent = true;
      return `{"type":"${type}","object":${JSON.stringify(table)}}\n`;
    };
    const lineFor = (event: StoreEvent, type: string, useCurrent: boolean): Line | string => {
      if (req.table === undefined) return eventLine(rt, this.api, event, type, useCurrent);
      const obj = useCurrent
        ? event.object
        : { ...event.previous!, metadata: { ...event.previous!.metadata, resourceVersion: String(event.rv) } };
      return tableLine(type, obj);
    };
    const deliver = (event: StoreEvent) => {
      switch (event.type) {
        case 'ADDED':
          if (matches(event.object)) write(lineFor(event, 'ADDED', true));
          break;
        case 'MODIFIED': {
          const now = matches(event.object);
          const before = matches(event.previous);
          if (now && before) write(lineFor(event, 'MODIFIED', true));
          else if (now) write(lineFor(event, 'ADDED', true));
          else if (before) write(lineFor(event, 'DELETED', false));
          break;
        }
        case 'DELETED':
          if (matches(event.object)) write(lineFor(event, 'DELETED', true));
          break;
      }
    };
    const rv = req.resourceVersion;
    const initial = req.sendInitialEvents ?? (rv === '' || rv === '0');
    const after = initial ? 0 : Number(rv);
    const listener = (event: StoreEvent) => {
      if (event.rv > after) deliver(event);
    };
    const bookmarkLine = (rv: number, initialEnd: boolean) => {
      const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
      if (initialEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
      const object = rt.strategicMerge
        ? { kind: rt.kind, apiVersion: groupVersion(rt), metadata }
        : { apiVersion: groupVersion(rt), kind: rt.kind, metadata };
      return `{"type":"BOOKMARK","object":${JSON.stringify(object)}}\n`;
    };

    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    if ((res as unknown as { chunkedEncoding?: boolean }).chunkedEncoding === true && res.socket !== null) direct = res.socket;
    res.on('close', () => finish('end'));

    const entry = {
      id,
      resource: rt.resource,
      group: rt.group,
      namespace: selection.namespace,
      user: req.user,
      startedAt: this.clock(),
      close: (mode?: 'end' | 'reset') => finish(mode ?? 'end'),
      bookmark: req.allowBookmarks ? () => write(bookmarkLine(this.api.store.currentRv, false)) : undefined,
      lastBookmark: this.clock(),
    };
    this.open.set(id, entry);

    const expiredLine = (message: string) =>
      `{"type":"ERROR","object":${JSON.stringify(new ApiError(410, 'Expired', message).status())}}\n`;
    // The hook (Faults) consumes its own one-shot entries; it stays installed for the next expireNextWatch.
    if (this.forceExpired?.(req)) {
      write(expiredLine(`too old resource version: ${req.resourceVersion || '0'} (${this.api.store.currentRv})`));
      finish('end');
      return;
    }

    if (initial) {
      for (const key of collection.sortedKeys()) {
        const obj = collection.objects.get(key)!.object;
        if (!matches(obj)) continue;
        write(req.table === undefined ? `{"type":"ADDED","object":${cachedJson(this.api.present(rt, obj))}}\n` : tableLine('ADDED', obj));
      }
      if (req.sendInitialEvents === true && req.allowBookmarks) write(bookmarkLine(this.api.store.currentRv, true));
    } else {
      let backlog: StoreEvent[];
      try {
        backlog = collection.eventsAfter(Number(rv));
      } catch (e) {
        if (!(e instanceof HistoryExpired)) throw e;
        write(expiredLine(e.message));
        finish('end');
        return;
      }
      for (const event of backlog) deliver(event);
    }
    unsubscribe = collection.subscribe(selection.namespace, listener);
    if (req.timeoutSeconds !== undefined && req.timeoutSeconds > 0) {
      timer = setTimeout(() => finish('end'), req.timeoutSeconds * 1000);
      timer.unref();
    }
  }
}
