/**
 * Consistent hashing with bounded loads (Mirrokni, Thorup, Zadimoghaddam,
 * SODA 2018), weighted: backend i may hold at most
 *   cap_i = ceil(c · w_i / Σw_healthy · (totalInflight + 1))
 * requests, c = balanceFactor. Because Σ_healthy cap_i ≥ c·(T+1) > T for
 * c > 1, some healthy backend is always under its cap: `fallback` only
 * happens with c ≤ 1 or when the caller's view of in-flight work is odd.
 */
import type { FleetView, PolicyPick, RouteReason } from "./types";

export function boundedCap(
  weight: number,
  healthyWeight: number,
  totalInflight: number,
  balanceFactor: number,
): number {
  if (healthyWeight <= 0) return 0;
  return Math.ceil(((balanceFactor * weight) / healthyWeight) * (totalInflight + 1));
}

/** Healthy and under its bounded-load cap. */
export function isEligible(fleet: FleetView, i: number): boolean {
  return fleet.healthy[i] === true && fleet.inflight[i]! < fleet.cap(i);
}

export function anyHealthy(fleet: FleetView): boolean {
  for (let i = 0; i < fleet.healthy.length; i++) if (fleet.healthy[i]) return true;
  return false;
}

/**
 * The least overloaded healthy backend: min inflight_i / w_i; ties go to the
 * lower `rank` (a key's probe order, so replicas agree) or, without ranks, the
 * lower index. -1 when nothing is healthy.
 */
export function leastOverloaded(fleet: FleetView, rank?: Int32Array): number {
  let best = -1;
  let bestLoad = Number.POSITIVE_INFINITY;
  for (let i = 0; i < fleet.backends.length; i++) {
    if (!fleet.healthy[i]) continue;
    const load = fleet.inflight[i]! / fleet.backends[i]!.weight;
    if (load < bestLoad || (load === bestLoad && best >= 0 && rank !== undefined && rank[i]! < rank[best]!)) {
      best = i;
      bestLoad = load;
    }
  }
  return best;
}

/**
 * The bounded-load step shared by the load-blind policies: their natural
 * choice stands (`ring`) unless it is at its cap; then the eligible
 * alternative they computed (`spill`); if none is eligible, the least
 * overloaded healthy backend (`fallback`).
 */
export function boundedPick(
  fleet: FleetView,
  natural: number,
  eligibleAlternative: () => number,
): PolicyPick {
  let index = natural;
  let reason: RouteReason = "ring";
  if (natural >= 0 && !isEligible(fleet, natural)) {
    index = eligibleAlternative();
    reason = "spill";
    if (index < 0) {
      index = leastOverloaded(fleet);
      reason = "fallback";
    }
  }
  return { index, reason };
}
