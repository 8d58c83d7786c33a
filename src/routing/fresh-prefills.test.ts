import { describe, expect, it } from "vitest";
import { FreshPrefills } from "./fresh-prefills";

describe("FreshPrefills", () => {
  it("counts another prefix computed from scratch until its predicted end or its completion", () => {
    const f = new FreshPrefills();
    f.add(0, 7, 100);
    // Its own prefix is not another one, here or as a copy elsewhere.
    expect(f.othersPending(7, 10)).toBe(false);
    f.add(3, 7, 120);
    expect(f.othersPending(7, 10)).toBe(false);
    expect(f.othersPending(9, 10)).toBe(true);
    // Past the predicted end of both: computed.
    expect(f.othersPending(9, 120)).toBe(false);
  });

  it("forgets a request that completed before its predicted end, and only that one", () => {
    const f = new FreshPrefills();
    f.add(1, 5, 200);
    f.add(2, 5, 300);
    f.done(1, 5, 200);
    expect(f.othersPending(9, 50)).toBe(true);
    f.done(2, 5, 300);
    expect(f.othersPending(9, 50)).toBe(false);
    // A done() that matches nothing changes nothing.
    f.add(0, 6, 400);
    f.done(0, 6, 399);
    expect(f.othersPending(9, 50)).toBe(true);
    f.reset();
    expect(f.othersPending(9, 50)).toBe(false);
  });
});
