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
 * count here; the rest of the request's footprint, its partial last block
 * and its output, is known only when it ends (`tailEntries`).
 */

/** Full-block entries of a prompt of `promptTokens` past the `keyedEntries` the index keys (never negative). */
export function pastWindowEntries(promptTokens: number, keyedEntries: number, entryTokens: number): number {
  if (!(promptTokens > 0) || !(entryTokens > 0)) return 0;
  return Math.max(0, Math.floor(promptTokens / entryTokens) - keyedEntries);
}

/**
 * What a finished request left in its engine's KV cache past its prompt's whole index entries, in
 * entries (fractional: the caller carries the remainder from request to request).
 *
 * vLLM V1 allocates a request's generated tokens from the same block pool as its prompt, a block at a
 * time as it decodes (kv_cache_manager.py allocate_slots), caches every full block up to the request's
 * token count, prompt and output alike (allocate_slots → cache_blocks, capped at request.num_tokens),
 * and frees them all when it ends (KVCacheManager.free, in reverse order: the output's blocks reach the
 * free queue first, so they are evicted before the prompt's). So a request with P prompt and O output tokens held ceil((P + O) / blockTokens) blocks,
 * of which the index already charged its whole entries (⌊P / entryTokens⌋, keyed or past the window):
 * the rest is what the engine reused for this request's answer and partial block that the index did not
 * count. The gateway learns O from usage.completion_tokens when the response ends.
 *
 * The index cannot key these blocks: the gateway does not keep the answer's tokens (it relays the
 * stream), and the engine's blocks cover the tokens it generated, not the next turn's rendering of the
 * answer through the chat template. They are charged as capacity only; the next turn keys its own copy
 * of the answer when it is routed, and cached_tokens corrects the rest.
 */
export function tailEntries(
  promptTokens: number,
  outputTokens: number | undefined,
  blockTokens: number,
  entryTokens: number,
): number {
  if (outputTokens === undefined || !(outputTokens >= 0) || !Number.isFinite(outputTokens)) return 0;
  if (!(promptTokens > 0) || !(blockTokens > 0) || !(entryTokens > 0)) return 0;
  const heldTokens = Math.ceil((promptTokens + outputTokens) / blockTokens) * blockTokens;
  const chargedTokens = Math.floor(promptTokens / entryTokens) * entryTokens;
  return Math.max(0, heldTokens - chargedTokens) / entryTokens;
}
