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

/**
 * The pool's RetryBudget with a share for each client key: a key's retry
 * comes out of the pool's bucket and out of a bucket of its own, which its
 * own first attempts fill at the pool's ratio and which holds at most
 * `keyBurst`. So one key spends at most keyBurst of the pool's retries beyond
 * what its own traffic earns. Without it, one client sending requests that
 * every backend answers 500 or 404 (each new body is retried once: the
 * isolate remembers a body only after it failed twice) drained the pool's
 * bucket, and another client's retry from a dying backend was refused.
 * A request without a key (none given) is held to the pool's bucket only.
 * The keys remembered are bounded (least recently used first out); a key
 * forgotten starts again with a full bucket.
 */
export class KeyedRetryBudget {
  private readonly keys = new Map<string, number>();
  private refusedByKey = 0;

  constructor(
    readonly pool: RetryBudget,
    readonly keyBurst: number,
    readonly maxKeys: number,
  ) {
    if (!(keyBurst >= 1) || !Number.isFinite(keyBurst))
      throw new RangeError(`keyBurst: must be a finite number >= 1, got ${keyBurst}`);
    if (!(maxKeys >= 1)) throw new RangeError(`maxKeys: must be >= 1, got ${maxKeys}`);
  }

  get ratio(): number {
    return this.pool.ratio;
  }

  /** A first attempt by `key` was routed. */
  deposit(key?: string): void {
    this.pool.deposit();
    if (key === undefined) return;
    this.set(key, Math.min(this.keyBurst, this.tokensOf(key) + this.pool.ratio));
  }

  /** Takes one retry for `key` from its share and the pool's budget; false when either has none. */
  tryWithdraw(key?: string): boolean {
    if (key === undefined) return this.pool.tryWithdraw();
    const mine = this.tokensOf(key);
    if (mine < 1) {
      this.refusedByKey++;
      return false;
    }
    if (!this.pool.tryWithdraw()) return false;
    this.set(key, mine - 1);
    return true;
  }

  stats(): {
    readonly retried: number;
    readonly refused: number;
    readonly refusedByKey: number;
    readonly available: number;
  } {
    const p = this.pool.stats();
    return { ...p, refused: p.refused + this.refusedByKey, refusedByKey: this.refusedByKey };
  }

  private tokensOf(key: string): number {
    return this.keys.get(key) ?? this.keyBurst;
  }

  private set(key: string, tokens: number): void {
    this.keys.delete(key);
    this.keys.set(key, tokens);
    if (this.keys.size > this.maxKeys) this.keys.delete(this.keys.keys().next().value as string);
  }
}

/** Client keys whose retry share a pool's budget remembers (least recently used first out). */
export const KEY_SHARES_REMEMBERED = 1024;

/**
 * A pool's budget shared out by client key, as the RouterDO and the isolate's fallback both keep one: the
 * pool's bucket of `burst` filled at `ratio` per first attempt, and at most half of `burst` for one key beyond
 * what its own first attempts earn (a key whose every request fails everywhere leaves the other half).
 */
export function keyedPoolBudget(ratio: number, burst: number): KeyedRetryBudget {
  return new KeyedRetryBudget(new RetryBudget(ratio, burst), burst / 2, KEY_SHARES_REMEMBERED);
}
