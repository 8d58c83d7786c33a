/**
 * A cell's load as the cell-level bound judges it: its requests in flight
 * averaged over time with exponentially fading weight (time constant
 * `tauMs`), not the count at the instant of a decision.
 *
 * Why: the bound over cells (cell-ring.ts) exists for sustained imbalance —
 * a hot tenant, families that happen to hash to one cell. A cell's count at
 * one instant also swings with every burst of arrivals, and those bursts are
 * what the bounded load over the cell's own backends absorbs. Judged on the
 * instant, a cell crosses c × its share for a moment many times a second,
 * and each time every family whose home it is goes to its next cell and
 * back, paying its prefix there (a conversation its whole history) twice.
 * On multi-turn chat at K = 4 that was 4–6% of requests off home and most of
 * the hit rate lost against K = 1 (bench/results/scale.md, "Cells"). The
 * issue's must-show is a time-averaged load (no cell's time-averaged load
 * above 1.3 × the mean), and this is the same quantity, taken causally.
 *
 * The signal is piecewise constant (it changes when a request starts or
 * ends), so the average is exact given every change: over an interval Δ at
 * value v it moves toward v by a factor 1 − e^(−Δ/τ). Pure: time is a
 * parameter.
 */
export class LoadLevel {
  private average = 0;
  private value = 0;
  private at = Number.NEGATIVE_INFINITY;

  constructor(readonly tauMs: number) {
    if (!(tauMs >= 0) || !Number.isFinite(tauMs))
      throw new RangeError(`LoadLevel: tauMs must be ≥ 0, got ${tauMs}`);
  }

  /** The load is `value` from `now` on (times may only go forward; an earlier one counts as `now` of the last). */
  set(value: number, now: number): void {
    this.average = this.at === Number.NEGATIVE_INFINITY ? value : this.read(now);
    this.value = value;
    this.at = Math.max(this.at, now);
  }

  /** The time-averaged load at `now`. The first value set stands for the past before it. */
  read(now: number): number {
    if (this.at === Number.NEGATIVE_INFINITY) return this.value;
    const dt = Math.max(0, now - this.at);
    if (this.tauMs === 0) return this.value;
    return this.value + (this.average - this.value) * Math.exp(-dt / this.tauMs);
  }
}
