/**
 * random: a healthy backend drawn with probability ∝ weight from ctx.random.
 * If the draw is at its bounded cap, redraw among those under it (`spill`).
 */
import { boundedPick, isEligible } from "../bounded-load";
import type { FleetView, PolicyPick, RouteContext, RouteRequest, RoutingPolicy } from "../types";

function weightedDraw(fleet: FleetView, ctx: RouteContext, accept: (i: number) => boolean): number {
  let total = 0;
  for (let i = 0; i < fleet.backends.length; i++) if (accept(i)) total += fleet.backends[i]!.weight;
  if (total <= 0) return -1;
  let r = ctx.random() * total;
  let last = -1;
  for (let i = 0; i < fleet.backends.length; i++) {
    if (!accept(i)) continue;
    last = i;
    r -= fleet.backends[i]!.weight;
    if (r < 0) return i;
  }
  return last; // r landed on the upper edge through rounding
}

export class RandomPolicy implements RoutingPolicy {
  readonly name = "random";

  pick(_req: RouteRequest, fleet: FleetView, ctx: RouteContext): PolicyPick {
    const natural = weightedDraw(fleet, ctx, (i) => fleet.healthy[i] === true);
    return boundedPick(fleet, natural, () => weightedDraw(fleet, ctx, (i) => isEligible(fleet, i)));
  }
}
