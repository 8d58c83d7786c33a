/**
 * How likely a block at the OLDEST end of a backend's cache is to be reused:
 * the price of evicting it. A request that overflows a full cache evicts the
 * least recently used blocks, so what its placement costs later requests is
 * not the reuse of an average cached block but of those at the LRU tail — a
 * finished conversation's history, stale, costs nothing to evict; a tail
 * whose blocks keep being asked for again soon after they go costs about a
 * token of prefill per token evicted.
 *
 * Measured from the affinity index alone (no engine state): the index's set
 * remembers the keys it last evicted to make room (a ghost list of
 * `GHOST_SHARE` of its capacity, as ARC keeps one: Megiddo & Modha, FAST
 * 2003), and a request routed there whose missed blocks are among them
 * "returned" for blocks this backend let go (LruBlockSet.returned). Of the
 * keyed entries evicted,
 *
 *   p = returned / evicted
 *
 * is the share asked for again within the next GHOST_SHARE × capacity
 * evictions: the hit density just past the cache's size (Mattson et al.'s
 * stack distances, 1970), i.e. what one more slot at the tail would have
 * saved. It plays the part of Preble's weighting of the tree nodes a request
 * would evict by their recent hit counts (Srivatsa et al., "Preble: Efficient
 * Distributed Prompt Scheduling for LLM Serving", 2024, E2 scheduler), at the
 * resolution a gateway has. Counted on every backend whatever the request's
 * destination (router.ts noteReturns): a conversation whose history backend i
 * evicted is usually placed elsewhere next, since i no longer matches it.
 *
 * Counts are halved whenever their sum passes the set's capacity, so p follows
 * about one cache's worth of recent churn. With nothing evicted yet, p = 0.
 * Pure: no clock, no I/O.
 */

/**
 * The ghost list's length, as a share of the set's capacity: how soon after its eviction a block must be
 * asked for again to count as reused. Short, because a block kept at the tail instead is the next to go:
 * its value is being asked for again before the next few evictions, not eventually. An eighth of the
 * cache: the share of the index's memory the ghosts may add.
 */
export const GHOST_SHARE = 0.125;

/** Ghost entries for a set of `capacity` entries (at least one). */
export function ghostCapacity(capacity: number): number {
  return Math.max(1, Math.ceil(capacity * GHOST_SHARE));
}

export class TailReuse {
  private returns = 0;
  private evictions = 0;
  private lastEvictions = 0;

  /** `window`: entries (returned + evicted) past which the counts are halved; the set's capacity. */
  constructor(private window: number) {
    TailReuse.check(window);
  }

  private static check(window: number): void {
    if (!(window >= 1) || !Number.isFinite(window))
      throw new RangeError(`TailReuse window must be a finite number >= 1, got ${window}`);
  }

  /** The set's capacity changed: the window follows it. */
  setWindow(window: number): void {
    TailReuse.check(window);
    this.window = window;
  }

  /** The set has evicted `total` keyed entries to make room since it was made (LruBlockSet.roomEvictions). */
  observeEvictions(total: number): void {
    const delta = total - this.lastEvictions;
    this.lastEvictions = total;
    if (delta > 0) this.add(0, delta);
  }

  /** `n` blocks a routed request missed were among those recently evicted (LruBlockSet.returned). */
  observeReturns(n: number): void {
    if (n > 0) this.add(n, 0);
  }

  /** p: the share of evicted entries asked for again soon after (at most 1). */
  get share(): number {
    if (this.evictions <= 0) return 0;
    return Math.min(1, this.returns / this.evictions);
  }

  private add(returns: number, evictions: number): void {
    this.returns += returns;
    this.evictions += evictions;
    while (this.returns + this.evictions > this.window) {
      this.returns /= 2;
      this.evictions /= 2;
    }
  }
}
