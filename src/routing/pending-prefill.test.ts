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

  it("counts our requests that joined a pending block, until that prefill ends", () => {
    const p = new PendingPrefill();
    p.reset(2);
    p.add(0, [1, 2, 3], 0, 100);
    expect(p.joinersOf(0, 3, 10)).toBe(0);
    p.joined(0, 3, 20);
    p.joined(0, 3, 30);
    expect(p.joinersOf(0, 3, 40)).toBe(2);
    // Not on another backend, not past the predicted end, and not for a block nobody computes.
    expect(p.joinersOf(1, 3, 40)).toBe(0);
    expect(p.joinersOf(0, 3, 100)).toBe(0);
    p.joined(0, 9, 20);
    expect(p.joinersOf(0, 9, 30)).toBe(0);
    // A join after the block was computed is no join.
    p.joined(0, 2, 150);
    expect(p.joinersOf(0, 2, 150)).toBe(0);
  });

  it("drops the joiners with the prefill they waited for: a new computation of the block starts afresh", () => {
    const p = new PendingPrefill();
    p.reset(1);
    p.add(0, [1, 2], 0, 100);
    p.joined(0, 2, 10);
    p.done(0, [1, 2], 0, 100);
    p.add(0, [1, 2], 0, 500);
    expect(p.joinersOf(0, 2, 300)).toBe(0);
    p.joined(0, 2, 300);
    expect(p.joinersOf(0, 2, 310)).toBe(1);
  });

  it("does not count an earlier computation's joiners for a later one still pending", () => {
    const p = new PendingPrefill();
    p.reset(1);
    p.add(0, [1, 2], 0, 100);
    p.joined(0, 2, 10);
    p.joined(0, 2, 20);
    // A later request re-adds the key with a later end (the first computation's request was not done()).
    p.add(0, [1, 2], 0, 400);
    p.joined(0, 2, 150);
    expect(p.joinersOf(0, 2, 160)).toBe(1);
  });

  it("starts empty after a reset (the backend list changed)", () => {
    const p = new PendingPrefill();
    p.reset(1);
    p.add(0, [5], 0, 1e9);
    p.reset(1);
    expect(p.isPending(0, 5, 0)).toBe(false);
  });
});
