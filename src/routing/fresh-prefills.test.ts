import { describe, expect, it } from "vitest";
import { FreshPrefills } from "./fresh-prefills";

describe("FreshPrefills", () => {
  it("counts another prefix computed from scratch until its predicted end or its completion", () => {
    const f = new FreshPrefills();
    f.add(0, 7, 100);
    // Its own prefix is not another one, here or as a copy elsewhere.
    expect(f.othersPending(7, 10)).toBe(0);
    f.add(3, 7, 120);
    expect(f.othersPending(7, 10)).toBe(0);
    expect(f.othersPending(9, 10)).toBe(1);
    // Past the predicted end of both: computed.
    expect(f.othersPending(9, 120)).toBe(0);
  });

  it("counts other prefixes, not requests: a prefix and its copy are one", () => {
    const f = new FreshPrefills();
    f.add(0, 7, 100);
    f.add(3, 7, 120);
    f.add(1, 8, 110);
    expect(f.othersPending(9, 10)).toBe(2);
    expect(f.othersPending(7, 10)).toBe(1);
    expect(f.othersPending(8, 10)).toBe(1);
    // Prefix 8's prefill computed: only prefix 7 (on two backends) is left.
    expect(f.othersPending(9, 110)).toBe(1);
  });

  it("forgets a request that completed before its predicted end, and only that one", () => {
    const f = new FreshPrefills();
    f.add(1, 5, 200);
    f.add(2, 5, 300);
    f.done(1, 5, 200);
    expect(f.othersPending(9, 50)).toBe(1);
    f.done(2, 5, 300);
    expect(f.othersPending(9, 50)).toBe(0);
    // A done() that matches nothing changes nothing.
    f.add(0, 6, 400);
    f.done(0, 6, 399);
    expect(f.othersPending(9, 50)).toBe(1);
    f.reset();
    expect(f.othersPending(9, 50)).toBe(0);
  });
});
