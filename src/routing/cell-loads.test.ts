import { describe, expect, it } from "vitest";
import { CellLoads, relayCellLoads } from "./cell-loads";

describe("CellLoads on the wire", () => {
  it("carries each figure with its age, and a never-heard-of cell as age −1", () => {
    const v = new CellLoads(3);
    v.report(0, 7, 100);
    v.report(2, 4, 160);
    expect(v.toWire(200)).toEqual([7, 100, 0, -1, 4, 40]);
  });

  it("merge takes only figures fresher than its own, whatever the other end's clock", () => {
    const mine = new CellLoads(2);
    mine.report(0, 5, 1_000);
    mine.report(1, 9, 1_000);
    // The other end's clock is an hour ahead: only ages cross, so its figures land at our times.
    const theirs = new CellLoads(2);
    theirs.report(0, 50, 3_600_000 + 990); // 10 ms older than ours: ignored
    theirs.report(1, 2, 3_600_000 + 1_020); // 20 ms fresher: taken
    mine.merge(theirs.toWire(3_600_000 + 1_030), 1_030);
    expect(mine.load(0, 1_030)).toBe(5);
    expect(mine.load(1, 1_030)).toBe(2);
  });

  it("ignores a wire of another size, and malformed figures", () => {
    const v = new CellLoads(2);
    v.merge([3, 0, 4, 0, 5, 0], 10);
    expect(v.reported(0) || v.reported(1)).toBe(false);
    v.merge([Number.NaN, 0, -1, 0], 10);
    expect(v.reported(0) || v.reported(1)).toBe(false);
    v.merge([3, Number.POSITIVE_INFINITY, 4, -1], 10);
    expect(v.reported(0) || v.reported(1)).toBe(false);
  });
});

describe("relayCellLoads", () => {
  it("a cell sets its own figure exactly and passes on what other isolates told it", () => {
    const cell0 = new CellLoads(2);
    const a = new CellLoads(2);
    const b = new CellLoads(2);
    // Isolate a heard from cell 1 (it is busy); b never called cell 1.
    a.report(1, 40, 0);
    a.merge(relayCellLoads(cell0, 0, 3, a.toWire(5), 5), 5);
    b.merge(relayCellLoads(cell0, 0, 4, b.toWire(10), 10), 10);
    // b learns cell 1's figure through cell 0, as a took it: 10 ms old.
    expect(b.load(1, 10)).toBe(40);
    expect(b.load(0, 10)).toBe(4);
    expect(b.toWire(10)).toEqual([4, 0, 40, 10]);
  });

  it("a cell's own figure is never overridden by an isolate's older one", () => {
    const cell0 = new CellLoads(1);
    const a = new CellLoads(1);
    a.report(0, 99, 50);
    expect(relayCellLoads(cell0, 0, 2, a.toWire(60), 60)).toEqual([2, 0]);
  });
});
