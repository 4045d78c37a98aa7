// Virtual time for tests: an RxJS VirtualTimeScheduler that can be advanced by a given amount.
import { VirtualTimeScheduler } from 'rxjs';

/** A scheduler whose clock only moves when the test says so. */
export class VirtualClock extends VirtualTimeScheduler {
  /** Runs every action due within the next `ms`, and leaves the clock exactly `ms` later. */
  advance(ms: number): void {
    const target = this.now() + ms;
    // A no-op at the target makes flush() stop there with the clock on it.
    this.schedule(() => undefined, ms);
    this.maxFrames = target;
    this.flush();
  }
}

/** Lets pending promise callbacks run (a few macrotask-free turns of the microtask queue). */
export async function settle(turns = 10): Promise<void> {
  for (let turn = 0; turn < turns; turn += 1) await Promise.resolve();
}
