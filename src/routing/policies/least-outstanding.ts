/**
 * least_outstanding: the healthy backend with the fewest requests in flight
 * per unit of weight. Ties are broken at random, weighted, so an idle fleet
 * still receives traffic in proportion to weight. The minimum is always under
 * its bounded cap when c > 1 (min_i inflight_i/w_i ≤ T/Σw < cap_i/w_i).
 * Reason `ring` = "the policy's own placement rule chose" (see RouteReason).
 */
import { isEligible, leastOverloaded } from "../bounded-load";
import type { FleetView, PolicyPick, RouteContext, RouteRequest, RoutingPolicy } from "../types";

export class LeastOutstandingPolicy implements RoutingPolicy {
  readonly name = "least_outstanding";

  pick(_req: RouteRequest, fleet: FleetView, ctx: RouteContext): PolicyPick {
    let bestLoad = Number.POSITIVE_INFINITY;
    let tieWeight = 0;
    let best = -1;
    for (let i = 0; i < fleet.backends.length; i++) {
      if (!fleet.healthy[i]) continue;
      const w = fleet.backends[i]!.weight;
      const load = fleet.inflight[i]! / w;
      if (load < bestLoad) {
        bestLoad = load;
        best = i;
        tieWeight = w;
      } else if (load === bestLoad) {
        // Weighted reservoir sampling over the tied set: one pass, one draw per tie.
        tieWeight += w;
        if (ctx.random() * tieWeight < w) best = i;
      }
    }
    if (best < 0) best = leastOverloaded(fleet);
    const reason = isEligible(fleet, best) ? "ring" : "fallback";
    return { index: best, reason };
  }
}
