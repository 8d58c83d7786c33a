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
   * computes them (it hashes no further). whole-prompt: the keys of every
   * full block of the prompt, what a router that reads or tokenizes the
   * whole request (or is told of every cached block) works from.
   */
  readonly keys: "gateway" | "whole-prompt";
}

/** What our own policies see: they run in the gateway. */
export const GATEWAY_VIEW: RequestView = { keys: "gateway" };

/** Request i of a prepared workload as a router with this view receives it. */
export function routeRequest(w: PreparedWorkload, i: number, view: RequestView): RouteRequest {
  const r = w.requests[i]!;
  return {
    blocks: view.keys === "gateway" ? w.gatewayBlocks[i]! : w.promptBlocks[i]!,
    promptTokens: r.promptTokens,
    outputTokens: r.outputTokens,
  };
}
