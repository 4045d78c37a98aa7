// Random timers that stop together: the soak's scraper, fault schedule and stream of user changes each run on one.
import type { SeededRandom } from '../support/random.js';

/** Random timers that stop together. */
export class Ticker {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private readonly running = new Set<Promise<unknown>>();

  /** `onError` hears what an action threw (the soak counts it); the timer goes on. */
  constructor(private readonly onError: (error: unknown) => void) {}

  /** Runs `action` again and again, waiting a random delay in [minMs, maxMs) before each. */
  every(random: SeededRandom, minMs: number, maxMs: number, action: () => unknown): void {
    const schedule = (): void => {
      if (this.stopped) return;
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          const run = Promise.resolve()
            .then(action)
            .catch(this.onError)
            .finally(() => {
              this.running.delete(run);
              schedule();
            });
          this.running.add(run);
        },
        minMs + random.next() * (maxMs - minMs),
      );
      this.timers.add(timer);
    };
    schedule();
  }

  /** Stops scheduling and waits for the actions in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all(this.running);
  }
}
