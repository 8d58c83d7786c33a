/**
 * What a router is given of each request. The simulator hands every policy
 * what its real implementation sees, no more and no less: a policy that
 * ships in the gateway gets what the Worker computes (keys of the first
 * PREFIX_TOKENS tokens); a peer gets its own inputs, declared beside it in
 * sim/baselines/index.ts with the source they come from.
 */
import type { RouteRequest } from "../src/routing/types";
import type { PreparedWorkload } from "./prepare";

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
   * max-tokens: the max_tokens the client sent, absent when it sent none
   * (client-max-tokens.ts), never the true length. none: no output length,
   * for routers whose code reads none.
   */
  readonly output: "max-tokens" | "none";
}

/** What our own policies see: they run in the gateway, which reads the request's max_tokens. */
export const GATEWAY_VIEW: RequestView = { keys: "gateway", output: "max-tokens" };

/** Request i of a prepared workload as a router with this view receives it. */
export function routeRequest(w: PreparedWorkload, i: number, view: RequestView): RouteRequest {
  const blocks = view.keys === "gateway" ? w.gatewayBlocks[i]! : w.promptBlocks[i]!;
  const promptTokens = w.requests[i]!.promptTokens;
  const maxTokens = view.output === "max-tokens" ? w.maxTokens[i] : undefined;
  const promptKey = view.keys === "gateway" ? w.promptKeys[i] : undefined;
  return {
    blocks,
    promptTokens,
    ...(maxTokens !== undefined ? { outputTokens: maxTokens } : {}),
    ...(promptKey !== undefined ? { promptKey } : {}),
  };
}
