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
    let timer: NodeJS.Timeout | undefined;
    let unsubscribe: (() => void) | undefined;
    const release = () => {
      unsubscribe?.();
      this.open.delete(id);
      if (timer !== undefined) clearTimeout(timer);
    };
    const lines = watchLines(this.api, req);
    const matches = (obj: KubeObject | undefined) => obj !== undefined && this.api.selects(rt, selection, obj);
    const deliver = (event: StoreEvent) => {
      const change = visibleChange(event, matches);
      if (change !== undefined) response.write(lines.change(event, change.type, change.useCurrent));
    };
    const rv = req.resourceVersion;
    const initial = req.sendInitialEvents ?? (rv === '' || rv === '0');
    const after = initial ? 0 : Number(rv);
    const response = watchResponse(res, release, onClose);

    this.open.set(id, {
      id,
      resource: rt.resource,
      group: rt.group,
      namespace: selection.namespace,
      user: req.user,
      startedAt: this.clock(),
      close: (mode?: 'end' | 'reset') => response.finish(mode ?? 'end'),
      bookmark: req.allowBookmarks ? () => response.write(bookmarkLine(rt, this.api.store.currentRv, false)) : undefined,
      lastBookmark: this.clock(),
    });

    // The hook (Faults) consumes its own one-shot entries; it stays installed for the next expireNextWatch.
    if (this.forceExpired?.(req)) {
      response.write(expiredLine(`too old resource version: ${req.resourceVersion || '0'} (${this.api.store.currentRv})`));
      response.finish('end');
      return;
    }

    if (initial) {
      for (const key of collection.sortedKeys()) {
        const obj = collection.objects.get(key)!.object;
        if (matches(obj)) response.write(lines.added(obj));
      }
      if (req.sendInitialEvents === true && req.allowBookmarks) response.write(bookmarkLine(rt, this.api.store.currentRv, true));
    } else {
      let backlog: StoreEvent[];
      try {
        backlog = collection.eventsAfter(Number(rv));
      } catch (e) {
        if (!(e instanceof HistoryExpired)) throw e;
        response.write(expiredLine(e.message));
        response.finish('end');
        return;
      }
      for (const event of backlog) deliver(event);
    }
    unsubscribe = collection.subscribe(selection.namespace, (event: StoreEvent) => {
      if (event.rv > after) deliver(event);
    });
    if (req.timeoutSeconds !== undefined && req.timeoutSeconds > 0) {
      timer = setTimeout(() => response.finish('end'), req.timeoutSeconds * 1000);
      timer.unref();
    }
  }
}

/** The line type a watcher sees for a store event under its selection, and whether the line shows the current object. */
interface VisibleChange {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly useCurrent: boolean;
}

/**
 * What a watcher whose selection is `matches` sees of an event: a MODIFIED that enters the selection is ADDED, one that
 * leaves it is DELETED (with the object as it was); undefined when the event is outside the selection.
 */
function visibleChange(event: StoreEvent, matches: (obj: KubeObject | undefined) => boolean): VisibleChange | undefined {
  switch (event.type) {
    case 'ADDED':
      return matches(event.object) ? { type: 'ADDED', useCurrent: true } : undefined;
    case 'MODIFIED': {
      const now = matches(event.object);
      const before = matches(event.previous);
      if (now && before) return { type: 'MODIFIED', useCurrent: true };
      if (now) return { type: 'ADDED', useCurrent: true };
      if (before) return { type: 'DELETED', useCurrent: false };
      return undefined;
    }
    case 'DELETED':
      return matches(event.object) ? { type: 'DELETED', useCurrent: true } : undefined;
  }
  return undefined;
}

/** The lines one watch writes: events as shared serialised lines, or as one-row Tables (column definitions in the first only). */
interface WatchLines {
  /** An object of the initial events. */
  added(obj: KubeObject): Line | string;
  change(event: StoreEvent, type: string, useCurrent: boolean): Line | string;
}

function watchLines(api: Api, req: WatchRequest): WatchLines {
  const { rt, table } = req;
  let columnsSent = false;
  const tableLine = (type: string, obj: KubeObject) => {
    const presented = api.present(rt, obj);
    const rows = tableOf(
      table!.columns,
      [presented],
      { resourceVersion: presented.metadata.resourceVersion },
      table!.includeObject,
      api.now(),
    );
    if (columnsSent) rows.columnDefinitions = null;
    columnsSent = true;
    return `{"type":"${type}","object":${JSON.stringify(rows)}}\n`;
  };
  return {
    added: (obj) => (table === undefined ? `{"type":"ADDED","object":${cachedJson(api.present(rt, obj))}}\n` : tableLine('ADDED', obj)),
    change(event, type, useCurrent) {
      if (table === undefined) return eventLine(rt, api, event, type, useCurrent);
      const obj = useCurrent
        ? event.object
        : { ...event.previous!, metadata: { ...event.previous!.metadata, resourceVersion: String(event.rv) } };
      return tableLine(type, obj);
    },
  };
}

/** A watch's chunked response: writes lines until it is finished, and finishes a reader that lags too far behind. */
interface WatchResponse {
  write(payload: Line | string): void;
  /** Ends the stream once: "end" finishes the chunked response cleanly, "reset" destroys the connection. */
  finish(mode: 'end' | 'reset'): void;
}

/**
 * Writes the headers and answers the response's writer. `release` runs first when it finishes (the watch's
 * subscription and timer), `onClose` last.
 */
function watchResponse(res: ServerResponse, release: () => void, onClose: () => void): WatchResponse {
  let closed = false;
  // After the headers, a chunked response is written straight to its socket with pre-framed chunks: one buffer
  // per event shared by every watcher, instead of ServerResponse framing and encoding per watcher.
  let direct: Socket | undefined;
  const finish = (mode: 'end' | 'reset') => {
    if (closed) return;
    closed = true;
    release();
    if (mode === 'reset') res.destroy();
    else res.end();
    onClose();
  };
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
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  if ((res as unknown as { chunkedEncoding?: boolean }).chunkedEncoding === true && res.socket !== null) direct = res.socket;
  res.on('close', () => finish('end'));
  return { write, finish };
}

/** A BOOKMARK at `rv`; `initialEnd` marks the end of the initial events (sendInitialEvents). */
function bookmarkLine(rt: ResourceType, rv: number, initialEnd: boolean): string {
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (initialEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
  const object = rt.strategicMerge
    ? { kind: rt.kind, apiVersion: groupVersion(rt), metadata }
    : { apiVersion: groupVersion(rt), kind: rt.kind, metadata };
  return `{"type":"BOOKMARK","object":${JSON.stringify(object)}}\n`;
}

function expiredLine(message: string): string {
  return `{"type":"ERROR","object":${JSON.stringify(new ApiError(410, 'Expired', message).status())}}\n`;
}
