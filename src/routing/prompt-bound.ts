/**
 * The routing view of a request's prompt, bounded by what an engine of the
 * pool can hold. The Router takes every request through it on the way in
 * (route, observe), so the policy's ledger, its cost, the work bound and the
 * affinity index all read one bounded count; the block keys are not touched.
 *
 * Why: past the key window the Worker only estimates a prompt (ceil(chars /
 * 4) a text, IMAGE_TOKENS_ESTIMATE an image however small: src/prefix). One
 * chat request of 20,000 one-letter `image_url` parts is estimated at 15.3 M
 * tokens; held open on an engine that accepts it, it made its backend look
 * full to every other client for as long as it ran (bench/results/red-team.md,
 * eighth pass, item 5). No engine holds more than its KV: a count past it is
 * never a real load.
 *
 * The rule, with L the largest KV capacity (kvCacheTokens) of the fleet's
 * backends and k the request's sequences (a /v1/completions batch's prompts;
 * 1 otherwise):
 * - promptTokens / k ≤ L: one sequence fits some engine; the view is
 *   min(promptTokens, L). A batch larger than L in sum is real work (the
 *   engine runs its prompts in turn) but it never holds more than the
 *   engine's KV at once, so it is charged as filling it.
 * - promptTokens / k > L: no engine of the pool can hold one of its
 *   sequences. Either the engine refuses it at once (vLLM: a 400 past
 *   max_model_len, which is at most its KV), so it holds nothing, or it
 *   accepts it and the estimate was wrong by more than that. Either way the
 *   estimate says nothing about its cost, and the view is the part the
 *   Worker counted token by token: its keyed blocks, blocks × blockTokens
 *   (never above L). The request is still routed and forwarded as any
 *   other: a gateway never refuses on an estimate; the engine decides.
 * A request with no blocks keeps its placement: the ring places it by its
 * prompt's count when it has no promptKey (placement.ts), so that count
 * becomes its promptKey.
 */
import type { RouteRequest } from "./types";

/** The largest KV capacity (tokens) of `backends`; 0 for none. */
export function largestKv(backends: readonly { readonly kvCacheTokens: number }[]): number {
  let largest = 0;
  for (const b of backends) if (b.kvCacheTokens > largest) largest = b.kvCacheTokens;
  return largest;
}

/**
 * `req` as the routing core counts it, in a fleet whose largest KV capacity is `largest` tokens (see the
 * header). `req` itself when its count is within the bound (the common case: nothing is copied).
 */
export function boundedPrompt(req: RouteRequest, largest: number, blockTokens: number): RouteRequest {
  if (!(largest > 0) || req.promptTokens <= largest) return req;
  const sequences = req.prompts !== undefined && req.prompts > 1 ? req.prompts : 1;
  const promptTokens =
    req.promptTokens / sequences <= largest
      ? largest
      : Math.min(req.promptTokens, req.blocks.length * blockTokens, largest);
  const keepPlacement = req.blocks.length === 0 && req.promptKey === undefined;
  return { ...req, promptTokens, ...(keepPlacement ? { promptKey: req.promptTokens } : {}) };
}
