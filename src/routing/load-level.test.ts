import { describe, expect, it } from "vitest";
import { LoadLevel } from "./load-level";

describe("LoadLevel", () => {
  it("the first value stands for the past before it", () => {
    const l = new LoadLevel(1000);
    l.set(5, 100);
    expect(l.read(100)).toBe(5);
    expect(l.read(10_000)).toBe(5);
  });

  it("moves toward a new value by 1 − e^(−Δ/τ) over Δ", () => {
    const l = new LoadLevel(1000);
    l.set(0, 0);
    l.set(10, 0);
    expect(l.read(0)).toBe(0);
    expect(l.read(1000)).toBeCloseTo(10 * (1 - Math.exp(-1)), 9);
    expect(l.read(20_000)).toBeCloseTo(10, 6);
  });

  it("a burst shorter than τ moves it little; a sustained load moves it all the way", () => {
    const burst = new LoadLevel(1000);
    burst.set(10, 0);
    burst.set(30, 1000);
    burst.set(10, 1050);
    expect(burst.read(1050)).toBeLessThan(11.1);
    const sustained = new LoadLevel(1000);
    sustained.set(10, 0);
    sustained.set(30, 1000);
    expect(sustained.read(6000)).toBeGreaterThan(29.8);
  });

  it("is the fading time average of a piecewise-constant load, whatever the order of the steps", () => {
    const tau = 200;
    const l = new LoadLevel(tau);
    l.set(2, 0);
    l.set(4, 0);
    l.set(0, 100);
    l.set(6, 300);
    // ∫ v(s) e^(−(t−s)/τ) ds / τ from −∞ (2 before 0) to 400, step by step by hand.
    const decay = (ms: number) => Math.exp(-ms / tau);
    const at100 = 4 + (2 - 4) * decay(100);
    const at300 = 0 + (at100 - 0) * decay(200);
    const at400 = 6 + (at300 - 6) * decay(100);
    expect(l.read(400)).toBeCloseTo(at400, 12);
    // The same by numeric integration of the load over a fine grid.
    const v = (s: number) => (s < 0 ? 2 : s < 100 ? 4 : s < 300 ? 0 : 6);
    let num = 2 * decay(400 + 5000);
    for (let s = -5000; s < 400; s += 0.05) num += (v(s) * 0.05 * decay(400 - s)) / tau;
    expect(l.read(400)).toBeCloseTo(num, 2);
  });

  it("with τ = 0 it is the count itself", () => {
    const l = new LoadLevel(0);
    l.set(3, 0);
    l.set(7, 5);
    expect(l.read(5)).toBe(7);
  });

  it("refuses a negative or non-finite time constant", () => {
    expect(() => new LoadLevel(-1)).toThrow(RangeError);
    expect(() => new LoadLevel(Number.NaN)).toThrow(RangeError);
    expect(() => new LoadLevel(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });

  it("never goes back in time: an earlier time counts as the last", () => {
    const l = new LoadLevel(1000);
    l.set(0, 1000);
    l.set(10, 500);
    expect(l.read(1000)).toBe(0);
    expect(l.read(2000)).toBeCloseTo(10 * (1 - Math.exp(-1)), 9);
  });
});
