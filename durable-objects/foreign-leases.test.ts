import { describe, expect, it } from "vitest";
import { ForeignLeases } from "./foreign-leases";

describe("ForeignLeases", () => {
  it("remembers ended ids up to its bound, forgetting the oldest first", () => {
    const f = new ForeignLeases(3);
    for (const id of ["a", "b", "c"]) f.markEnded(id);
    f.markEnded("b"); // already there: no growth, no eviction
    expect(f.size).toBe(3);
    expect(f.hasEnded("a")).toBe(true);
    f.markEnded("d");
    expect(f.size).toBe(3);
    expect(f.hasEnded("a")).toBe(false);
    expect(["b", "c", "d"].every((id) => f.hasEnded(id))).toBe(true);
  });
});
