/**
 * A promise raced against a timer: the one way the Worker bounds a wait
 * (a body chunk, a backend's headers or next event, a RouterDO or limiter
 * call). The timer is cleared however the race ends, so a settled wait
 * leaves nothing scheduled behind it. The loser is not cancelled here: what
 * stopping it means (abort a fetch, cancel a reader, hand back a lease) is
 * the caller's to say, in `onTimeout` or after the rejection.
 */

/**
 * `p`, or `onTimeout()` once `ms` pass first: a value it returns resolves
 * the result, an error it throws rejects it. A settling of `p` before then,
 * fulfilment or rejection, is passed on as is.
 */
export async function deadline<T, U = never>(
  p: PromiseLike<T>,
  ms: number,
  onTimeout: () => U,
): Promise<T | U> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<U>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (err) {
        reject(err);
      }
    }, ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
