// An in-memory API server for one namespace of ConfigMaps whose every list answer and watch event is released by the test.
import type { ListOptions, WatchOptions } from '../../kube/options.js';
import type { ObjectList, RawWatchEvent } from '../../kube/objects.js';
import { ApiError } from '../../kube/errors.js';
import type { Resource } from '../../kube/resources.js';
import type { WatchClient } from '../../watch/config.js';
import type { DependencyObject } from '../dependency-watch.js';

/** A list request the server has evaluated and not answered yet. */
interface PendingList {
  /** What the list saw when it was evaluated (on arrival): the slow-answer case. */
  readonly answer: ObjectList<DependencyObject>;
  readonly resolve: (answer: ObjectList<DependencyObject>) => void;
  readonly reject: (error: unknown) => void;
}

/** What a list saw on its first page: the later pages of the same list (`continue`) hand out the rest of it. */
interface ListSnapshot {
  readonly id: number;
  readonly resourceVersion: string;
  readonly items: readonly DependencyObject[];
}

/** An open watch request: the events it is owed, released one by one by the test. */
interface OpenWatch {
  /** The name of `fieldSelector=metadata.name=…`, or undefined for the whole namespace. */
  readonly name: string | undefined;
  readonly queue: RawWatchEvent<DependencyObject>[];
  /** Events the test released that the watch has not taken yet. */
  credits: number;
  /** How the server ends it, once the test says so. */
  end?: 'closed' | ApiError;
  wake?: () => void;
}

const NAME_SELECTOR = /^metadata\.name=(.+)$/;

function selectedName(options: { fieldSelector?: string }): string | undefined {
  if (!options.fieldSelector) return undefined;
  const match = NAME_SELECTOR.exec(options.fieldSelector);
  if (!match) throw new Error(`fake API: unsupported fieldSelector "${options.fieldSelector}"`);
  return match[1];
}

function gone(message: string): ApiError {
  return new ApiError(message, 410, { kind: 'Status', status: 'Failure', reason: 'Expired', code: 410, message });
}

/**
 * The server side of the dependency registry's watches, with every delay in the test's hands: lists are evaluated
 * when they arrive and answered when the test says (`answerList`), page by page when the client asks for pages, watch events are queued per watch and delivered
 * when the test says (`deliver`), and watches end cleanly, break, or expire (410) on demand. Writes get
 * resourceVersions from one counter, as etcd's revisions; `compact` makes every older resourceVersion unusable.
 * It serves one namespace of one kind, which is where the registry's granularity switches happen.
 */
export class FakeDependencyApi implements WatchClient {
  private revision = 1;
  private compactedBelow = 0;
  private readonly objects = new Map<string, DependencyObject>();
  private readonly history: { readonly revision: number; readonly event: RawWatchEvent<DependencyObject> }[] = [];
  private readonly lists: PendingList[] = [];
  /** Every list's snapshot, by id, for its later pages (`continue`). */
  private readonly snapshots = new Map<number, ListSnapshot>();
  private readonly watches: OpenWatch[] = [];

  constructor(readonly namespace: string) {}

  /** Creates or updates `name` with `data`. */
  write(name: string, data: Record<string, string>): void {
    const type = this.objects.has(name) ? 'MODIFIED' : 'ADDED';
    const object: DependencyObject = { metadata: { namespace: this.namespace, name, resourceVersion: String(++this.revision) }, data };
    this.objects.set(name, object);
    this.record({ type, object });
  }

  /** Deletes `name`, if it exists. */
  remove(name: string): void {
    const object = this.objects.get(name);
    if (!object) return;
    this.objects.delete(name);
    this.record({ type: 'DELETED', object: { ...object, metadata: { ...object.metadata, resourceVersion: String(++this.revision) } } });
  }

  /** The object as the server holds it now. */
  current(name: string): DependencyObject | undefined {
    return this.objects.get(name);
  }

  /** Forgets the history: a watch from any resourceVersion before now is answered 410 Gone. */
  compact(): void {
    this.compactedBelow = this.revision;
    this.history.length = 0;
  }

  /** Lists waiting for an answer. */
  get pendingLists(): number {
    return this.lists.length;
  }

  /** Watches open now, with the name each one selects (`*` for the namespace). */
  openWatches(): string[] {
    return this.watches.map((watch) => watch.name ?? '*');
  }

  /** Events owed to open watches that were not delivered yet. */
  get undelivered(): number {
    return this.watches.reduce((sum, watch) => sum + watch.queue.length, 0);
  }

  /** Answers the `index`-th pending list (modulo their number), with what it saw when it arrived. */
  answerList(index: number): void {
    const [list] = this.lists.splice(index % Math.max(1, this.lists.length), 1);
    list?.resolve(list.answer);
  }

  /** Answers the list that arrived last: lists started before it stay slow. */
  answerNewest(): void {
    this.answerList(this.lists.length - 1);
  }

  /** Fails the `index`-th pending list with a 500. */
  failList(index: number): void {
    const [list] = this.lists.splice(index % Math.max(1, this.lists.length), 1);
    list?.reject(new ApiError('fake API: 500 InternalError', 500));
  }

  /** Releases up to `count` queued events of the `index`-th open watch. */
  deliver(index: number, count = 1): void {
    const watch = this.watches[index % Math.max(1, this.watches.length)];
    if (!watch) return;
    watch.credits = Math.min(watch.queue.length, watch.credits + count);
    watch.wake?.();
  }

  /** Releases every queued event of every watch. */
  deliverAll(): void {
    for (const watch of this.watches) {
      watch.credits = watch.queue.length;
      watch.wake?.();
    }
  }

  /** Answers every pending list. */
  answerAll(): void {
    while (this.lists.length > 0) this.answerList(0);
  }

  /** A bookmark at the current revision, when the `index`-th watch has nothing queued (so nothing is skipped). */
  bookmark(index: number): void {
    const watch = this.watches[index % Math.max(1, this.watches.length)];
    if (!watch || watch.queue.length > 0) return;
    watch.queue.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(this.revision) } } });
    this.deliver(index);
  }

  /**
   * Ends the `index`-th open watch: `closed` as the server's timeout does, `reset` as a broken connection, `gone`
   * with an in-stream 410 ERROR event (the events queued before it are lost, as when the server's window moved on).
   */
  endWatch(index: number, how: 'closed' | 'reset' | 'gone'): void {
    const watch = this.watches[index % Math.max(1, this.watches.length)];
    if (!watch) return;
    if (how === 'gone') this.expireWatch(watch);
    else {
      watch.end = how === 'closed' ? 'closed' : new ApiError('fake API: connection reset', 0);
      watch.wake?.();
    }
  }

  /**
   * The server's window moves past every open watch at once, as after a compaction its watch cache had not caught
   * up with, or an API server restart: history is compacted, and each watch ends with an in-stream 410 that loses
   * the events it was owed. Every watcher relists, the namespace watch included, whatever else is in flight.
   */
  expire(): void {
    this.compact();
    for (const watch of this.watches) this.expireWatch(watch);
  }

  list<T>(_resource: Resource, options: ListOptions = {}, signal?: AbortSignal): Promise<ObjectList<T>> {
    const answer = this.page(options);
    return new Promise<ObjectList<T>>((resolve, reject) => {
      const pending: PendingList = { answer, resolve: resolve as PendingList['resolve'], reject };
      this.lists.push(pending);
      signal?.addEventListener(
        'abort',
        () => {
          const at = this.lists.indexOf(pending);
          if (at >= 0) this.lists.splice(at, 1);
          reject(new ApiError('fake API: aborted', 0));
        },
        { once: true },
      );
    });
  }

  /**
   * One page of a list, as the API server pages one: the first request (no `continue`) takes a snapshot of what it
   * selects, ordered by name, and each page with `limit` hands out the next items of that same snapshot and its
   * resourceVersion, with a `continue` token while more remain. A list's pages are so many requests, each answered when
   * the test says: refs acquired, objects written and events delivered between two pages of one list are possible.
   */
  private page(options: ListOptions): ObjectList<DependencyObject> {
    let snapshot: ListSnapshot;
    let offset = 0;
    if (options.continue) {
      const [id, at] = options.continue.split(':');
      const found = this.snapshots.get(Number(id));
      if (!found) throw new Error(`fake API: unknown continue token "${options.continue}"`);
      snapshot = found;
      offset = Number(at);
    } else {
      const name = selectedName(options);
      const items = [...this.objects.values()]
        .filter((object) => name === undefined || object.metadata.name === name)
        .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
      snapshot = { id: this.snapshots.size + 1, resourceVersion: String(this.revision), items };
      this.snapshots.set(snapshot.id, snapshot);
    }
    const end = options.limit ? offset + options.limit : snapshot.items.length;
    const more = end < snapshot.items.length;
    return {
      metadata: { resourceVersion: snapshot.resourceVersion, ...(more ? { continue: `${snapshot.id}:${end}` } : {}) },
      items: snapshot.items.slice(offset, end),
    };
  }

  async *watch<T>(
    _resource: Resource,
    options: WatchOptions = {},
    signal?: AbortSignal,
  ): AsyncGenerator<RawWatchEvent<T>, void, undefined> {
    const from = Number(options.resourceVersion);
    if (!Number.isInteger(from)) throw new Error(`fake API: watch without a resourceVersion ("${options.resourceVersion}")`);
    if (from < this.compactedBelow) throw gone(`fake API: resourceVersion ${from} is older than ${this.compactedBelow}`);
    const name = selectedName(options);
    const queue = this.history.filter(({ revision, event }) => revision > from && this.selects(name, event)).map(({ event }) => event);
    const watch: OpenWatch = { name, queue, credits: 0 };
    this.watches.push(watch);
    const onAbort = (): void => watch.wake?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        while (watch.credits === 0 && watch.end === undefined && !signal?.aborted) {
          await new Promise<void>((resolve) => {
            watch.wake = resolve;
          });
        }
        if (signal?.aborted || watch.end === 'closed') return;
        if (watch.end) throw watch.end;
        watch.credits -= 1;
        yield watch.queue.shift() as RawWatchEvent<T>;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.watches.splice(this.watches.indexOf(watch), 1);
    }
  }

  /** Replaces what `watch` is owed with an in-stream 410 ERROR event, delivered at once. */
  private expireWatch(watch: OpenWatch): void {
    watch.queue.splice(0, watch.queue.length, {
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' },
    });
    watch.credits = 1;
    watch.wake?.();
  }

  private selects(name: string | undefined, event: RawWatchEvent<DependencyObject>): boolean {
    return name === undefined || ('metadata' in event.object && event.object.metadata.name === name);
  }

  private record(event: RawWatchEvent<DependencyObject>): void {
    this.history.push({ revision: this.revision, event });
    for (const watch of this.watches) if (this.selects(watch.name, event)) watch.queue.push(event);
  }
}
