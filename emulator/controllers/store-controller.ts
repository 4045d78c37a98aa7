// What the emulator's controllers share: once started, each sees every event of the store and queues its work.
import type { Api } from '../api.js';
import type { Collection, StoreEvent } from '../store.js';
import type { ControllerQueue } from './queue.js';

/** A controller of the emulator, fed by the store's listeners (the watches' own listeners are called first). */
export abstract class StoreController {
  constructor(
    protected readonly api: Api,
    protected readonly queue: ControllerQueue,
  ) {}

  /** From now on, every store event reaches {@link observe}. */
  start(): void {
    this.api.store.listeners.add((collection, event) => this.observe(collection, event));
  }

  /** One store event, called synchronously inside the write: work that writes goes on the queue. */
  protected abstract observe(collection: Collection, event: StoreEvent): void;
}
