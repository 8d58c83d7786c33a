import { describe, expect, it } from "vitest";
import { SharedPrefixes } from "./shared-prefixes";

describe("SharedPrefixes", () => {
  it("counts in-flight requests per backend and reuse key until each completes", () => {
    const s = new SharedPrefixes();
    s.reset(2);
    const g1 = s.add(0, 11);
    const g2 = s.add(0, 11);
    s.add(1, 11);
    expect(s.sharers(0, 11)).toBe(2);
    expect(s.sharers(1, 11)).toBe(1);
    expect(s.sharers(0, 12)).toBe(0);
    s.remove(0, 11, g1);
    expect(s.sharers(0, 11)).toBe(1);
    s.remove(0, 11, g2);
    s.remove(0, 11, g2); // a second removal never goes below zero
    expect(s.sharers(0, 11)).toBe(0);
  });

  it("a request counted before the backend list changed is not taken off the new counts", () => {
    const s = new SharedPrefixes();
    s.reset(2);
    const old = s.add(0, 7);
    s.reset(2); // indices now mean other backends
    s.add(0, 7);
    s.remove(0, 7, old);
    expect(s.sharers(0, 7)).toBe(1);
  });
});
