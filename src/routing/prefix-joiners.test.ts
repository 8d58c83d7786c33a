import { describe, expect, it } from "vitest";
import { PrefixJoiners } from "./prefix-joiners";

describe("PrefixJoiners", () => {
  it("counts a joiner on its backend until the prefill it joined is predicted to end", () => {
    const j = new PrefixJoiners();
    j.reset(2);
    j.add(0, 100);
    j.add(0, 150);
    expect(j.waiting(0, 50)).toBe(2);
    expect(j.waiting(0, 100)).toBe(1);
    expect(j.waiting(0, 150)).toBe(0);
    expect(j.waiting(1, 50)).toBe(0);
  });

  it("forgets a joiner when it completes, and everything on a reset", () => {
    const j = new PrefixJoiners();
    j.reset(1);
    const a = j.add(0, 100);
    j.add(0, 100);
    j.remove(0, a);
    expect(j.waiting(0, 0)).toBe(1);
    j.remove(0, a); // twice: no effect
    expect(j.waiting(0, 0)).toBe(1);
    j.reset(1);
    expect(j.waiting(0, 0)).toBe(0);
  });
});
