import { describe, expect, it } from "vitest";
import { PrefillCostModel } from "./cost-model";
import { prefillExternalityMs } from "./prefill-externality";

describe("prefillExternalityMs", () => {
  it("charges each waiting request the prefill, and arrivals during it half of it each", () => {
    // 3 waiting: 3 × 60; arrivals at 0.01/ms over 60 ms: 0.6 of them, 30 ms each on average.
    expect(prefillExternalityMs(60, 3, 0.01)).toBeCloseTo(3 * 60 + (0.01 * 60 * 60) / 2, 9);
  });

  it("grows with the square of the prefill: a short suffix costs others almost nothing", () => {
    const short = prefillExternalityMs(4, 0, 0.005);
    const full = prefillExternalityMs(60, 0, 0.005);
    expect(full / short).toBeCloseTo(225, 6);
    expect(short).toBeLessThan(0.05);
  });

  it("is 0 with no prefill, and never negative", () => {
    expect(prefillExternalityMs(0, 5, 1)).toBe(0);
    expect(prefillExternalityMs(10, -1, -1)).toBe(0);
  });
});

describe("PrefillCostModel.externalityMs", () => {
  const fleet = [
    { id: "a", weight: 1, kvCacheTokens: 100_000 },
    { id: "b", weight: 1, kvCacheTokens: 100_000 },
  ];
  function model(): PrefillCostModel {
    const m = new PrefillCostModel({ defaultPrefillTokensPerSec: 10_000, kvWeight: 0, decodeMsPerInflight: 0 });
    m.setBackends(fleet);
    return m;
  }

  it("counts our requests predicted still prefilling, and none arriving before a completion was seen", () => {
    const m = model();
    m.routed(0, 1_000, 0, 0, 0); // prefill until 100 ms at 10 tok/ms
    m.routed(0, 1_000, 0, 1, 0); // until 200 ms
    // A 500-token prefill (50 ms) at t = 150: one of ours still prefills there, none expected to arrive.
    expect(m.externalityMs(0, 500, 2, 150)).toBeCloseTo(50, 9);
    expect(m.externalityMs(1, 500, 0, 150)).toBe(0);
  });

  it("expects arrivals at the rate Little's law gives: in flight ÷ residence", () => {
    const m = model();
    const s = m.routed(0, 1_000, 0, 0, 0);
    m.released(0, s, 2_000); // residence 2,000 ms
    // 10 in flight over a 2 s stay: 0.005 arrivals/ms; a 1,000-token prefill (100 ms), none waiting.
    expect(m.externalityMs(0, 1_000, 10, 5_000)).toBeCloseTo((0.005 * 100 * 100) / 2, 9);
    // The same backend busier by twice as many requests: twice the charge.
    expect(m.externalityMs(0, 1_000, 20, 5_000)).toBeCloseTo(0.005 * 100 * 100, 9);
  });
});
