import { describe, expect, it } from "vitest";
import { EstimateMargin, MARGIN_SDS } from "./estimate-margin";

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
    const g = m.routed(0, 30_000);
    m.routed(0, 40_000);
    const want = 0.2 * 120_000 + MARGIN_SDS * 0.1 * Math.sqrt(30_000 ** 2 + 40_000 ** 2 + 50_000 ** 2);
    expect(m.marginTokens(0, 50_000)).toBeCloseTo(want, 6);
    m.released(0, 40_000, g);
    m.released(0, 30_000, g);
    expect(m.marginTokens(0, 0), "all released: nothing in flight").toBe(0);
  });

  it("a request routed before the backends changed is not taken off the new counts", () => {
    const m = new EstimateMargin();
    m.reset(1);
    m.observe(0, 10_000, 42_000, 44_000);
    m.observe(0, 10_000, 42_000, 44_000);
    const old = m.routed(0, 30_000);
    m.reset(1); // the backend list changed
    m.observe(0, 10_000, 42_000, 44_000);
    const now = m.routed(0, 20_000);
    const before = m.marginTokens(0, 0);
    expect(before).toBeGreaterThan(0);
    m.released(0, 30_000, old);
    expect(m.marginTokens(0, 0), "the new request still in flight counts whole").toBe(before);
    m.released(0, 20_000, now);
    expect(m.marginTokens(0, 0)).toBe(0);
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
