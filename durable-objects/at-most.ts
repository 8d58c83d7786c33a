/**
 * Runs `task` on every item, at most `limit` at a time, and settles when all have: the RouterDO's alarm rounds
 * (the engine scrape, the backend check) each reach every backend this way, bounded by the connections an
 * invocation keeps open at once. `task` must not throw (each round's tasks record their own failures).
 */
export async function eachAtMost<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  const queue = [...items];
  const worker = async (): Promise<void> => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await task(item);
  };
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
}
