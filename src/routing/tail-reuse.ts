/**
 * How likely a block at the OLDEST end of a backend's cache is to be reused:
 * the price of evicting it. A request that overflows a full cache evicts the
 * least recently used blocks, so what its placement costs later requests is
 * not the reuse of an average cached block but of those at the LRU tail — a
 * finished conversation's history, stale, costs nothing to evict; a tail that
 * keeps being hit just before it would go costs about a token of prefill per
 * token evicted.
 *
 * Measured from the affinity index alone (no engine state): every block a
 * routed request matched carries the stamp it had before (affinity-index.ts
 * `previousStamps`), and a stamp in the oldest `TAIL_SHARE` of the stamps
 * the set held at that moment is a hit at the tail; every entry the set
 * evicts to make room has passed through the tail unhit. Of the entries that
 * reach the tail, the share reused before they go is
 *
 *   p = tail hits / (tail hits + evictions)
 *
 * the Mattson stack-distance density near the cache's size (Mattson et al.,
 * "Evaluation techniques for storage hierarchies", 1970), read from where it
 * is cheapest. It plays the part of Preble's weighting of the tree nodes a
 * request would evict by their recent hit counts (Srivatsa et al., "Preble:
 * Efficient Distributed Prompt Scheduling for LLM Serving", 2024, E2
 * scheduler), at the resolution a gateway has: the set's recency, not
 * per-block counters on the engine.
 *
 * Counts are halved whenever their sum passes the set's capacity, so p follows
 * about one cache's worth of recent churn. With nothing evicted and no tail
 * hit yet, p = 0. Pure: no clock, no I/O.
 */

/**
 * The oldest end of a set: the share of its stamp range, from the LRU tail, whose hits count as tail
 * hits. An eighth: wide enough to see hits on a cache of a few thousand entries, narrow enough that a
 * hit there means a block close to eviction (stamps are not spread evenly over entries, so this is an
 * approximation of the oldest eighth of the entries).
 */
export const TAIL_SHARE = 0.125;

export class TailReuse {
  private hits = 0;
  private evictions = 0;
  private lastEvictions = 0;

  /** `window`: entries (tail hits + evictions) past which the counts are halved; the set's capacity. */
  constructor(private window: number) {
    if (!(window >= 1) || !Number.isFinite(window))
      throw new RangeError(`TailReuse window must be a finite number >= 1, got ${window}`);
  }

  /** The set's capacity changed: the window follows it. */
  setWindow(window: number): void {
    if (!(window >= 1) || !Number.isFinite(window))
      throw new RangeError(`TailReuse window must be a finite number >= 1, got ${window}`);
    this.window = window;
  }

  /** The set has evicted `total` entries to make room since it was made (LruBlockSet.roomEvictions). */
  observeEvictions(total: number): void {
    const delta = total - this.lastEvictions;
    this.lastEvictions = total;
    if (delta > 0) this.add(0, delta);
  }

  /**
   * A request matched `count` entries whose stamps before it were `previous[0..count)` (-1: absent), in a
   * set whose stamps spanned [oldest, next) just before: counts those in the oldest TAIL_SHARE.
   */
  observeHits(previous: Float64Array, count: number, oldest: number, next: number): void {
    if (count <= 0 || next <= oldest) return;
    const edge = oldest + TAIL_SHARE * (next - oldest);
    let n = 0;
    for (let j = 0; j < count; j++) {
      const s = previous[j]!;
      if (s >= 0 && s < edge) n++;
    }
    if (n > 0) this.add(n, 0);
  }

  /** p: the share of entries reaching the oldest end that are reused before they are evicted. */
  get share(): number {
    const total = this.hits + this.evictions;
    return total > 0 ? this.hits / total : 0;
  }

  private add(hits: number, evictions: number): void {
    this.hits += hits;
    this.evictions += evictions;
    while (this.hits + this.evictions > this.window) {
      this.hits /= 2;
      this.evictions /= 2;
    }
  }
}
