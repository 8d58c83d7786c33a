/**
 * What of a backend's `usage` the gateway believes, given the request it answered. readUsage (stream-tap.ts)
 * already drops what cannot be a count at all (negative, fractional, past 2^30); this drops what cannot be
 * this request's count, for it reaches every client of the pool:
 *
 * - `completion_tokens` past what the request could generate: each of its sequences (n, or best_of when
 *   larger, per prompt of a batch) stops at its max_tokens and cannot outgrow the engine's KV cache
 *   (kvCacheTokens, the backend's own figure in BACKENDS). Believed, one such count was charged as the
 *   answer's KV when the request settled (Router.settle, tailEntries) and evicted every entry of the
 *   backend's affinity index: a 64-token request reported at 262,144 left 18 of 40 warmed families their hit
 *   (the index-wipe of a prompt count, through the answer's). It also became the pool's expected answer
 *   (cost-model.ts observeOutput: the first report is taken whole), so every request without max_tokens
 *   looked as if it needed more KV than any engine has.
 * - `prompt_tokens` past what the engine can hold (kvCacheTokens per prompt: an engine refuses a longer one),
 *   and its cached part with it.
 *
 * A count dropped is as if the engine had reported none: nothing is learned from it, the answer is relayed as
 * sent (the gateway does not rewrite answers), and the request's log line still carries what the engine said.
 */
import type { Usage } from "./stream-tap";

export interface UsageLimits {
  /** The request's max_tokens (or max_completion_tokens), absent when it sent none. */
  readonly maxTokens?: number;
  /** Sequences generated per prompt: max(n, best_of), 1 by default. */
  readonly sequences: number;
  /** Prompts in the request (a /v1/completions batch), 1 by default. */
  readonly prompts: number;
  /** The answering backend's KV cache, tokens (BACKENDS kvCacheTokens). */
  readonly kvCacheTokens: number;
}

export function believedUsage(usage: Usage | undefined, limits: UsageLimits): Usage | undefined {
  if (usage === undefined) return undefined;
  const { maxTokens, sequences, prompts, kvCacheTokens } = limits;
  const perSequence = Math.min(maxTokens ?? Number.POSITIVE_INFINITY, kvCacheTokens);
  const outputLimit = perSequence * Math.max(1, sequences) * Math.max(1, prompts);
  const promptLimit = kvCacheTokens * Math.max(1, prompts);
  const out: { promptTokens?: number; completionTokens?: number; cachedTokens?: number } = {};
  if (usage.promptTokens !== undefined && usage.promptTokens <= promptLimit) {
    out.promptTokens = usage.promptTokens;
    if (usage.cachedTokens !== undefined) out.cachedTokens = usage.cachedTokens;
  }
  if (usage.completionTokens !== undefined && usage.completionTokens <= outputLimit)
    out.completionTokens = usage.completionTokens;
  return out;
}
