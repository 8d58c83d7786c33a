import { describe, expect, it } from "vitest";
import { blockKeysFromIds, chainSeed } from "../prefix/block-keys";
import { EstimateMargin, MARGIN_SDS } from "./estimate-margin";
import { Router } from "./router";
import { seededRandom } from "./seeded-random";
import type { BackendSpec, RouteRequest } from "./types";

describe("EstimateMargin", () => {
  it("is 0 before any error is seen, and 0 where nothing in flight ran past the window", () => {
    const m = new EstimateMargin();
    m.reset(2);
    m.routed(0, 10_000);
    expect(m.marginTokens(0, 5_000), "no evidence, no margin").toBe(0);
    m.observe(1, 1_000, 33_000, 33_200); // backend 1 undercounted by 20% of its tail
    expect(m.marginTokens(0, 5_000), "learned per backend").toBe(0);
    expect(m.marginTokens(1, 0), "nothing cut in flight on 1, none in this request").toBe(0);
    expect(m.marginTokens(1, 1_000)).toBeCloseTo(200, 6);
  });

  it("grows with the errors seen and the tails in flight: mu * sum t + k * sd * sqrt(sum t^2)", () => {
    const m = new EstimateMargin();
    m.reset(1);
    // Relative errors 0.1 and 0.3: mean 0.2, sd 0.1.
    m.observe(0, 10_000, 42_000, 43_000);
    m.observe(0, 10_000, 42_000, 45_000);
    const e = m.errors(0)!;
    expect(e.mean).toBeCloseTo(0.2, 9);
    expect(e.sd).toBeCloseTo(0.1, 9);
    m.routed(0, 30_000);
    m.routed(0, 40_000);
    const want = 0.2 * 120_000 + MARGIN_SDS * 0.1 * Math.sqrt(30_000 ** 2 + 40_000 ** 2 + 50_000 ** 2);
    expect(m.marginTokens(0, 50_000)).toBeCloseTo(want, 6);
    m.released(0, 40_000);
    m.released(0, 30_000);
    expect(m.marginTokens(0, 0), "all released: nothing in flight").toBe(0);
  });

  it("is one-sided: a Worker that overcounts leaves no margin", () => {
    const m = new EstimateMargin();
    m.reset(1);
    for (let k = 0; k < 10; k++) m.observe(0, 10_000, 42_000, 40_000);
    m.routed(0, 30_000);
    expect(m.marginTokens(0, 30_000)).toBe(0);
  });

  it("weighs recent completions: an old error fades", () => {
    const m = new EstimateMargin();
    m.reset(1);
    for (let k = 0; k < 20; k++) m.observe(0, 10_000, 42_000, 46_000);
    for (let k = 0; k < 400; k++) m.observe(0, 10_000, 42_000, 42_000);
    expect(m.errors(0)!.mean).toBeLessThan(0.01);
  });
});

describe("prefix_aware with the learned margin", () => {
  const FLEET: BackendSpec[] = ["g0", "g1"].map((id) => ({ id, weight: 1, kvCacheTokens: 120_000 }));
  const SEED = chainSeed("m", "tenant-lm");
  // Four 16-token keys: every prompt below runs past this window, as Mooncake's long prompts run past 32k.
  const prompt = (id: number, promptTokens: number): RouteRequest => ({
    blocks: blockKeysFromIds([id * 10, id * 10 + 1, id * 10 + 2, id * 10 + 3], SEED),
    promptTokens,
  });

  /**
   * Where a 38k-token prompt goes when by the Worker's count it just fits on the engine that starts it now,
   * after completions whose usage.prompt_tokens was `usageOf(estimate)`.
   */
  const placeTight = (usageOf: (estimate: number) => number) => {
    const router = new Router(FLEET, { policy: "prefix_aware" });
    const random = seededRandom(1);
    const ctx = (now: number) => ({ now, random });
    // Ten short requests 100 ms apart, each decoding ~5 s: both backends learn their decode time and the
    // Worker's error past the window.
    const seen = new Set<string>();
    for (let k = 0; k < 10; k++) {
      const { decision, ticket } = router.route(prompt(k + 1, 200), ctx(k * 100));
      seen.add(decision.backendId);
      router.complete(
        ticket,
        { ok: true, promptTokens: usageOf(200), cachedTokens: 0, ttftMs: 50 },
        ctx(k * 100 + 5_000),
      );
    }
    expect(seen.size, "both backends saw completions").toBe(2);
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
