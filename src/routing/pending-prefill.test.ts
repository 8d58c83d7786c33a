import { describe, expect, it } from "vitest";
import { PendingPrefill } from "./pending-prefill";

describe("PendingPrefill", () => {
  it("holds a request's new blocks until its prefill's predicted end", () => {
    const p = new PendingPrefill();
    p.reset(2);
    p.add(0, [1, 2, 3, 4], 2, 100);
    expect(p.isPending(0, 3, 50)).toBe(true);
    expect(p.isPending(0, 4, 99)).toBe(true);
    expect(p.isPending(0, 4, 100)).toBe(false);
    // Blocks the backend already held, and other backends, are not pending.
    expect(p.isPending(0, 2, 50)).toBe(false);
    expect(p.isPending(1, 3, 50)).toBe(false);
  });

  it("forgets a completed request's blocks, unless a later request computes them again", () => {
    const p = new PendingPrefill();
    p.reset(1);
    p.add(0, [1, 2, 3], 0, 100);
    p.add(0, [1, 2, 3, 9], 2, 150);
    p.done(0, [1, 2, 3], 0, 100);
    expect(p.isPending(0, 1, 10)).toBe(false);
    expect(p.isPending(0, 3, 10)).toBe(true);
    expect(p.isPending(0, 9, 10)).toBe(true);
    p.done(0, [1, 2, 3, 9], 2, 150);
    expect(p.isPending(0, 3, 10)).toBe(false);
  });

  it("starts empty after a reset (the backend list changed)", () => {
    const p = new PendingPrefill();
    p.reset(1);
    p.add(0, [5], 0, 1e9);
    p.reset(1);
    expect(p.isPending(0, 5, 0)).toBe(false);
  });
});
