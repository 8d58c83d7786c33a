import { describe, expect, it } from "vitest";
import {
  RecentFamilies,
  RecentSplits,
  RelayedFamilies,
  RelayedSplits,
  relayCellFamilies,
  relayCellSplits,
} from "./cell-families";
import { CELL_RATE_HALF_LIFE_MS, CELL_RELAY_FAMILIES, CELL_RELAY_SPLITS } from "./defaults";

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

describe("split decisions", () => {
  it("a cell keeps the last CELL_RELAY_SPLITS, the latest hearing of each, and relays them with their ages within the TTL", () => {
    const cell = new RecentSplits();
    for (let i = 0; i <= CELL_RELAY_SPLITS; i++) relayCellSplits(cell, [i, 10 + i], 100 * i);
    // Key 1 heard again: it moves to the end with its new time; key 0 was pushed out.
    const now = 100 * CELL_RELAY_SPLITS + 50;
    relayCellSplits(cell, [1, 11], now);
    const wire = cell.toWire(now);
    expect(wire.length).toBe(3 * CELL_RELAY_SPLITS);
    expect(wire.slice(0, 3)).toEqual([2, 12, now - 200]);
    expect(wire.slice(-3)).toEqual([1, 11, 0]);
    // Malformed claims are ignored; decisions not heard again for the TTL are dropped.
    for (const bad of [[1], ["x", 3], [5, -1], [5, 1.5], "5,3"]) relayCellSplits(cell, bad, now);
    expect(cell.toWire(now)).toEqual(wire);
    expect(cell.toWire(now + CELL_RATE_HALF_LIFE_MS)).toEqual([1, 11, CELL_RATE_HALF_LIFE_MS]);
  });

  it("an isolate holds a relayed decision for the TTL from when its cell heard it, at most CELL_RELAY_SPLITS", () => {
    const seen = new RelayedSplits();
    seen.learn([7, 32, 500], 1_000);
    expect(seen.splitAt(7, 1_000)).toBe(32);
    expect(seen.splitAt(7, 500 + CELL_RATE_HALF_LIFE_MS)).toBe(32);
    expect(seen.splitAt(7, 501 + CELL_RATE_HALF_LIFE_MS)).toBeUndefined();
    // An older hearing never replaces a fresher one; junk is skipped.
    seen.learn([7, 40, 900, "x", 1, 0, 8, 1, -1], 1_000);
    expect(seen.splitAt(7, 1_000)).toBe(32);
    expect(seen.splitAt(8, 1_000)).toBeUndefined();
    const many: number[] = [];
    for (let i = 0; i < 3 * CELL_RELAY_SPLITS; i++) many.push(100 + i, 4, 0);
    seen.learn(many, 2_000);
    let held = 0;
    for (let i = 0; i < 3 * CELL_RELAY_SPLITS; i++) if (seen.splitAt(100 + i, 2_000) !== undefined) held++;
    expect(held).toBeLessThanOrEqual(CELL_RELAY_SPLITS);
  });
});
