/**
 * What the clairvoyant reference (sim/clairvoyant.ts) is allowed to know, cut
 * down a piece at a time towards what a gateway could know (issue #12: which
 * knowledge carries its lead?). Simulator only, never a policy.
 *
 * - `exact`: every engine's exact state at each arrival, every request's true
 *   output length (the reference as first built).
 * - `max-tokens`: output lengths are what the client sent as max_tokens
 *   (client-max-tokens.ts, the default model bench:sim gives prefix_aware as
 *   its hint), for the candidate and for every request the copied engine
 *   holds (EngineModel.reviseOutputs re-derives reservations, finish steps and
 *   the run in progress from them). No max_tokens: vLLM lets the answer run to
 *   the end of the context, max_tokens = max_model_len − prompt, with
 *   max_model_len the engine preset's (EngineConfig.maxModelLen); then clipped so
 *   prompt + output fits the engine's KV cache (a request that does not can
 *   never be admitted: fits()). Which requests are still running is known (a
 *   gateway sees each stream end).
 * - `lagged`: engine state as of the last scrape tick (every `lagMs`, from the
 *   first arrival, as the gateway's /metrics scrape), plus the reference's own
 *   placements and completions since: a believed engine per backend, reset to
 *   a copy of the real one at each tick. Generous: a real scrape gives counts,
 *   not the queue and KV contents.
 * - `max-tokens+lagged`: both; the believed engines hold max_tokens beliefs.
 * - `learned`, `learned+lagged`: as `max-tokens` (and lagged), but the belief is the mean output of the
 *   requests completed so far (a gateway reads usage.completion_tokens at each response's end), within
 *   the request's max_tokens. "So far" includes the gateway's history: on a scoring run, the tuning
 *   set's data of the same workload (seed 1, or the trace's first half) counts as served before, so
 *   the estimate is warm from the first request, as a gateway's would be in steady state. Not asked by
 *   issue #12's brief: what a gateway could estimate rather than what it is told.
 */
import { contextOverflow, kvCapacityTokens } from "./model/engine-config";
import type { EngineConfig } from "./model/types";
import type { PreparedWorkload } from "./prepare";

export const KNOWS = [
  "exact",
  "max-tokens",
  "lagged",
  "max-tokens+lagged",
  "learned",
  "learned+lagged",
] as const;
export type Knows = (typeof KNOWS)[number];

/** The scrape interval of `lagged`: the one chosen on the tuning set (bench/sim-all.sh SIGNALS_SCRAPE_MS). */
export const DEFAULT_LAG_MS = 1000;

/** The reference's knowledge: output lengths it believes (absent: the true ones), and its lag (absent: none). */
export interface Knowledge {
  /** Per workload request, the output length it believes; undefined: the true lengths. */
  readonly outputs?: readonly number[];
  /** Engine state as of scrape ticks this many ms apart, plus its own placements since. */
  readonly lagMs?: number;
  /**
   * With `outputs` (max_tokens): believe the mean output completed so far, within them, counting the
   * outputs of earlier traffic (`priorSum` tokens over `priorCount` requests) as completed before the run.
   */
  readonly learned?: { readonly priorSum: number; readonly priorCount: number };
}

/** Suffix of the reference's report name for a knowledge ("" for exact: today's names). */
export function knowsTag(knows: Knows): string {
  return knows === "exact" ? "" : `_${knows.replace("max-tokens", "maxtok").replace("+", "_")}`;
}

/**
 * The output length a gateway believes for each request: the client's max_tokens, or with none the
 * context end (the engine's maxModelLen − prompt), clipped so prompt + output fits the KV cache, at least
 * 1. A prompt with no room left in the context is an error (vLLM refuses it), not a belief of 1.
 */
export function maxTokensBeliefs(w: PreparedWorkload, cfg: EngineConfig): number[] {
  const kv = kvCapacityTokens(cfg);
  return w.requests.map((r, i) => {
    const over = contextOverflow(cfg, String(i), r.promptTokens, 1);
    if (over !== undefined) throw new RangeError(`${w.name}: ${over}`);
    const sent = w.maxTokens[i] ?? cfg.maxModelLen - r.promptTokens;
    return Math.max(1, Math.min(sent, kv - r.promptTokens));
  });
}

export function knowledge(
  knows: Knows,
  w: PreparedWorkload,
  /** The engine the fleet runs (engineConfig): its KV cache and maxModelLen bound the beliefs. */
  cfg: EngineConfig,
  lagMs = DEFAULT_LAG_MS,
  /** For `learned`: the output lengths of earlier traffic (the gateway's history); none: a cold start. */
  history: readonly { readonly outputTokens: number }[] = [],
): Knowledge {
  const learned = knows.startsWith("learned")
    ? { priorSum: history.reduce((a, r) => a + Math.max(1, r.outputTokens), 0), priorCount: history.length }
    : undefined;
  const outputs =
    knows.startsWith("max-tokens") || learned !== undefined ? maxTokensBeliefs(w, cfg) : undefined;
  return {
    ...(outputs ? { outputs } : {}),
    ...(knows.endsWith("lagged") ? { lagMs } : {}),
    ...(learned !== undefined ? { learned } : {}),
  };
}
