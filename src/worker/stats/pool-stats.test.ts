import { describe, expect, it } from "vitest";
import type { RouteDecision } from "../../routing/types";
import { PoolStats } from "./pool-stats";

const decision = (backendId: string): RouteDecision => ({
  backendId,
  reason: "affinity",
  expectedCachedTokens: 32,
  availableCachedTokens: 48,
  inflightAtDecision: 0,
});

/** A pool's stats after `n` requests on arm A (and one on B), ended with latencies and usage. */
function traffic(stats: PoolStats, n: number): void {
  for (let i = 0; i < n; i++) {
    const figures = stats.routed(
      { arm: 0, decision: decision(`b${i % 3}`), shadow: { backendId: "b0", expectedCachedTokens: 16 } },
      64,
    );
    stats.ended(0, figures, {
      ok: true,
      promptTokens: 64,
      cachedTokens: 32,
      ttftMs: 10 + i,
      durationMs: 100 + 10 * i,
      outputTokens: 8,
    });
  }
  const f = stats.routed({ arm: 1, decision: decision("b1") }, 64);
  stats.ended(1, f, { ok: false, failure: "timeout" });
}

describe("PoolStats.restore", () => {
  it("a restored snapshot reads as the saved one, and counting goes on from it", () => {
    const before = new PoolStats(["prefix_aware", "least_outstanding"], "prefix_aware");
    traffic(before, 40);
    const saved = JSON.parse(JSON.stringify(before.snapshot()));
    const after = new PoolStats(["prefix_aware", "least_outstanding"], "prefix_aware");
    after.restore(saved);
    expect(after.snapshot()).toEqual(before.snapshot());
    // Both go on counting the same traffic: still equal (sketches merge exactly).
    traffic(before, 5);
    traffic(after, 5);
    expect(after.snapshot()).toEqual(before.snapshot());
  });

  it("figures of another configuration are dropped, not pinned on the wrong arm", () => {
    const before = new PoolStats(["prefix_aware", "least_outstanding"], "prefix_aware");
    traffic(before, 10);
    const other = new PoolStats(["round_robin"]);
    other.restore(JSON.parse(JSON.stringify(before.snapshot())));
    expect(other.snapshot()).toEqual(new PoolStats(["round_robin"]).snapshot());
  });
});
