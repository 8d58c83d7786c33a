/**
 * round_robin: smooth weighted round robin (nginx's algorithm: every healthy
 * backend's credit grows by its weight each turn; the largest credit goes
 * and pays the total). Over Σw turns backend i is chosen w_i times, evenly
 * interleaved. A backend at its cap is passed over for the eligible one with
 * the largest credit (`spill`). The credits move in onRouted, so a pick that
 * the Router does not commit changes nothing.
 */
import { boundedPick, isEligible } from "../bounded-load";
import type { BackendSpec, FleetView, PolicyPick, RouteRequest, RoutingPolicy } from "../types";

export class RoundRobinPolicy implements RoutingPolicy {
  readonly name = "round_robin";
  private credit = new Float64Array(0);

  pick(_req: RouteRequest, fleet: FleetView): PolicyPick {
    this.fit(fleet.backends.length);
    let natural = -1;
    let eligible = -1;
    for (let i = 0; i < fleet.backends.length; i++) {
      if (!fleet.healthy[i]) continue;
      const c = this.credit[i]! + fleet.backends[i]!.weight;
      if (natural < 0 || c > this.credit[natural]! + fleet.backends[natural]!.weight) natural = i;
      if (
        isEligible(fleet, i) &&
        (eligible < 0 || c > this.credit[eligible]! + fleet.backends[eligible]!.weight)
      )
        eligible = i;
    }
    return boundedPick(fleet, natural, () => eligible);
  }

  onRouted(_req: RouteRequest, index: number, fleet: FleetView): void {
    this.fit(fleet.backends.length);
    let total = 0;
    for (let i = 0; i < fleet.backends.length; i++) {
      if (!fleet.healthy[i]) continue;
      this.credit[i]! += fleet.backends[i]!.weight;
      total += fleet.backends[i]!.weight;
    }
    this.credit[index]! -= total;
  }

  onBackendsChanged(backends: readonly BackendSpec[]): void {
    this.credit = new Float64Array(backends.length);
  }

  private fit(n: number): void {
    if (this.credit.length !== n) this.credit = new Float64Array(n);
  }
}
