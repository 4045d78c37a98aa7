// The one polling helper of the tests: waits for a probe to answer, and says what it last saw when it does not.
// A leaf (it imports nothing of ours), so the emulator's tests may use it as well as test/.

/** What a probe answers while the awaited state has not come: nothing yet, or not yet. */
type NotYet = undefined | false;

/**
 * Polls `probe` every `intervalMs` until it answers something other than `undefined` or `false`, and resolves that
 * answer. A probe that throws counts as "not yet" (the API may refuse while it starts). After `timeoutMs` it rejects
 * with `what`, the last answer or error seen, and `describe()` when given (a dump of the state, read only on failure).
 *
 * The deadline is measured on the wall clock because what is awaited (an API server, a process, a pod) runs on it;
 * a unit test of the operator's own timers drives its injected scheduler instead (test/support/virtual-time.ts).
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | NotYet> | T | NotYet,
  timeoutMs = 20_000,
  intervalMs = 25,
  describe?: () => Promise<string> | string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: { answer: unknown } | { error: unknown } | undefined;
  for (;;) {
    try {
      const answer = await probe();
      if (answer !== undefined && answer !== false) return answer;
      last = { answer };
    } catch (error) {
      last = { error };
    }
    if (Date.now() > deadline) {
      const state = describe ? await Promise.resolve(describe()).catch((error: unknown) => `(cannot describe: ${String(error)})`) : '';
      const cause = last !== undefined && 'error' in last ? last.error : undefined;
      throw new Error(`${what}: not within ${timeoutMs} ms; last seen: ${lastSeen(last)}${state ? `\n${state}` : ''}`, { cause });
    }
    await new Promise((done) => setTimeout(done, intervalMs));
  }
}

/** The last answer or error, short enough for a failure message. */
function lastSeen(last: { answer: unknown } | { error: unknown } | undefined): string {
  if (last === undefined) return 'no answer';
  if ('error' in last) return `an error (${last.error instanceof Error ? last.error.message : String(last.error)})`;
  const text = last.answer === undefined ? 'undefined' : JSON.stringify(last.answer);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
