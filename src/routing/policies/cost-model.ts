/**
 * Expected time to first token on each backend, as prefix_aware scores it:
 *
 *   cost_i = queueWait_i + uncached_i / rate_i + decodeMsPerInflight · inflight_i
 *
 * - queueWait_i: a virtual prefill queue. Routing a request here pushes the
 *   backend's busy-until time by its uncached tokens / rate; it drains with
 *   `now`. This is what makes a hot prefix spill to a second home before the
 *   bounded cap does: saved prefill is weighed against prefill queued ahead.
 * - rate_i: prefill tokens per second, an EWMA of observed
 *   uncached tokens / (TTFT − the queue wait we predicted), starting at
 *   `defaultPrefillTokensPerSec` (10,000 tok/s: the order of an 8B model on
 *   one H100 with chunked prefill; the engine model in bench/ uses the same
 *   unit). Samples under `minSampleTokens` uncached tokens are skipped: their
 *   TTFT is mostly network and the first decode step, not prefill.
 * - decodeMsPerInflight: requests in flight slow every engine step a little
 *   (they decode in the same batch) and fill the running set; a small term
 *   that decides between backends with equal matches and equal queues.
 */
import type { BackendSpec } from "../types";

export interface CostModelOptions {
  /** Prefill rate before any outcome is seen, tokens/s. Default 10,000. */
  readonly defaultPrefillTokensPerSec?: number;
  /** Cost of each request already in flight on a backend, ms. Default 2. */
  readonly decodeMsPerInflight?: number;
  /** EWMA weight of a new rate sample. Default 0.2. */
  readonly ewmaAlpha?: number;
  /** Uncached tokens below which a TTFT says too little about prefill speed. Default 1024. */
  readonly minSampleTokens?: number;
}

export const DEFAULT_PREFILL_TOKENS_PER_SEC = 10_000;

interface BackendCostState {
  busyUntil: number;
  /** Tokens per ms. */
  rate: number;
}

export class PrefillCostModel {
  readonly defaultRate: number;
  readonly decodeMsPerInflight: number;
  private readonly alpha: number;
  private readonly minSampleTokens: number;
  private byId = new Map<string, BackendCostState>();
  private states: BackendCostState[] = [];

  constructor(options: CostModelOptions = {}) {
    const tps = options.defaultPrefillTokensPerSec ?? DEFAULT_PREFILL_TOKENS_PER_SEC;
    if (!(tps > 0) || !Number.isFinite(tps))
      throw new RangeError(`defaultPrefillTokensPerSec must be a finite number > 0, got ${tps}`);
    this.defaultRate = tps / 1000;
    this.decodeMsPerInflight = options.decodeMsPerInflight ?? 2;
    this.alpha = options.ewmaAlpha ?? 0.2;
    this.minSampleTokens = options.minSampleTokens ?? 1024;
  }

  /** Keeps learned state for backends that stay (matched by id). */
  setBackends(backends: readonly BackendSpec[]): void {
    const byId = new Map<string, BackendCostState>();
    this.states = backends.map((b) => {
      const s = this.byId.get(b.id) ?? { busyUntil: 0, rate: this.defaultRate };
      byId.set(b.id, s);
      return s;
    });
    this.byId = byId;
  }

  get size(): number {
    return this.states.length;
  }

  queueWaitMs(i: number, now: number): number {
    return Math.max(0, this.states[i]!.busyUntil - now);
  }

  /** Prefill rate of backend i, tokens/s. */
  prefillTokensPerSec(i: number): number {
    return this.states[i]!.rate * 1000;
  }

  cost(i: number, uncachedTokens: number, inflight: number, now: number): number {
    const s = this.states[i]!;
    return Math.max(0, s.busyUntil - now) + uncachedTokens / s.rate + this.decodeMsPerInflight * inflight;
  }

  /** A request was sent to i: its prefill joins the queue. Returns the queue wait it was predicted. */
  routed(i: number, uncachedTokens: number, now: number): number {
    const s = this.states[i]!;
    const wait = Math.max(0, s.busyUntil - now);
    s.busyUntil = Math.max(s.busyUntil, now) + uncachedTokens / s.rate;
    return wait;
  }

  /** Learns i's prefill rate from one observed TTFT. */
  observe(i: number, uncachedTokens: number, ttftMs: number, predictedWaitMs: number): void {
    if (uncachedTokens < this.minSampleTokens || !(ttftMs > 0)) return;
    const s = this.states[i]!;
    // The queue estimate may be off either way; never attribute less than a quarter of TTFT to prefill.
    const serviceMs = Math.max(ttftMs - predictedWaitMs, ttftMs / 4);
    const sample = Math.min(
      Math.max(uncachedTokens / serviceMs, this.defaultRate / 100),
      this.defaultRate * 100,
    );
    s.rate += this.alpha * (sample - s.rate);
  }
}
