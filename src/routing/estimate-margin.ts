/**
 * A per-backend margin for the hold back, learned from the gateway's own
 * errors in counting prompts past the key window.
 *
 * The Worker tokenizes only a prompt's first PREFIX_TOKENS tokens; past them
 * it estimates (ceil(chars / 4), src/prefix), and only usage.prompt_tokens at
 * completion says how wrong that was. The ledger's KV belief is unbiased
 * overall, but on the decisions where it said "fits now" and the engine had
 * no room, the estimate past the window was several thousand tokens low
 * (bench/results/policy-work.md, "Ledger KV against the engine's"). A fixed
 * margin, a share of capacity, was either too small to catch those or made
 * multi-turn worse, where every prompt fits in the window and the ledger
 * reads high ("Headroom").
 *
 * So the margin is built from what the gateway has seen go wrong, only where
 * it can go wrong: per backend, the relative error r = (usage.prompt_tokens −
 * the Worker's count) / (the Worker's count past the window) of recent
 * completions of ours whose prompt ran past the window (an exponentially
 * weighted mean μ and variance σ², about the last HALF_LIFE_SAMPLES of them),
 * and for the requests now in flight there that ran past the window, with
 * tails t_j (the Worker's count past the window), plus the request being
 * placed:
 *
 *     margin = max(0, μ · Σ t_j + k · σ · sqrt(Σ t_j²)),   k = MARGIN_SDS
 *
 * — the one-sided high bound of a sum of independent per-request errors
 * (each error scales with the text the Worker did not tokenize). It is 0 on
 * a backend with no such request in flight, and 0 before any error is seen:
 * no evidence, no margin. k is fixed in advance (≈ the one-sided 97.7%
 * point of a normal), not tuned. Measured, it covers less than that: the
 * true error on 86–92% of the margin-only holds on Mooncake MoE (tuning
 * half), as one backend's errors are not independent (policy-work.md,
 * branch margin-inc). Pure: no clock, no randomness.
 */

import type { PromptEstimateError } from "./types";

/** k of the header: standard deviations of the summed error the margin covers. Fixed in advance, not tuned. */
export const MARGIN_SDS = 2;
/** The error statistics weigh about this many of a backend's latest samples (EW weight 1/this once warm). */
export const HALF_LIFE_SAMPLES = 64;

interface BackendErrors {
  /** Samples seen (capped use: the EW weight is max(1/n, 1/HALF_LIFE_SAMPLES)). */
  n: number;
  mean: number;
  variance: number;
  /** Requests in flight that ran past the window, and Σ t, Σ t² of their tails. */
  inflight: number;
  sumTail: number;
  sumTailSq: number;
}

export class EstimateMargin {
  private backends: BackendErrors[] = [];
  /** Bumped by every reset: a request routed before it is not taken off the new counts (as shared-prefixes.ts). */
  private generation = 0;

  /** One empty record per backend. */
  reset(size: number): void {
    this.generation++;
    this.backends = Array.from({ length: size }, () => ({
      n: 0,
      mean: 0,
      variance: 0,
      inflight: 0,
      sumTail: 0,
      sumTailSq: 0,
    }));
  }

  /**
   * A request whose Worker count ran `tail` tokens past the window was placed on backend i (tail 0: none).
   * Returns the generation to hand back to released().
   */
  routed(i: number, tail: number): number {
    const b = this.backends[i];
    if (b === undefined || !(tail > 0)) return this.generation;
    b.inflight++;
    b.sumTail += tail;
    b.sumTailSq += tail * tail;
    return this.generation;
  }

  /** That request left backend i (completed or failed); `generation` as routed() returned it. */
  released(i: number, tail: number, generation: number): void {
    const b = this.backends[i];
    if (b === undefined || !(tail > 0) || b.inflight === 0 || generation !== this.generation) return;
    b.inflight--;
    if (b.inflight === 0) {
      // No drift from adding and subtracting floats: an empty backend holds exactly nothing.
      b.sumTail = 0;
      b.sumTailSq = 0;
    } else {
      b.sumTail = Math.max(0, b.sumTail - tail);
      b.sumTailSq = Math.max(0, b.sumTailSq - tail * tail);
    }
  }

  /**
   * Backend i reported `promptTokens` (usage.prompt_tokens) for a request the Worker counted as `estimate`,
   * `tail` of them past the window.
   */
  observe(i: number, tail: number, estimate: number, promptTokens: number): void {
    const b = this.backends[i];
    if (b === undefined || !(tail > 0) || !Number.isFinite(promptTokens) || !(promptTokens >= 0)) return;
    const r = (promptTokens - estimate) / tail;
    b.n++;
    const w = Math.max(1 / b.n, 1 / HALF_LIFE_SAMPLES);
    const d = r - b.mean;
    b.mean += w * d;
    // West's exponentially weighted variance: exact sample variance (1/n) while warming up.
    b.variance = (1 - w) * (b.variance + w * d * d);
  }

  /**
   * Tokens the ledger may be short on backend i by the Worker's errors past the window, for what is in flight
   * there and a request of its own `tail` (0 when it fits in the window): the header's margin.
   */
  marginTokens(i: number, tail: number): number {
    const b = this.backends[i];
    if (b === undefined || b.n === 0) return 0;
    const t = Math.max(tail, 0);
    const s1 = b.sumTail + t;
    if (s1 === 0) return 0;
    const s2 = b.sumTailSq + t * t;
    return Math.max(0, b.mean * s1 + MARGIN_SDS * Math.sqrt(b.variance * s2));
  }

  /** The learned mean and standard deviation of backend i's relative error (undefined before any sample). */
  errors(i: number): PromptEstimateError | undefined {
    const b = this.backends[i];
    return b === undefined || b.n === 0
      ? undefined
      : { samples: b.n, mean: b.mean, sd: Math.sqrt(b.variance) };
  }
}
