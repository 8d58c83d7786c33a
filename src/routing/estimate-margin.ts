/**
 * A margin for the hold back, learned from the gateway's own errors in
 * counting prompts past the key window: the error statistic is the fleet's,
 * the tails it scales are each backend's.
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
 * it can go wrong: over the whole fleet, the relative error r =
 * (usage.prompt_tokens − the Worker's count) / (the Worker's count past the
 * window) of recent completions of ours whose prompt ran past the window (an
 * exponentially weighted mean μ and variance σ², about the last
 * HALF_LIFE_SAMPLES of them), and on each backend, for the requests now in
 * flight there that ran past the window, with tails t_j (the Worker's count
 * past the window), plus the request being placed:
 *
 *     margin = max(0, μ · Σ t_j + k · σ · sqrt(Σ t_j²)),   k = MARGIN_SDS
 *
 * — the one-sided high bound of a sum of independent per-request errors
 * (each error scales with the text the Worker did not tokenize). It is 0 on
 * a backend with no such request in flight, and 0 before any error is seen:
 * no evidence, no margin. k is fixed in advance (≈ the one-sided 97.7%
 * point of a normal), not tuned. Pure: no clock, no randomness.
 *
 * Why one statistic for the fleet: the error is a property of the traffic's
 * text (how many characters a token takes past the window), not of the engine
 * that serves it — every backend runs the same tokenizer on prompts drawn
 * from the same clients. Learned per backend, each statistic would see 1/N of
 * the samples: N times slower to warm up, noisier once warm, and a backend
 * that has served no long prompt yet would hold no margin at all. The tails
 * stay per backend: they are where the KV is. (A fleet whose error truly
 * differs by backend — e.g. tenants of one language pinned to some backends —
 * would want the per-backend form back; the sample counts are kept per backend
 * so an operator can see how the fleet's figure is spread.)
 */

import type { PromptEstimateError } from "./types";

/** k of the header: standard deviations of the summed error the margin covers. Fixed in advance, not tuned. */
export const MARGIN_SDS = 2;
/** The error statistics weigh about this many of a backend's latest samples (EW weight 1/this once warm). */
export const HALF_LIFE_SAMPLES = 64;

/** The fleet's error statistic: every completion of ours past the window, whichever backend served it. */
interface FleetErrors {
  /** Samples seen (capped use: the EW weight is max(1/n, 1/HALF_LIFE_SAMPLES)). */
  n: number;
  mean: number;
  variance: number;
}

interface BackendTails {
  /** Completions past the window this backend contributed to the fleet's statistic. */
  samples: number;
  /** Requests in flight that ran past the window, and Σ t, Σ t² of their tails. */
  inflight: number;
  sumTail: number;
  sumTailSq: number;
}

export class EstimateMargin {
  private fleet: FleetErrors = { n: 0, mean: 0, variance: 0 };
  private backends: BackendTails[] = [];

  /**
   * One empty record per backend, and the fleet's statistic forgotten: called when the backend list changes
   * (a new fleet's traffic is not known to be the old one's).
   */
  reset(size: number): void {
    this.fleet = { n: 0, mean: 0, variance: 0 };
    this.backends = Array.from({ length: size }, () => ({
      samples: 0,
      inflight: 0,
      sumTail: 0,
      sumTailSq: 0,
    }));
  }

  /** A request whose Worker count ran `tail` tokens past the window was placed on backend i (tail 0: none). */
  routed(i: number, tail: number): void {
    const b = this.backends[i];
    if (b === undefined || !(tail > 0)) return;
    b.inflight++;
    b.sumTail += tail;
    b.sumTailSq += tail * tail;
  }

  /** That request left backend i (completed or failed). */
  released(i: number, tail: number): void {
    const b = this.backends[i];
    if (b === undefined || !(tail > 0) || b.inflight === 0) return;
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
   * `tail` of them past the window: a sample of the fleet's statistic.
   */
  observe(i: number, tail: number, estimate: number, promptTokens: number): void {
    const b = this.backends[i];
    if (b === undefined || !(tail > 0) || !Number.isFinite(promptTokens) || !(promptTokens >= 0)) return;
    const r = (promptTokens - estimate) / tail;
    b.samples++;
    const f = this.fleet;
    f.n++;
    const w = Math.max(1 / f.n, 1 / HALF_LIFE_SAMPLES);
    const d = r - f.mean;
    f.mean += w * d;
    // West's exponentially weighted variance: exact sample variance (1/n) while warming up.
    f.variance = (1 - w) * (f.variance + w * d * d);
  }

  /**
   * Tokens the ledger may be short on backend i by the Worker's errors past the window, for what is in flight
   * there and a request of its own `tail` (0 when it fits in the window): the header's margin.
   */
  marginTokens(i: number, tail: number): number {
    const b = this.backends[i];
    const f = this.fleet;
    if (b === undefined || f.n === 0) return 0;
    const t = Math.max(tail, 0);
    const s1 = b.sumTail + t;
    if (s1 === 0) return 0;
    const s2 = b.sumTailSq + t * t;
    return Math.max(0, f.mean * s1 + MARGIN_SDS * Math.sqrt(f.variance * s2));
  }

  /**
   * What backend i's margin reads: the fleet's learned mean and standard deviation of the relative error
   * (the same on every backend), with the samples backend i contributed and the fleet's total. Undefined
   * before the fleet has seen any sample.
   */
  errors(i: number): PromptEstimateError | undefined {
    const b = this.backends[i];
    const f = this.fleet;
    return b === undefined || f.n === 0
      ? undefined
      : { samples: b.samples, fleetSamples: f.n, mean: f.mean, sd: Math.sqrt(f.variance) };
  }
}
