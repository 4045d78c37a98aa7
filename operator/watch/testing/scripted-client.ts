// A WatchClient that answers lists and watches from scripts, for tests of the watch layer without a server.
import type { ListOptions, WatchOptions } from '../../kube/options.js';
import type { KubeObject, ObjectList, RawWatchEvent } from '../../kube/objects.js';
import { ApiError } from '../../kube/errors.js';
import type { Resource } from '../../kube/resources.js';
import type { WatchClient } from '../config.js';

/** The object type scripts use. */
export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** One step of a scripted watch: an event, a failure, or the server closing the stream normally. */
export type WatchStep = RawWatchEvent<ConfigMap> | ApiError | 'close';

/**
 * A client that answers lists and watches from scripts. A watch whose script runs out without `close` or an error
 * stays open (silent) until its signal aborts, as a real one would. `open` counts watches not yet finished.
 */
export class ScriptedClient implements WatchClient {
  readonly lists: ListOptions[] = [];
  readonly watches: WatchOptions[] = [];
  open = 0;
  aborted = 0;
  /** Whether lists report their answers as protobuf (their length is still their JSON's). */
  protobuf = false;

  constructor(
    private readonly pages: (ObjectList<ConfigMap> | ApiError | 'hang')[],
    private readonly scripts: WatchStep[][] = [],
  ) {}

  async list<T extends KubeObject>(_resource: Resource, options: ListOptions = {}, signal?: AbortSignal): Promise<ObjectList<T>> {
    this.lists.push(options);
    const answer = this.pages.shift();
    if (answer === undefined) throw new Error(`unexpected list #${this.lists.length}`);
    if (answer === 'hang') {
      await untilAborted(signal!);
      this.aborted += 1;
      throw new ApiError('list aborted', 0);
    }
    if (answer instanceof ApiError) throw answer;
    // What a real client reads: the answer's JSON.
    options.onBytes?.(Buffer.byteLength(JSON.stringify(answer)), this.protobuf);
    return answer as unknown as ObjectList<T>;
  }

  async *watch<T extends KubeObject>(
    _resource: Resource,
    options: WatchOptions = {},
    signal?: AbortSignal,
  ): AsyncGenerator<RawWatchEvent<T>, void, undefined> {
    this.watches.push(options);
    this.open += 1;
    try {
      for (const step of this.scripts.shift() ?? []) {
        await Promise.resolve();
        if (step === 'close') return;
        if (step instanceof ApiError) throw step;
        yield step as unknown as RawWatchEvent<T>;
      }
      await untilAborted(signal!);
      this.aborted += 1;
    } finally {
      this.open -= 1;
    }
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
