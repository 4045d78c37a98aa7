// Runs an async function over many items with a bounded number in flight (bulk creates and deletes in load tests).

/** Calls `each` for every item, at most `limit` at a time; rejects with the first failure once all have settled. */
export async function forEachConcurrently<T>(items: Iterable<T>, limit: number, each: (item: T) => Promise<unknown>): Promise<void> {
  const iterator = items[Symbol.iterator]();
  const failures: unknown[] = [];
  const lane = async (): Promise<void> => {
    for (let next = iterator.next(); !next.done; next = iterator.next()) {
      try {
        await each(next.value);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
  if (failures.length > 0)
    throw new AggregateError(
      failures,
      `${failures.length} of the operations failed: ${String((failures[0] as Error).message ?? failures[0])}`,
    );
}
