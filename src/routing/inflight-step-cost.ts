/**
 * What one more request in flight costs on a backend, ms, learned from the
 * completions the gateway already sees instead of assumed.
 *
 * An engine runs its requests in steps that carry one token per decoding
 * sequence: each running sequence makes every step a little longer (its
 * sampling and bookkeeping, the K/V of its context it reads; on a mixture
 * of experts, the experts its token is routed to, which matter at small
 * batches only). A new request's first token waits for such steps, so it
 * pays about that marginal step cost for every request running with it.
 * How much that is depends on the model, the hardware and the contexts:
 * on the simulator's presets from ~0.02 ms (a short context on the 8B) to
 * ~1.5 ms (the first few sequences of the MoE), never one constant.
 *
 * The gateway sees, per completed request, its decode time (first token →
 * completion) and usage.completion_tokens: their ratio is the mean step
 * time while it decoded (time per output token, the engine's TPOT). Against
 * the mean number of our requests in flight on the backend while it was
 * (the count when it was sent is a worse regressor: a long decode outlives
 * it, and the error in it biases the slope towards 0), the slope of a least-squares line through those pairs is the step time
 * one more request adds. The sums are exponentially weighted (each sample
 * weighs 1/k while k < `samples`, then 1/`samples`, Welford's update), so
 * the figure follows a backend whose contexts or batch change.
 *
 * Until `samples` completions are seen, and until the in-flight counts they
 * ran with spread by one request or more (a slope through one point says
 * nothing), there is no figure. Once there is one, a window whose counts
 * stop spreading (a steady load, or a pool draining to one request at a
 * time) keeps the last figure it could tell. The
 * figure is bounded: at least 0 (a step never gets faster with more work),
 * at most the mean step time ÷ the mean count (a line with a step time of
 * its own ≥ 0 at zero requests can rise no faster), so a noisy slope can
 * never make a request in flight cost more than the whole step.
 *
 * Pure: no clock; the caller says what it saw.
 */
export class InflightStepCost {
  private readonly samples: number;
  private k = 0;
  private meanN = 0;
  private meanStep = 0;
  /** Weighted variance of the in-flight counts, and their covariance with the step time. */
  private varN = 0;
  private covNStep = 0;
  /** The last figure the window could tell; undefined until the first. */
  private last: number | undefined;

  constructor(samples: number) {
    if (!Number.isInteger(samples) || samples < 2)
      throw new RangeError(`inflightSamples must be an integer >= 2, got ${samples}`);
    this.samples = samples;
  }

  /**
   * One completed request: `inflight` of our requests were in flight on the backend with it on average
   * (itself included), and it decoded `outputTokens` tokens in `decodeMs` (first token → completion).
   * A response of one token has no decode step after its first token and says nothing.
   */
  observe(inflight: number, decodeMs: number, outputTokens: number): void {
    if (!(outputTokens >= 2) || !(decodeMs >= 0) || !Number.isFinite(decodeMs) || !(inflight >= 1)) return;
    const step = decodeMs / (outputTokens - 1);
    this.k++;
    const a = Math.max(1 / this.k, 1 / this.samples);
    const dn = inflight - this.meanN;
    const ds = step - this.meanStep;
    this.meanN += a * dn;
    this.meanStep += a * ds;
    this.varN = (1 - a) * (this.varN + a * dn * dn);
    this.covNStep = (1 - a) * (this.covNStep + a * dn * ds);
    if (this.k >= this.samples && this.varN >= 1)
      this.last = Math.min(Math.max(0, this.covNStep / this.varN), this.meanStep / this.meanN);
  }

  /** Completions seen. */
  get seen(): number {
    return this.k;
  }

  /** ms one more request in flight adds to a step, as learned; undefined until there is enough to learn from. */
  msPerRequest(): number | undefined {
    return this.last;
  }
}
