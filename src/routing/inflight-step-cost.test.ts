import { describe, expect, it } from "vitest";
import { InflightStepCost } from "./inflight-step-cost";

/** A deterministic engine: a step of `base` + `perRequest` ms per request in flight, ± a jitter that is not random. */
function feed(c: InflightStepCost, count: number, base: number, perRequest: number, spread = 10): void {
  for (let k = 0; k < count; k++) {
    const inflight = 1 + (k % spread);
    const jitter = ((k * 7919) % 11) / 10 - 0.5; // −0.5..+0.5 ms, uncorrelated with the count
    const step = base + perRequest * inflight + jitter;
    const output = 50 + (k % 5) * 20;
    c.observe(inflight, step * (output - 1), output);
  }
}

describe("InflightStepCost", () => {
  it("has no figure until it has seen enough completions", () => {
    const c = new InflightStepCost(32);
    feed(c, 31, 7, 0.15);
    expect(c.msPerRequest()).toBeUndefined();
    feed(c, 1, 7, 0.15);
    expect(c.seen).toBe(32);
    expect(c.msPerRequest()).toBeDefined();
  });

  it("learns the step time one more request adds: the slope, not the step", () => {
    const dense = new InflightStepCost(32);
    feed(dense, 400, 7, 0.15);
    expect(dense.msPerRequest()!).toBeCloseTo(0.15, 1);
    const moe = new InflightStepCost(32);
    feed(moe, 400, 26, 0.4);
    expect(moe.msPerRequest()!).toBeGreaterThan(0.3);
    expect(moe.msPerRequest()!).toBeLessThan(0.5);
  });

  it("follows a backend whose cost changes (a window, not the whole history)", () => {
    const c = new InflightStepCost(32);
    feed(c, 400, 7, 0.1);
    feed(c, 400, 7, 1);
    expect(c.msPerRequest()!).toBeGreaterThan(0.8);
  });

  it("says nothing while the counts it saw spread by less than one request", () => {
    const c = new InflightStepCost(32);
    feed(c, 400, 7, 0.15, 1); // always 1 in flight: no slope to see
    expect(c.msPerRequest()).toBeUndefined();
  });

  it("keeps its last figure through a window whose counts stop spreading (a drain, a steady load)", () => {
    const c = new InflightStepCost(32);
    feed(c, 400, 7, 0.15);
    feed(c, 400, 7, 0.15, 1); // one request at a time for a long while: the spread decays away
    expect(c.msPerRequest()!).toBeCloseTo(0.15, 1);
  });

  it("is bounded: never below 0, never above the mean step over the mean count", () => {
    const falling = new InflightStepCost(8);
    feed(falling, 100, 30, -2);
    expect(falling.msPerRequest()).toBe(0);
    // Steps that grow faster than in proportion to the count (noise, or prefills that landed on the busy
    // samples): a least-squares slope of 29.7 ms, capped where a line through 0 would be. (A window as long
    // as the run, so its means are the plain ones: mean step 25.75 ms at a mean count of 2.5.)
    const steep = new InflightStepCost(100);
    for (let k = 0; k < 100; k++) {
      const inflight = 1 + (k % 4);
      steep.observe(inflight, (inflight === 4 ? 100 : 1) * 9, 10);
    }
    expect(steep.msPerRequest()!).toBeCloseTo(25.75 / 2.5, 6);
  });

  it("ignores responses with no decode step after the first token, and invalid figures", () => {
    const c = new InflightStepCost(2);
    c.observe(3, 100, 1);
    c.observe(3, Number.NaN, 10);
    c.observe(0, 100, 10);
    c.observe(3, -1, 10);
    expect(c.seen).toBe(0);
  });

  it("fails loudly on a window that cannot learn", () => {
    expect(() => new InflightStepCost(1)).toThrow(RangeError);
    expect(() => new InflightStepCost(2.5)).toThrow(RangeError);
  });
});
