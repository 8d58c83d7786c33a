/**
 * The part of a request's prompt that fills its engine's KV cache past the
 * blocks the affinity index keys, in index entries (one entry = blockTokens
 * × indexStride tokens).
 *
 * The index keys only the full blocks of the gateway's key window
 * (PREFIX_TOKENS). The engine caches every full block of the prompt: vLLM V1
 * allocates them from one pool (vllm/v1/core/kv_cache_manager.py
 * allocate_slots) and, when the request ends, returns them to the free queue
 * (block_pool.py), where they are reused least recently freed first with the
 * blocks we key. Blocks past the window match nothing we can route, but they
 * take their place in that LRU order: an index that leaves them out believes
 * its backend holds prefixes the engine already reused. On the Mooncake
 * trace (15k-token prompts on average) the gateway's 32k window keys 79% of
 * the blocks the engines allocate, 85% of the prompts' full blocks
 * (bench/results/policy-work.md, "Index capacity").
 *
 * The gateway knows this count when it routes: the prompt's tokens (exact
 * within the window, estimated past it) less what it keyed. Only full blocks
 * count, as only they are cached; the partial last block and the output's
 * blocks are left out on purpose (policy-work.md says why).
 */

/** Full-block entries of a prompt of `promptTokens` past the `keyedEntries` the index keys (never negative). */
export function pastWindowEntries(promptTokens: number, keyedEntries: number, entryTokens: number): number {
  if (!(promptTokens > 0) || !(entryTokens > 0)) return 0;
  return Math.max(0, Math.floor(promptTokens / entryTokens) - keyedEntries);
}
