import { describe, expect, it } from "vitest";
import { BoundedSet } from "./bounded-set";

describe("BoundedSet", () => {
  it("holds at most its capacity, forgetting the least recently added first", () => {
    const s = new BoundedSet<string>(3);
    for (const x of ["a", "b", "c", "d"]) s.add(x);
    expect(s.size).toBe(3);
    expect(["a", "b", "c", "d"].map((x) => s.has(x))).toEqual([false, true, true, true]);
  });

  it("adding an item it holds makes it the most recent, with no growth", () => {
    const s = new BoundedSet<number>(3);
    for (const x of [1, 2, 3, 1]) s.add(x);
    expect(s.size).toBe(3);
    s.add(4);
    expect([1, 2, 3, 4].map((x) => s.has(x))).toEqual([true, false, true, true]);
  });
});
