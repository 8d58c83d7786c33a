import { describe, expect, it } from "vitest";
import { runMs, StepCost, stepsWithin } from "./step-time";

describe("step time", () => {
  it("adds base, per-sequence, context and prefill costs", () => {
    const c = new StepCost({
      kvCacheTokens: 1024,
      maxModelLen: 1024,
      blockTokens: 16,
      maxRunning: 8,
      prefillTokensPerSec: 2000,
      decodeStepBaseMs: 5,
      decodeStepPerSeqMs: 0.5,
      decodeStepPerKTokenMs: 2,
    });
    // 5 + 4 × 0.5 + 2 × 3000/1000 + 100 tokens at 2 per ms
    expect(c.stepMs(4, 3000, 100)).toBeCloseTo(5 + 2 + 6 + 50, 12);
    expect(c.growthMs(4)).toBeCloseTo(0.008, 12);
    expect(c.prefillSeconds(2000)).toBeCloseTo(1, 12);
  });

  it("runs of steps that lengthen by b each: the time of k steps and its inverse", () => {
    // Steps of 10, 12, 14, 16 ms: ends at 10, 22, 36, 52.
    expect([0, 1, 2, 3, 4].map((k) => runMs(10, 2, k))).toEqual([0, 10, 22, 36, 52]);
    expect(stepsWithin(10, 2, 9.99)).toBe(0);
    expect(stepsWithin(10, 2, 10)).toBe(1);
    expect(stepsWithin(10, 2, 35.99)).toBe(2);
    expect(stepsWithin(10, 2, 36)).toBe(3);
    expect(stepsWithin(10, 0, 35)).toBe(3);
    expect(stepsWithin(10, 2, 0)).toBe(0);
    // The inverse holds on a long run and odd figures.
    const a = 6.9731;
    const b = 0.000_56;
    for (const k of [1, 7, 1000, 123_456]) {
      expect(stepsWithin(a, b, runMs(a, b, k))).toBe(k);
      expect(stepsWithin(a, b, runMs(a, b, k) - 1e-6)).toBe(k - 1);
    }
  });
});
