import { describe, expect, it } from "vitest";
import { CellLoads } from "./cell-loads";
import { CellRing } from "./cell-ring";
import { seededRandom } from "./seeded-random";

const C = 1.25;

function keys(count: number, seed: number): number[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => Math.floor(random() * 2 ** 53));
}

describe("CellRing", () => {
  it("one cell: every key's home and its whole probe order is cell 0", () => {
    const ring = new CellRing([1]);
    const loads = new CellLoads(1);
    loads.report(0, 1000, 0);
    expect(ring.home(7)).toBe(0);
    expect([...ring.order(7)]).toEqual([0]);
    expect(ring.firstUnderCap(7, loads, C, 0)).toEqual({ cell: 0, skipped: false });
  });

  it("homes follow the cells' weights, and the probe order visits every cell once, home first", () => {
    const ring = new CellRing([1, 1, 2]);
    const counts = [0, 0, 0];
    for (const k of keys(12_000, 1)) {
      const order = [...ring.order(k)];
      expect(order[0]).toBe(ring.home(k));
      expect([...order].sort()).toEqual([0, 1, 2]);
      counts[ring.home(k)]!++;
    }
    expect(counts[0]! / 12_000).toBeCloseTo(0.25, 1);
    expect(counts[2]! / 12_000).toBeCloseTo(0.5, 1);
  });

  it("with no figures every cell is under its cap: every key stays home", () => {
    const ring = new CellRing([1, 1, 1, 1]);
    const loads = new CellLoads(4);
    for (const k of keys(1000, 2))
      expect(ring.firstUnderCap(k, loads, C, 0)).toEqual({ cell: ring.home(k), skipped: false });
  });

  it("a cell over its cap passes the key to its next cell in probe order, the same one every time", () => {
    const ring = new CellRing([1, 1, 1, 1]);
    const key = 123_456_789;
    const order = ring.order(key);
    const loads = new CellLoads(4);
    // Home at 40 in flight, the others at 10: cap = ceil(1.25 · 1/4 · 71) = 23.
    for (let j = 0; j < 4; j++) loads.report(j, j === order[0] ? 40 : 10, 0);
    expect(ring.underCap(order[0]!, loads, C, 0)).toBe(false);
    expect(ring.firstUnderCap(key, loads, C, 0)).toEqual({ cell: order[1], skipped: true });
    // Its second home full too: the third.
    loads.report(order[1]!, 40, 0);
    expect(ring.firstUnderCap(key, loads, C, 0)).toEqual({ cell: order[2], skipped: true });
    // Under its cap again (12 < ceil(1.25 · 1/4 · 43) = 14): home.
    loads.report(order[0]!, 12, 0);
    loads.report(order[1]!, 10, 0);
    expect(ring.firstUnderCap(key, loads, C, 0)).toEqual({ cell: order[0], skipped: false });
  });

  it("a figure older than the TTL is no evidence: the avoided cell is asked again", () => {
    const ring = new CellRing([1, 1]);
    const key = 42;
    const home = ring.home(key);
    const loads = new CellLoads(2, 1000);
    loads.report(home, 50, 0);
    loads.report(1 - home, 0, 0);
    expect(ring.firstUnderCap(key, loads, C, 500).cell).toBe(1 - home);
    expect(loads.load(home, 1500)).toBeUndefined();
    loads.report(1 - home, 0, 900);
    expect(ring.firstUnderCap(key, loads, C, 1500)).toEqual({ cell: home, skipped: false });
  });

  it("an old figure counts as idle: a cell that drained while this isolate sent it nothing does not keep the busy cell under its cap", () => {
    const ring = new CellRing([1, 1]);
    const key = 4242;
    const home = ring.home(key);
    const loads = new CellLoads(2, 1000);
    // The other cell was busy when it last answered (300 in flight), then this isolate stopped sending it requests.
    loads.report(1 - home, 300, 0);
    loads.report(home, 200, 2000);
    // Kept at 300, it would put home's cap at ceil(1.25 · 1/2 · 501) = 314; as idle, at ceil(1.25 · 1/2 · 201) = 126.
    expect(ring.underCap(home, loads, C, 2000)).toBe(false);
    expect(ring.firstUnderCap(key, loads, C, 2000)).toEqual({ cell: 1 - home, skipped: true });
  });

  it("a cell that never reported does not count toward the average: a new isolate's first home is not over its cap", () => {
    const ring = new CellRing([1, 1, 1, 1]);
    const loads = new CellLoads(4);
    const key = 99;
    loads.report(ring.home(key), 20, 0);
    expect(ring.firstUnderCap(key, loads, C, 1)).toEqual({ cell: ring.home(key), skipped: false });
  });

  it("a hot key cannot hold one cell above c × its fair share: the bound spills it", () => {
    const ring = new CellRing([1, 1, 1, 1]);
    const loads = new CellLoads(4);
    const inflight = [0, 0, 0, 0];
    const random = seededRandom(5);
    const background = keys(1000, 9);
    const hot = 77;
    for (let i = 0; i < 4000; i++) {
      const key = random() < 0.6 ? hot : background[i % background.length]!;
      const { cell } = ring.firstUnderCap(key, loads, C, i);
      inflight[cell]!++;
      loads.report(cell, inflight[cell]!, i);
    }
    const total = inflight.reduce((s, x) => s + x, 0);
    for (const x of inflight) expect(x).toBeLessThanOrEqual(Math.ceil(C * (total / 4)) + 1);
  });

  it("every cell at its cap (only possible with c < 1): the least loaded per weight", () => {
    const ring = new CellRing([1, 1]);
    const loads = new CellLoads(2);
    loads.report(0, 5, 0);
    loads.report(1, 3, 0);
    expect(ring.firstUnderCap(99, loads, 0.5, 0)).toEqual({ cell: 1, skipped: true });
  });
});
