/**
 * A retry budget (Envoy's idea, as a token bucket): every first attempt
 * deposits `ratio` of a retry, every retry withdraws one whole retry, and the
 * bucket holds at most `burst`. Over any stretch of traffic, retries stay
 * within ratio × requests + burst — a fleet-wide failure cannot double the
 * load on the backends that are left — while an idle pool can still retry
 * its occasional failure (the bucket starts full).
 */
export class RetryBudget {
  private tokens: number;
  private retried = 0;
  private refused = 0;

  constructor(
    readonly ratio: number,
    readonly burst: number,
  ) {
    if (!(ratio >= 0 && ratio <= 1)) throw new RangeError(`ratio: must be within 0..1, got ${ratio}`);
    if (!(burst >= 0) || !Number.isFinite(burst))
      throw new RangeError(`burst: must be a finite number >= 0, got ${burst}`);
    this.tokens = burst;
  }

  /** A first attempt was routed. */
  deposit(): void {
    this.tokens = Math.min(this.burst, this.tokens + this.ratio);
  }

  /** Takes one retry from the budget; false when there is none left. */
  tryWithdraw(): boolean {
    if (this.tokens < 1) {
      this.refused++;
      return false;
    }
    this.tokens -= 1;
    this.retried++;
    return true;
  }

  stats(): { readonly retried: number; readonly refused: number; readonly available: number } {
    return { retried: this.retried, refused: this.refused, available: Math.floor(this.tokens) };
  }
}
