/**
 * The pooled-cache oracle: the hit rate a fleet could reach if its whole KV
 * capacity were one cache and every request went where its prefix is, with no
 * load limits. One LRU of `capacityBlocks` chained block keys, replayed in
 * arrival order; a request hits its longest cached prefix.
 *
 * The engine model's semantics, on one pooled engine: a request's blocks are
 * reusable by every request looked up after it, because vLLM caches blocks in
 * the step that schedules them and schedules waiting requests first come
 * first served (sim/model/scheduler.ts). So the second request of a burst
 * hits the first one's prefix even if it arrives before that prefill is
 * done, here as in the engines. What the oracle leaves out is only what
 * makes it a bound: load, queueing, and the KV that running requests pin.
 *
 * Like vLLM, at least the last prompt token is always computed
 * (max_cache_hit_length = num_tokens − 1 in vLLM v1's KV cache manager), so a
 * fully cached, block-aligned prompt still misses its last block.
 * A request's blocks are touched last-to-first so its first blocks are the
 * most recent: eviction takes a prefix's tail before its head, which keeps
 * chains matchable (vLLM frees a request's blocks in reverse order for the
 * same reason).
 */
import type { BlockKey } from "../src/routing/types";

export interface OracleRequest {
  readonly blocks: readonly BlockKey[];
  readonly promptTokens: number;
}

export interface OracleResult {
  readonly cachedTokens: number;
  readonly promptTokens: number;
  readonly hitRate: number;
}

export function oracleHitRate(
  requests: readonly OracleRequest[],
  capacityBlocks: number,
  blockTokens: number,
): OracleResult {
  if (!(capacityBlocks >= 0)) throw new RangeError(`capacityBlocks must be >= 0, got ${capacityBlocks}`);
  const lru = new Map<BlockKey, true>();
  let cached = 0;
  let prompt = 0;
  for (const r of requests) {
    prompt += r.promptTokens;
    const usable = Math.min(r.blocks.length, Math.floor((r.promptTokens - 1) / blockTokens));
    let hit = 0;
    while (hit < usable && lru.has(r.blocks[hit]!)) hit++;
    cached += hit * blockTokens;
    for (let i = r.blocks.length - 1; i >= 0; i--) {
      const k = r.blocks[i]!;
      lru.delete(k);
      lru.set(k, true);
    }
    while (lru.size > capacityBlocks) {
      const oldest = lru.keys().next().value as BlockKey;
      lru.delete(oldest);
    }
  }
  return { cachedTokens: cached, promptTokens: prompt, hitRate: prompt > 0 ? cached / prompt : 0 };
}
