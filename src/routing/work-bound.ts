/**
 * prefix_aware's load bound, on work instead of requests.
 *
 * Counting requests (bounded-load.ts) treats a fully cached chat turn like a
 * cold 5k-token prompt, and at low load its cap is 1 (with 16 backends,
 * ⌈1.25/16 · (T + 1)⌉ = 1 while T < 12), so the second concurrent request
 * of a prefix leaves its home and prefills everything again. What overloads
 * an engine is the work it holds: prefill queued and KV in use. So:
 *
 *   work_i   = Σ over our requests in flight on i of (uncached prompt + expected output)
 *              tokens: what they add to its prefill queue and its KV (cost-model.ts kvTokens)
 *   W        = Σ work_j over healthy backends
 *   x_i      = the request's work if placed on i (its prompt minus what i caches, + output)
 *
 *   i may take the request  ⇔  work_i = 0  or  work_i + x_i ≤ c · w_i / Σw_healthy · (W + x_i) + s · K_i
 *
 * with c the balance factor (BALANCE_FACTOR), K_i backend i's configured KV
 * capacity in tokens and s the slack share (DEFAULT_WORK_SLACK).
 *
 * The bound kept (tested as an invariant in policies/policy-invariants.test.ts):
 * after every placement that is not a `fallback`, the chosen backend holds at
 * most c × its weighted fair share of the fleet's work in flight plus s of
 * its KV capacity, or the one request it was given while it held nothing.
 * Both allowances are what "never binds on an idle fleet" means: an idle
 * backend accepts any request (one request alone overloads nothing but
 * itself, as Mirrokni et al.'s ⌈·⌉ always admits one), and a backend holding
 * less than s·K_i − x_i accepts whatever the fleet's total; once the fleet is
 * busy (W ≫ s·K_i·Σw/w_i) the bound is the c-approximate balance of
 * consistent hashing with bounded loads, in tokens of work.
 *
 * A `fallback` (no backend fits, e.g. a request larger than s·K_i on a busy
 * fleet) goes to the backend with the least work per weight after placement.
 */
import type { FleetView } from "./types";

/**
 * s: a quarter of a backend's KV capacity (110k tokens on the 8B preset's
 * 442k): below that a backend is not overloaded by our work whatever its
 * share, so the bound leaves placement to the cost model; a hot prefix can
 * still not take a backend's whole memory. Chosen on the tuning set among
 * 0, 1/64, 1/16 and 1/4 (bench/results/policy-work.md): 1/4 had the best mean
 * and worst p99 against the best peer and the best hit rates; 0 (an idle
 * backend only) was 17% worse than the best peer on average.
 */
export const DEFAULT_WORK_SLACK = 1 / 4;

/** The most work backend i may hold after taking `x` more, given the fleet's work `total` before it. */
export function workBound(
  weight: number,
  healthyWeight: number,
  total: number,
  x: number,
  kvCapacity: number,
  balanceFactor: number,
  slack: number,
): number {
  if (healthyWeight <= 0) return 0;
  return ((balanceFactor * weight) / healthyWeight) * (total + x) + slack * kvCapacity;
}

/** Per-backend work in flight, as the policy's cost model holds it. */
export interface WorkLedger {
  /** Tokens of work our in-flight requests hold on backend i. */
  heldTokens(i: number): number;
}

/** The fleet's totals for one decision: computed once, read for every backend. */
export interface FleetWork {
  /** Σ work over healthy backends, tokens. */
  readonly total: number;
  /** Σ weight over healthy backends. */
  readonly healthyWeight: number;
}

export class WorkBound {
  constructor(
    private readonly ledger: WorkLedger,
    private readonly slack: number = DEFAULT_WORK_SLACK,
  ) {
    if (!(slack >= 0) || !Number.isFinite(slack))
      throw new RangeError(`workSlack: must be >= 0, got ${slack}`);
  }

  measure(fleet: FleetView): FleetWork {
    let total = 0;
    let healthyWeight = 0;
    for (let i = 0; i < fleet.backends.length; i++) {
      if (!fleet.healthy[i]) continue;
      total += this.ledger.heldTokens(i);
      healthyWeight += fleet.backends[i]!.weight;
    }
    return { total, healthyWeight };
  }

  /** Healthy, and holding no more than its bound after taking `x` tokens of work. */
  fits(fleet: FleetView, i: number, x: number, work: FleetWork): boolean {
    if (!fleet.healthy[i]) return false;
    const held = this.ledger.heldTokens(i);
    if (held === 0) return true;
    const b = fleet.backends[i]!;
    const bound = workBound(
      b.weight,
      work.healthyWeight,
      work.total,
      x,
      b.kvCacheTokens,
      fleet.balanceFactor,
      this.slack,
    );
    return held + x <= bound;
  }

  /** The healthy backend with the least work per weight once it takes its `x[i]`; ties to the lower rank. */
  leastLoaded(fleet: FleetView, x: ArrayLike<number>, rank?: Int32Array): number {
    let best = -1;
    let bestLoad = Number.POSITIVE_INFINITY;
    for (let i = 0; i < fleet.backends.length; i++) {
      if (!fleet.healthy[i]) continue;
      const load = (this.ledger.heldTokens(i) + x[i]!) / fleet.backends[i]!.weight;
      if (
        load < bestLoad ||
        (load === bestLoad && best >= 0 && rank !== undefined && rank[i]! < rank[best]!)
      ) {
        best = i;
        bestLoad = load;
      }
    }
    return best;
  }
}
