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

/** `v` with every float sum (sumSeconds, a sketch's sum) rounded to 12 significant digits. */
function floatSumsTo12Digits(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(floatSumsTo12Digits);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [
      k,
      (k === "sumSeconds" || k === "sum") && typeof x === "number"
        ? Number(x.toPrecision(12))
        : floatSumsTo12Digits(x),
    ]),
  );
}

describe("PoolStats.restore", () => {
  it("a restored snapshot reads as the saved one, and counting goes on from it", () => {
    const before = new PoolStats(["prefix_aware", "least_outstanding"], "prefix_aware");
    traffic(before, 40);
    const saved = JSON.parse(JSON.stringify(before.snapshot()));
    const after = new PoolStats(["prefix_aware", "least_outstanding"], "prefix_aware");
    after.restore(saved);
    expect(after.snapshot()).toEqual(before.snapshot());
    // Both go on counting the same traffic: still equal (counts add and sketches merge exactly; a
    // sum of latencies in seconds is added in another order, saved + new rather than one by one,
    // so it may differ in its last binary digit).
    traffic(before, 5);
    traffic(after, 5);
    expect(floatSumsTo12Digits(after.snapshot())).toEqual(floatSumsTo12Digits(before.snapshot()));
  });

  it("a saved histogram of another bucket layout is dropped, the arm's other figures kept", () => {
    const before = new PoolStats(["prefix_aware"]);
    traffic(before, 10);
    const saved = JSON.parse(JSON.stringify(before.snapshot()));
    saved.arms[0].ttftHistogram = { counts: [1, 2, 3], sumSeconds: 7 };
    const after = new PoolStats(["prefix_aware"]);
    after.restore(saved);
    const a = after.snapshot().arms[0]!;
    const fresh = new PoolStats(["prefix_aware"]).snapshot().arms[0]!;
    expect(a.ttftHistogram).toEqual(fresh.ttftHistogram);
    expect(a.e2eHistogram).toEqual(before.snapshot().arms[0]!.e2eHistogram);
    expect(a.routed).toBe(10);
  });

  it("figures of another configuration are dropped, not pinned on the wrong arm", () => {
    const before = new PoolStats(["prefix_aware", "least_outstanding"], "prefix_aware");
    traffic(before, 10);
    const other = new PoolStats(["round_robin"]);
    other.restore(JSON.parse(JSON.stringify(before.snapshot())));
    expect(other.snapshot()).toEqual(new PoolStats(["round_robin"]).snapshot());
  });
});

describe("PoolStats: retried attempts", () => {
  it("an attempt retried elsewhere is neither a client request nor an error; the retry's end is", () => {
    const stats = new PoolStats(["prefix_aware"]);
    // One client request: a first attempt that timed out and was retried, then its retry that completed.
    const first = stats.routed({ arm: 0, decision: decision("b0") }, 64);
    stats.ended(0, first, { ok: false, failure: "timeout", retried: true });
    const retry = stats.routed({ arm: 0, decision: decision("b1") }, 64);
    stats.ended(0, retry, { ok: true, durationMs: 50 });
    // Another whose retry was refused: its failure is the client's answer.
    const lone = stats.routed({ arm: 0, decision: decision("b2") }, 64);
    stats.ended(0, lone, { ok: false, failure: "timeout" });
    const a = stats.snapshot().arms[0]!;
    expect(a).toMatchObject({ routed: 3, completed: 1, failed: 1, retried: 1 });
  });
});
