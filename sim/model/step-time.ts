/**
 * How long one engine step takes, and the closed form of a run of steps
 * whose batch does not change (decode-only steps between two scheduling
 * points), so the engine model never loops over decode steps one by one.
 *
 * A step carries one token per decoding sequence plus the prefill chunks
 * scheduled in it. Its time is
 *   decodeStepBaseMs + decodeStepPerSeqMs·decoding
 *     + decodeStepPerKTokenMs·context/1000 + prefillTokens/prefillTokensPerSec
 * where context is the K/V the decoding sequences read (their prompts and the
 * tokens they generated so far), plus, for a mixture of experts, the experts
 * the step's tokens are routed to: expertWeightsMs · (1 − (1 − expertShare)^tokens)
 * (uniform routing; every expert once a prefill chunk is in the step).
 * Prefill slows decode and a full batch slows prefill, as mixed batches do
 * on a real GPU; compute and memory time add up (no overlap), the
 * conservative side.
 *
 * In a decode-only run every sequence adds one token of context per step, so
 * step i of the run (from 0) lasts a + b·i with b = decodeStepPerKTokenMs ·
 * decoding / 1000: k steps take k·a + b·k(k−1)/2.
 */
import type { EngineConfig } from "./types";

export class StepCost {
  private readonly base: number;
  private readonly perSeq: number;
  private readonly perKToken: number;
  private readonly prefillPerMs: number;
  private readonly expertMs: number;
  private readonly expertMiss: number;

  constructor(config: EngineConfig) {
    this.base = config.decodeStepBaseMs;
    this.perSeq = config.decodeStepPerSeqMs;
    this.perKToken = config.decodeStepPerKTokenMs ?? 0;
    this.prefillPerMs = config.prefillTokensPerSec / 1000;
    this.expertMs = config.expertWeightsMs ?? 0;
    this.expertMiss = 1 - (config.expertShare ?? 0);
  }

  /** ms of one step with `decoding` sequences holding `context` tokens and `prefillTokens` of prefill chunks. */
  stepMs(decoding: number, context: number, prefillTokens: number): number {
    const experts =
      this.expertMs > 0 ? this.expertMs * (1 - this.expertMiss ** (decoding + prefillTokens)) : 0;
    return (
      this.base +
      this.perSeq * decoding +
      (this.perKToken * context) / 1000 +
      prefillTokens / this.prefillPerMs +
      experts
    );
  }

  /** ms each later step of a decode-only run adds (the context grows by one token per sequence). */
  growthMs(decoding: number): number {
    return (this.perKToken * decoding) / 1000;
  }

  /** GPU-seconds of prefill compute for `tokens` prompt tokens. */
  prefillSeconds(tokens: number): number {
    return tokens / this.prefillPerMs / 1000;
  }
}

/** ms taken by the first `k` steps of a run whose step i lasts a + b·i. */
export function runMs(a: number, b: number, k: number): number {
  return k * a + (b * k * (k - 1)) / 2;
}

/**
 * Whole steps of such a run completed within `elapsed` ms: the largest k with
 * runMs(a, b, k) ≤ elapsed (a > 0, b ≥ 0). The root of the quadratic, then
 * corrected by one step either way against float rounding.
 */
export function stepsWithin(a: number, b: number, elapsed: number): number {
  if (!(elapsed > 0)) return 0;
  let k: number;
  if (b === 0) {
    k = Math.floor(elapsed / a);
  } else {
    // Root of (b/2)k² + (a − b/2)k − elapsed = 0, in the form that does not cancel.
    const c = a - b / 2;
    k = Math.floor((2 * elapsed) / (c + Math.sqrt(c * c + 2 * b * elapsed)));
  }
  while (runMs(a, b, k + 1) <= elapsed) k++;
  while (k > 0 && runMs(a, b, k) > elapsed) k--;
  return k;
}
