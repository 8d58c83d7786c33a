import { describe, expect, it } from "vitest";
import { blockKeysFromIds, chainSeed } from "../prefix/block-keys";
import { holdBack } from "./admission-view";
import { Router } from "./router";
import { seededRandom } from "./seeded-random";
import type { BackendSpec, RouteRequest } from "./types";

describe("holdBack", () => {
  const INF = Number.POSITIVE_INFINITY;
  it("holds back the candidates that wait for memory when another admits the request now", () => {
    const costs = Float64Array.of(0, 0, INF, 0);
    expect(holdBack(costs, Float64Array.of(4_000, 0, 9_000, 250))).toBe(2);
    expect([...costs]).toEqual([INF, 0, INF, INF]);
  });

  it("holds back nothing when every candidate waits for memory (or none does)", () => {
    const all = Float64Array.of(0, 0, INF);
    expect(holdBack(all, Float64Array.of(4_000, 100, 0))).toBe(0);
    expect([...all]).toEqual([0, 0, INF]);
    const none = Float64Array.of(0, 0);
    expect(holdBack(none, Float64Array.of(0, 0))).toBe(0);
    expect([...none]).toEqual([0, 0]);
  });
});

describe("prefix_aware with the admission view", () => {
  const FLEET: BackendSpec[] = ["g0", "g1"].map((id) => ({ id, weight: 1, kvCacheTokens: 120_000 }));
  const SEED = chainSeed("m", "tenant-a");
  const prompt = (id: number, promptTokens: number): RouteRequest => ({
    blocks: blockKeysFromIds([id * 10, id * 10 + 1, id * 10 + 2, id * 10 + 3], SEED),
    promptTokens,
  });

  /**
   * A prefix_aware Router on FLEET after ten short requests 100 ms apart, each decoding ~5 s, so both
   * backends have learned their decode time (and, with `usageOf`, the Worker's error past the window:
   * every prompt here has four keys, so every one runs past the window, as Mooncake's long prompts do).
   */
  const warmed = (usageOf?: (estimate: number) => number) => {
    const router = new Router(FLEET, { policy: "prefix_aware" });
    const random = seededRandom(1);
    const ctx = (now: number) => ({ now, random });
    const seen = new Set<string>();
    for (let k = 0; k < 10; k++) {
      const { decision, ticket } = router.route(prompt(k + 1, 200), ctx(k * 100));
      seen.add(decision.backendId);
      router.complete(
        ticket,
        {
          ok: true,
          ...(usageOf !== undefined ? { promptTokens: usageOf(200) } : {}),
          cachedTokens: 0,
          ttftMs: 50,
        },
        ctx(k * 100 + 5_000),
      );
    }
    expect(seen.size, "both backends saw completions").toBe(2);
    return { router, ctx };
  };

  it("places a prompt that would wait for memory where it fits, though it starts later there", () => {
    const { router, ctx } = warmed();
    // An 80k-token prompt on an idle fleet: 8 s of prefill at the default 10,000 tok/s, then ~5 s of decode.
    const l1 = router.route(prompt(100, 80_000), ctx(6_000));
    const a = l1.decision.backendId;
    // A 45k-token prompt 8.9 s later: on A it would wait for L1's memory, so it goes to B (4.5 s queued).
    const l2 = router.route(prompt(101, 45_000), ctx(14_900));
    expect(l2.decision.backendId, "L2 avoids the full engine").not.toBe(a);
    // A 60k-token prompt at 15 s: on A nothing is queued, but it waits ~4 s for L1's KV (80k + 60k > 120k)
    // and ~6 s to prefill; on B it fits (45k + 60k) and waits 4.4 s behind L2. Its own first token is
    // ~0.3 s sooner on A, but there the FCFS queue would be blocked for ~4 s behind it, and B admits it
    // now (the admission view): it goes to B.
    const l3 = router.route(prompt(102, 60_000), ctx(15_000));
    expect(l3.decision.backendId).toBe(l2.decision.backendId);
  });

  /**
   * Where a 38k-token prompt goes when by the Worker's count it just fits on the engine that starts it now,
   * after completions whose usage.prompt_tokens was `usageOf(estimate)` (the learned margin,
   * ./estimate-margin.ts).
   */
  const placeTight = (usageOf: (estimate: number) => number) => {
    const { router, ctx } = warmed(usageOf);
    // An 80k-token prompt on an idle fleet: 8 s of prefill, then ~5 s of decode (A holds 80k until ~19 s).
    const a = router.route(prompt(100, 80_000), ctx(6_000)).decision.backendId;
    // A 30k-token prompt once A's prefill is done: to B (A's 80k weigh).
    const b = router.route(prompt(101, 30_000), ctx(14_100)).decision.backendId;
    expect(b).not.toBe(a);
    // 38k at 14.2 s: on A it starts now and by the Worker's count fits (80k + 38k of 120k); on B it waits
    // ~2.9 s behind the 30k prompt, with 52k spare.
    const c = router.route(prompt(102, 38_000), ctx(14_200)).decision.backendId;
    return { a, b, c, router };
  };

  it("holds back the engine where the Worker's learned undercount past the window leaves no room", () => {
    // The Worker has counted 30% low past the window: on A, 80k + 38k are ~35k more than it thinks.
    const { b, c } = placeTight((est) => Math.round(64 + (est - 64) * 1.3));
    expect(c).toBe(b);
  });

  it("shows each backend's learned error in the Router's stats, for the operator", () => {
    expect(
      new Router(FLEET, { policy: "prefix_aware" }).stats().backends.map((b) => b.promptEstimateError),
    ).toEqual([undefined, undefined]);
    const { router } = placeTight((est) => Math.round(64 + (est - 64) * 1.3));
    for (const b of router.stats().backends) {
      expect(b.promptEstimateError!.samples).toBeGreaterThan(0);
      expect(b.promptEstimateError!.mean).toBeCloseTo(0.3, 2);
      expect(b.promptEstimateError!.sd).toBeLessThan(0.01);
    }
    const plain = new Router(FLEET, { policy: "least_outstanding" });
    expect(plain.stats().backends.every((b) => b.promptEstimateError === undefined)).toBe(true);
  });

  it("changes nothing where the Worker counted exactly or high (one-sided)", () => {
    const exact = placeTight((est) => est);
    expect(exact.c).toBe(exact.a);
    const high = placeTight((est) => Math.round(64 + (est - 64) * 0.8));
    expect(high.c).toBe(high.a);
  });
});
