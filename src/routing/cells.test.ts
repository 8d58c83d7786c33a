import { describe, expect, it } from "vitest";
import { assignCells, cellCount, cellMembers, indexBytes } from "./cells";
import { CELL_INDEX_BUDGET_BYTES, CELL_MAX_BACKENDS } from "./defaults";
import { seededRandom } from "./seeded-random";
import type { BackendSpec } from "./types";

const KV = 442_368;
const fleet = (n: number, prefix = "gpu-", weight = 1): BackendSpec[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, weight, kvCacheTokens: KV }));

/** Backends whose cell differs between two assignments, over the ids both fleets have. */
function moved(a: readonly BackendSpec[], ca: Int32Array, b: readonly BackendSpec[], cb: Int32Array): number {
  const before = new Map(a.map((x, i) => [x.id, ca[i]!]));
  let n = 0;
  b.forEach((x, i) => {
    const was = before.get(x.id);
    if (was !== undefined && was !== cb[i]) n++;
  });
  return n;
}

describe("assignCells", () => {
  it("K = 1 puts every backend in cell 0", () => {
    expect([...assignCells(fleet(5), 1)]).toEqual([0, 0, 0, 0, 0]);
  });

  it.each([
    [64, 2],
    [64, 4],
    [64, 8],
    [17, 2],
    [100, 7],
    [8, 8],
  ])("%i equal backends into %i cells: sizes differ by at most one, none empty", (n, k) => {
    const sizes = cellMembers(fleet(n), assignCells(fleet(n), k), k).map((m) => m.length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(1);
  });

  it("is a pure function of the fleet: the same cells whatever the order the backends are listed in", () => {
    const a = fleet(40);
    const b = [...a].reverse();
    const ca = assignCells(a, 4);
    const cb = assignCells(b, 4);
    expect(moved(a, ca, b, cb)).toBe(0);
  });

  it("weighted: cells hold equal weight to within one backend's weight, and no cell is empty", () => {
    const random = seededRandom(3);
    for (let trial = 0; trial < 50; trial++) {
      const backends = Array.from({ length: 48 }, (_, i) => ({
        id: `w-${trial}-${i}`,
        weight: 1 + Math.floor(random() * 4),
        kvCacheTokens: KV,
      }));
      const k = 2 + (trial % 6);
      const members = cellMembers(backends, assignCells(backends, k), k);
      const weights = members.map((m) => m.reduce((s, b) => s + b.weight, 0));
      const fair = weights.reduce((s, w) => s + w, 0) / k;
      for (const w of weights) expect(Math.abs(w - fair)).toBeLessThanOrEqual(4);
      expect(Math.min(...members.map((m) => m.length))).toBeGreaterThanOrEqual(1);
    }
  });

  it("one heavy backend never leaves a cell empty", () => {
    const backends = [{ id: "big", weight: 100, kvCacheTokens: KV }, ...fleet(3)];
    const sizes = cellMembers(backends, assignCells(backends, 4), 4).map((m) => m.length);
    expect(sizes).toEqual([1, 1, 1, 1]);
  });

  it.each([2, 4, 8])(
    "stability at K = %i over 64 backends: adding or removing one moves at most K − 1 others",
    (k) => {
      let worst = 0;
      let sum = 0;
      let trials = 0;
      for (let t = 0; t < 64; t++) {
        const base = fleet(64, `f${t}-`);
        const cells = assignCells(base, k);
        const added = [...base, { id: `f${t}-new`, weight: 1, kvCacheTokens: KV }];
        const removed = base.filter((_, i) => i !== t);
        for (const next of [added, removed]) {
          const m = moved(base, cells, next, assignCells(next, k));
          worst = Math.max(worst, m);
          sum += m;
          trials++;
        }
      }
      expect(worst).toBeLessThanOrEqual(k - 1);
      // Typically about half the boundaries shift: far from re-dealing the fleet.
      expect(sum / trials).toBeLessThanOrEqual(k / 2 + 0.5);
    },
  );

  it("rejects a cell count outside 1..backends", () => {
    expect(() => assignCells(fleet(3), 4)).toThrow(/cells: must be an integer within 1\.\.3/);
    expect(() => assignCells(fleet(3), 0)).toThrow(/cells/);
    expect(() => assignCells(fleet(3), 1.5)).toThrow(/cells/);
  });
});

describe("cellCount", () => {
  const input = (backends: BackendSpec[], cells: number | "auto", indexCopies = 1) => ({
    backends,
    cells,
    tokensPerKey: 64,
    indexCopies,
  });

  it(`auto: one cell up to ${CELL_MAX_BACKENDS} backends (today's single RouterDO), then one per ${CELL_MAX_BACKENDS}`, () => {
    expect(cellCount(input(fleet(1), "auto"))).toBe(1);
    expect(cellCount(input(fleet(16), "auto"))).toBe(1);
    expect(cellCount(input(fleet(17), "auto"))).toBe(2);
    expect(cellCount(input(fleet(64), "auto"))).toBe(4);
    expect(cellCount(input(fleet(1000), "auto"))).toBe(63);
  });

  it("auto: more cells when the affinity indexes would not fit one cell's memory budget", () => {
    // 8 backends of 32 M KV tokens each: 500k keys each at 64 tokens a key.
    const big = Array.from({ length: 8 }, (_, i) => ({
      id: `big-${i}`,
      weight: 1,
      kvCacheTokens: 32_000_000,
    }));
    const bytes = indexBytes(big, 64);
    expect(bytes).toBe(8 * 500_000 * 40);
    expect(cellCount(input(big, "auto"))).toBe(Math.ceil(bytes / CELL_INDEX_BUDGET_BYTES));
    // The shadow and an A/B arm triple the index.
    expect(cellCount(input(big, "auto", 3))).toBe(
      Math.min(8, Math.ceil((3 * bytes) / CELL_INDEX_BUDGET_BYTES)),
    );
  });

  it("a number is taken as is, clamped to the pool's backends", () => {
    expect(cellCount(input(fleet(64), 8))).toBe(8);
    expect(cellCount(input(fleet(3), 8))).toBe(3);
    expect(cellCount(input([], "auto"))).toBe(1);
  });
});
