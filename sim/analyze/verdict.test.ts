import { describe, expect, it } from "vitest";
import type { FleetEstimate, PolicyFigures } from "./fleet-estimate";
import { decide, VERDICT_RULE } from "./verdict";

function estimate(o: { ours: number; theirs: number; p50: number; p99: number }): FleetEstimate {
  return {
    sloTtftP99Ms: 2000,
    requestsPerInstanceAtSlo: { prefix_aware: o.ours, least_outstanding: o.theirs },
    ttftP50ChangePct: o.p50,
    ttftP99ChangePct: o.p99,
  } as FleetEstimate;
}

describe("the verdict rule", () => {
  it.each([
    // share, capacity ours / theirs, p50 %, p99 %, verdict
    [0.37, 1.1, 1.0, 0, 0, "enable"], // capacity gain alone
    [0.37, 1.0, 1.0, -10, 5, "enable"], // latency alone, at the limits
    [0.37, 1.0, 1.0, -10, 5.1, "skip"], // p50 cut paid for with p99
    [0.37, 1.09, 1.0, -9.9, 0, "skip"], // neither quite
    [0.09, 3.0, 1.0, -60, -50, "skip"], // great numbers, but little to share: load balancing, not prefixes
    [0.1, 0.5, 0, 0, 0, "enable"], // only prefix_aware meets the SLO
    [0.8, 0, 0, 0, 0, "skip"], // no policy meets it, no latency gain
  ])("share %f, capacity %f vs %f, p50 %f%%, p99 %f%% → %s", (share, ours, theirs, p50, p99, verdict) => {
    const v = decide(share, estimate({ ours, theirs, p50, p99 }));
    expect(v.verdict).toBe(verdict);
    expect(v.because).toHaveLength(3);
  });

  it("says a rate is a lower bound where the search never saw it fail, as the report's table does", () => {
    const figures = (capacityBound: "exact" | "atLeast") => ({ capacityBound }) as PolicyFigures;
    const both = decide(0.8, {
      ...estimate({ ours: 60.06, theirs: 60.06, p50: 19, p99: -9 }),
      policies: { prefix_aware: figures("atLeast"), least_outstanding: figures("atLeast") },
    });
    expect(both.verdict).toBe("skip");
    expect(both.because[1]).toBe(
      "within a TTFT p99 of 2.0 s prefix_aware sustains ≥ 60.06 requests/s per instance against ≥ 60.06 " +
        "(1.00×; < 1.1×; neither limit found, so no capacity gain is shown)",
    );
    const ours = decide(0.8, {
      ...estimate({ ours: 8, theirs: 4, p50: 0, p99: 0 }),
      policies: { prefix_aware: figures("atLeast"), least_outstanding: figures("exact") },
    });
    expect(ours.verdict).toBe("enable");
    expect(ours.because[1]).toContain("sustains ≥ 8.00 requests/s per instance against 4.00 (2.00×; ≥ 1.1×)");
  });

  it("states its thresholds in the rule it prints", () => {
    expect(VERDICT_RULE).toMatch(/10% of prompt tokens/);
    expect(VERDICT_RULE).toMatch(/1\.1× least_outstanding's requests per instance/);
    expect(VERDICT_RULE).toMatch(/TTFT p50 by at least 10%.*p99 by more than 5%/);
  });
});
