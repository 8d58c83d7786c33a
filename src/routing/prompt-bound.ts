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
 * 1 otherwise), and E its count per sequence, promptTokens / k:
 * - E ≤ ESTIMATE_SLACK × L: one sequence fits some engine, or would but for
 *   the estimate's own error (ceil(chars / 4) counts up to ~1.2× the tokens
 *   of English text and code: bench/results/token-estimate.md; the
 *   simulator's Mooncake counts reach 1.06× the MoE preset's KV, though no
 *   prompt of the trace passes it). The view is min(promptTokens, L): no
 *   engine holds more than its KV at once. A batch larger than L in sum is
 *   real work, its prompts run in turn, and it is charged as filling an
 *   engine while it runs.
 * - E > ESTIMATE_SLACK × L: no engine of the pool can hold one of its
 *   sequences, whatever the estimate's error on text. Either the engine
 *   refuses it at once (vLLM: a 400 past max_model_len, which is at most its
 *   KV), so it holds nothing, or it accepts it and the estimate was wrong by
 *   more than that (tiny images counted 765 each; runs of spaces, ~128
 *   characters a token, counted 4 a token). Either way the estimate says
 *   nothing about its cost, and the view is the part the Worker counted token
 *   by token: its keyed blocks, blocks × blockTokens (never above L). The
 *   request is still routed and forwarded as any other: a gateway never
 *   refuses on an estimate; the engine decides.
 * A request with no blocks keeps its placement: the ring places it by its
 * prompt's count when it has no promptKey (placement.ts), so that count
 * becomes its promptKey.
 *
 * The output hint (max_tokens, validated up to 2^20 by the Worker) is bounded
 * the same way, after the prompt: prompt + output never above L. An engine
 * holds a sequence's prompt and answer together (vLLM refuses prompt +
 * max_tokens past max_model_len, which is at most its KV), so a hint past
 * what is left of L after the prompt is never memory any engine holds; as
 * given, a max_tokens of 2^20 on a 262k pool made its backend look ~4× fuller
 * than an engine can be (a ~5 s kv term) for everyone else. The hint is only
 * a load hint: the request is forwarded with the client's max_tokens as sent,
 * and the engine decides.
 */
import type { RoutedCount, RouteRequest } from "./types";

/**
 * How far past the largest KV a sequence's count may be and still be taken for a prompt that fits, its
 * excess the estimate's error (see the header): twice, well past the ~1.2× ceil(chars / 4) reaches on text.
 */
export const ESTIMATE_SLACK = 2;

/** The largest KV capacity (tokens) of `backends`; 0 for none. */
export function largestKv(backends: readonly { readonly kvCacheTokens: number }[]): number {
  let largest = 0;
  for (const b of backends) if (b.kvCacheTokens > largest) largest = b.kvCacheTokens;
  return largest;
}

/**
 * `req` as the routing core counts it, in a fleet whose largest KV capacity is `largest` tokens (see the
 * header): its prompt's count, then its output hint. `req` itself when both are within the bound (the
 * common case: nothing is copied).
 */
export function boundedPrompt(req: RouteRequest, largest: number, blockTokens: number): RouteRequest {
  if (!(largest > 0)) return req;
  const prompted = promptCut(req, largest) ? boundedCount(req, largest, blockTokens) : req;
  const output = prompted.outputTokens;
  if (output === undefined || prompted.promptTokens + output <= largest) return prompted;
  return { ...prompted, outputTokens: Math.max(0, largest - prompted.promptTokens) };
}

/** Whether the bound cuts `req`'s prompt count: past `largest`, the fleet's largest KV (none without one). */
export function promptCut(req: RouteRequest, largest: number): boolean {
  return largest > 0 && req.promptTokens > largest;
}

/** The prompt's count alone, past `largest` (the header's two cases). */
function boundedCount(req: RouteRequest, largest: number, blockTokens: number): RouteRequest {
  const sequences = req.prompts !== undefined && req.prompts > 1 ? req.prompts : 1;
  const promptTokens =
    req.promptTokens / sequences <= ESTIMATE_SLACK * largest
      ? largest
      : Math.min(req.promptTokens, req.blocks.length * blockTokens, largest);
  const keepPlacement = req.blocks.length === 0 && req.promptKey === undefined;
  return { ...req, promptTokens, ...(keepPlacement ? { promptKey: req.promptTokens } : {}) };
}

/** What a decision says of the count routing used (RouteDecision.routed): the bounded request's figures. */
export function routedCount(req: RouteRequest): RoutedCount {
  return {
    promptTokens: req.promptTokens,
    ...(req.outputTokens !== undefined ? { outputTokens: req.outputTokens } : {}),
  };
}
