/**
 * What placing a request costs the cache it lands in: the prefill that later
 * requests are expected to repeat because this one's new blocks evicted
 * what they would have reused.
 *
 * A request that misses `uncached` tokens on backend i writes about that
 * many new tokens into i's KV cache. If i's cache (as the affinity index
 * believes it: capacity less what it holds and sets aside) has that much
 * free, nothing is evicted; otherwise the overflow evicts the least recently
 * used blocks. An engine with free KV evicts nothing, and a backend nobody
 * routes to wastes its whole cache: the term makes it the cheaper home for
 * a request that misses about as much everywhere.
 *
 * Pricing the evicted tokens. Preble (Srivatsa et al., "Preble: Efficient
 * Distributed Prompt Scheduling for LLM Serving", 2024) charges a GPU, in its
 * E2 scheduler, the prefill time of the tree nodes a request would evict
 * weighted by how often they were hit in a recent window; SGLang's
 * cache_aware router (sgl-model-gateway) sends a request whose best match is
 * poor to the worker with the smallest tree, i.e. the most free cache;
 * llm-d's kv-cache-utilization scorer and Dynamo's early cost function
 * (2·overlap − gpu_cache_usage − waiting) prefer low KV use. A gateway has no
 * per-block hit counts for what the engine evicts, so the reuse of an
 * evicted token is estimated from what it does know, its own ledger: the
 * share of routed prompt tokens it expected cached on the chosen backend
 * (an EWMA). A workload with no reuse prices eviction at zero (the term
 * then changes nothing), one whose prompts are mostly cached prices it near
 * a token of prefill.
 *
 * Pure: no clock, no I/O. Callers pass the index's free capacity in tokens.
 */

/** EWMA weight of one routed request's cached share in the reuse estimate. */
export const REUSE_EWMA_ALPHA = 0.02;

export class EvictionPrice {
  private reuseShare = 0;
  private seen = false;

  constructor(private readonly alpha = REUSE_EWMA_ALPHA) {
    if (!(alpha > 0 && alpha <= 1)) throw new RangeError(`alpha must be in (0, 1], got ${alpha}`);
  }

  /** Estimated chance that a cached token is reused: the EWMA of routed requests' cached share. */
  get reuse(): number {
    return this.reuseShare;
  }

  /** A request was routed expecting `cachedTokens` of its `promptTokens` cached where it went. */
  observe(cachedTokens: number, promptTokens: number): void {
    if (!(promptTokens > 0)) return;
    const share = Math.min(1, Math.max(0, cachedTokens / promptTokens));
    if (!this.seen) {
      this.reuseShare = share;
      this.seen = true;
    } else this.reuseShare += this.alpha * (share - this.reuseShare);
  }

  /**
   * Prefill tokens that later requests are expected to repeat if `newTokens` are written into a cache
   * with `freeTokens` free: the overflow, weighted by the reuse estimate. 0 when it fits.
   */
  evictedWorth(newTokens: number, freeTokens: number): number {
    const evicted = newTokens - Math.max(0, freeTokens);
    return evicted > 0 ? evicted * this.reuseShare : 0;
  }
}
