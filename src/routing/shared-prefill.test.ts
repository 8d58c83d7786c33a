import { describe, expect, it } from "vitest";
import { SharedPrefill } from "./shared-prefill";

describe("SharedPrefill", () => {
  it("sums the uncached tokens still predicted in prefill, per backend and reuse key", () => {
    const owed = new SharedPrefill();
    owed.reset(2);
    owed.add(0, 7, 100, 50);
    owed.add(0, 7, 40, 80);
    owed.add(0, 8, 1000, 80);
    owed.add(1, 7, 500, 80);
    expect(owed.queuedTokens(0, 7, 0)).toBe(140);
    // The first one's prefill is predicted done at 50: it owes nothing more, though still in flight.
    expect(owed.queuedTokens(0, 7, 50)).toBe(40);
    expect(owed.queuedTokens(0, 7, 80)).toBe(0);
    expect(owed.queuedTokens(1, 7, 0)).toBe(500);
    expect(owed.queuedTokens(0, 9, 0)).toBe(0);
  });

  it("takes a completed request off, once, and ignores one added before a reset", () => {
    const owed = new SharedPrefill();
    owed.reset(1);
    const g = owed.add(0, 7, 100, 50);
    owed.add(0, 7, 100, 50);
    owed.remove(0, 7, 100, 50, g);
    expect(owed.queuedTokens(0, 7, 0)).toBe(100);
    owed.remove(0, 7, 100, 50, g);
    owed.remove(0, 7, 100, 50, g);
    expect(owed.queuedTokens(0, 7, 0)).toBe(0);
    const old = owed.add(0, 7, 30, 50);
    owed.reset(1);
    owed.add(0, 7, 30, 50);
    owed.remove(0, 7, 30, 50, old);
    expect(owed.queuedTokens(0, 7, 0)).toBe(30);
  });
});
