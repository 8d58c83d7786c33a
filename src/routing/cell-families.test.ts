import { describe, expect, it } from "vitest";
import { RecentFamilies, RelayedFamilies, relayCellFamilies } from "./cell-families";
import { CELL_RELAY_FAMILIES } from "./defaults";

describe("RecentFamilies (a cell's side)", () => {
  it("keeps the last CELL_RELAY_FAMILIES keys it was told of, oldest first, without repeats", () => {
    const cell = new RecentFamilies();
    for (let i = 0; i < CELL_RELAY_FAMILIES + 3; i++) relayCellFamilies(cell, i);
    relayCellFamilies(cell, CELL_RELAY_FAMILIES + 2);
    const wire = relayCellFamilies(cell, undefined);
    expect(wire).toEqual(Array.from({ length: CELL_RELAY_FAMILIES }, (_, i) => i + 3));
    // The response is a copy: a caller's change does not reach the cell.
    wire.push(-1);
    expect(cell.toWire()).toHaveLength(CELL_RELAY_FAMILIES);
  });

  it("ignores a malformed key: the relay is a hint and never fails a route", () => {
    const cell = new RecentFamilies(4);
    for (const bad of ["7", Number.NaN, Number.POSITIVE_INFINITY, null, {}]) relayCellFamilies(cell, bad);
    expect(cell.toWire()).toEqual([]);
  });
});

describe("RelayedFamilies (an isolate's side)", () => {
  it("holds at most its capacity, the least recently heard of forgotten first", () => {
    const seen = new RelayedFamilies(3);
    seen.learn([1, 2, 3]);
    seen.learn([1, 4]);
    expect(seen.size).toBe(3);
    expect([1, 2, 3, 4].map((k) => seen.has(k))).toEqual([true, false, true, true]);
  });

  it("skips malformed entries and reads no more than its capacity from one response", () => {
    const seen = new RelayedFamilies(2);
    seen.learn(["x", 5, Number.NaN, 6, 7]);
    expect(seen.size).toBe(1);
    expect(seen.has(5)).toBe(true);
  });
});
