/**
 * What a router is given of each request. The simulator hands every policy
 * what its real implementation sees, no more and no less: a policy that
 * ships in the gateway gets what the Worker computes (keys of the first
 * PREFIX_TOKENS tokens, and a prompt-token count that is exact only that
 * far); a peer gets its own inputs, declared beside it in
 * sim/baselines/index.ts with the source they come from.
 */
import { runExcessTokens } from "../src/prefix/run-excess";
import { encodeO200k } from "../src/prefix/tokenizer";
import type { RouteRequest } from "../src/routing/types";
import type { PreparedWorkload } from "./prepare";
import { Rng } from "./workloads/prng";
import type { WorkloadRequest } from "./workloads/types";

export interface RequestView {
  /**
   * gateway: chained keys of the first `prefixTokens` tokens, as the Worker
   * computes them (it hashes no further), and a prompt with no full block
   * there the key of its whole text (RouteRequest.promptKey). whole-prompt: the keys of every
   * full block of the prompt, what a router that reads or tokenizes the
   * whole request (or is told of every cached block) works from.
   */
  readonly keys: "gateway" | "whole-prompt";
  /**
   * gateway: the Worker's count, exact for the first `prefixTokens` tokens
   * and ceil(chars / 4) per text past them (gatewayPromptTokens, below).
   * exact: the prompt's true token count, for routers that tokenize the
   * whole prompt or read its whole text.
   */
  readonly promptTokens: "gateway" | "exact";
  /**
   * max-tokens: the max_tokens the client sent, absent when it sent none
   * (client-max-tokens.ts), never the true length. none: no output length,
   * for routers whose code reads none.
   */
  readonly output: "max-tokens" | "none";
}

/** What our own policies see: they run in the gateway, which reads the request's max_tokens. */
export const GATEWAY_VIEW: RequestView = { keys: "gateway", promptTokens: "gateway", output: "max-tokens" };

/** Request i of a prepared workload as a router with this view receives it. */
export function routeRequest(w: PreparedWorkload, i: number, view: RequestView): RouteRequest {
  const blocks = view.keys === "gateway" ? w.gatewayBlocks[i]! : w.promptBlocks[i]!;
  const promptTokens =
    view.promptTokens === "gateway" ? w.gatewayPromptTokens[i]! : w.requests[i]!.promptTokens;
  const maxTokens = view.output === "max-tokens" ? w.maxTokens[i] : undefined;
  const promptKey = view.keys === "gateway" ? w.promptKeys[i] : undefined;
  const unconfirmed = view.promptTokens === "gateway" ? w.gatewayUnconfirmedTokens?.[i] : undefined;
  return {
    blocks,
    promptTokens,
    ...(unconfirmed !== undefined ? { unconfirmedTokens: unconfirmed } : {}),
    ...(maxTokens !== undefined ? { outputTokens: maxTokens } : {}),
    ...(promptKey !== undefined ? { promptKey } : {}),
  };
}

/**
 * The Worker's count of text it did not tokenize, ceil(chars / 4), over the
 * true o200k count: quantiles 0, 5, ..., 100% over windows of 4,096 tokens of
 * real English developer text (package READMEs, TypeScript's declarations
 * and source, equal weight), measured by `npm run bench:micro:token-estimate`
 * (bench/results/token-estimate.md, which also gives other languages: CJK
 * text counts ~0.4 of its tokens there). Below 1 the Worker undercounts.
 */
export const TAIL_COUNT_FACTORS: readonly number[] = [
  0.396, 0.696, 0.775, 0.817, 0.857, 0.906, 0.934, 0.95, 0.962, 0.978, 0.996, 1.007, 1.018, 1.046, 1.057,
  1.086, 1.1, 1.107, 1.126, 1.141, 1.202,
];

/** The factor at uniform u ∈ [0, 1), interpolated between the quantiles. */
export function tailCountFactor(u: number): number {
  const x = u * (TAIL_COUNT_FACTORS.length - 1);
  const lo = Math.floor(x);
  const a = TAIL_COUNT_FACTORS[lo]!;
  const b = TAIL_COUNT_FACTORS[Math.min(lo + 1, TAIL_COUNT_FACTORS.length - 1)]!;
  return a + (b - a) * (x - lo);
}

/**
 * Each request's prompt-token count as the Worker computes it
 * (src/prefix/request-keys.ts): exact up to `prefixTokens`, and past it
 * ceil(chars / 4) per text, which the router's cost model and the affinity
 * index's skew check read. By source:
 * - a count the trace recorded as the gateway's (its own log lines): as recorded;
 * - a prompt of at most `prefixTokens` tokens: exact;
 * - a prompt with its text (OpenAI logs): the Worker's rule on that text
 *   (tokens up to the window, the remaining characters / 4);
 * - otherwise (generators, Mooncake: tokens without text): the window's
 *   tokens plus ceil(tail × factor), the factor drawn from
 *   TAIL_COUNT_FACTORS by a hash of the seed and the prompt's first block
 *   past the window, so the same text past the window gets the same factor
 *   (a conversation's later turns keep their earlier turns' error).
 */
export function gatewayPromptTokens(
  requests: readonly WorkloadRequest[],
  promptBlocks: readonly (readonly number[])[],
  blockTokens: number,
  prefixTokens: number,
  seed: number,
): number[] {
  const firstPast = Math.floor(prefixTokens / blockTokens);
  return requests.map((r, i) => {
    if (r.gatewayPromptTokens !== undefined) return r.gatewayPromptTokens;
    if (r.promptTokens <= prefixTokens) return r.promptTokens;
    if (r.prompt.kind === "tokens" && r.prompt.text !== undefined) {
      const text = r.prompt.text;
      return prefixTokens + Math.ceil((text.length - encodeO200k(text, prefixTokens).charsConsumed) / 4);
    }
    const key = promptBlocks[i]![firstPast] ?? `request-${i}`;
    const factor = tailCountFactor(new Rng(`tail-count/${seed}/${key}`).next());
    return prefixTokens + Math.max(1, Math.ceil((r.promptTokens - prefixTokens) * factor));
  });
}

/**
 * Of each gateway count, the part the Worker's estimate cannot vouch for (src/prefix/run-excess.ts: runs of
 * one character past the window), for the prompts gatewayPromptTokens counts by the Worker's rule on their
 * text; undefined for the rest (a count recorded as the gateway's, a prompt within the window, tokens
 * without text: the Worker would find no such runs to count, or the trace cannot say).
 */
export function gatewayUnconfirmedTokens(
  requests: readonly WorkloadRequest[],
  prefixTokens: number,
): (number | undefined)[] {
  return requests.map((r) => {
    if (r.gatewayPromptTokens !== undefined || r.promptTokens <= prefixTokens) return undefined;
    if (r.prompt.kind !== "tokens" || r.prompt.text === undefined) return undefined;
    const text = r.prompt.text;
    const n = runExcessTokens(text, encodeO200k(text, prefixTokens).charsConsumed);
    return n > 0 ? n : undefined;
  });
}

/** How far the gateway's counts were from the truth on one run, for reports. */
export interface CountStats {
  /** Share of requests longer than the window (their count is estimated past it). */
  readonly pastWindowShare: number;
  /** Over those: Σ the gateway's count ÷ Σ the true count (1 = exact). */
  readonly countOverTrue: number;
}

export function countStats(
  requests: readonly WorkloadRequest[],
  gatewayCounts: readonly number[],
  prefixTokens: number,
): CountStats {
  let past = 0;
  let counted = 0;
  let truth = 0;
  requests.forEach((r, i) => {
    if (r.promptTokens <= prefixTokens) return;
    past++;
    counted += gatewayCounts[i]!;
    truth += r.promptTokens;
  });
  return {
    pastWindowShare: requests.length > 0 ? past / requests.length : 0,
    countOverTrue: truth > 0 ? counted / truth : Number.NaN,
  };
}
