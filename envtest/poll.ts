// Waits for a component the harness started to answer, ending at once when one of the processes it runs on has stopped.

/** How a {@link pollReady} wait polls. */
export interface PollOptions {
  /** How often the probe is asked, in milliseconds. */
  readonly intervalMs: number;
  /** The clock of the deadline. @default Date.now */
  readonly now?: () => number;
}

/**
 * Asks `probe` every `intervalMs` until it answers true; a probe that throws counts as not yet (a component refuses
 * while it starts), and its last error is said when the wait times out. Before each try, `failure` says why a process
 * the component runs on has stopped, if one has: the wait ends with that at once rather than at its deadline.
 */
export async function pollReady(
  what: string,
  timeoutMs: number,
  probe: () => Promise<boolean>,
  failure: () => string | undefined,
  { intervalMs, now = Date.now }: PollOptions,
): Promise<void> {
  const deadline = now() + timeoutMs;
  let lastError = '';
  for (;;) {
    const failed = failure();
    if (failed) throw new Error(`${what}: ${failed}`);
    try {
      if (await probe()) return;
      lastError = '';
    } catch (error) {
      lastError = (error as Error).message;
    }
    if (now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs} ms${lastError ? ` (last error: ${lastError})` : ''}`);
    await new Promise((done) => setTimeout(done, intervalMs));
  }
}
