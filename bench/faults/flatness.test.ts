import { describe, expect, it } from "vitest";
import { judgeMemory, secondHalf, slopePerMinute } from "./flatness";

const MIB = 1024 * 1024;

describe("slopePerMinute", () => {
  it("is the least-squares slope, per minute", () => {
    const pts = [0, 1, 2, 3].map((m) => ({ tMs: m * 60_000, value: 10 + 2 * m }));
    expect(slopePerMinute(pts)).toBeCloseTo(2, 9);
    expect(slopePerMinute(pts.slice(0, 1))).toBeNaN();
  });

  it("a sawtooth around a flat mean has a slope near zero", () => {
    const pts = Array.from({ length: 300 }, (_, i) => ({ tMs: i * 2000, value: 100 + ((i % 10) - 4.5) }));
    expect(Math.abs(slopePerMinute(pts))).toBeLessThan(0.05);
  });
});

describe("judgeMemory", () => {
  const run = (rss: (i: number) => number, index: (i: number) => number, bound = 1000) =>
    Array.from({ length: 100 }, (_, i) => ({
      tMs: i * 6000,
      rssBytes: rss(i) * MIB,
      indexBytes: index(i),
      indexBoundBytes: bound,
    }));

  it("looks only at the second half: warm-up growth is not a leak", () => {
    expect(
      secondHalf(
        run(
          () => 1,
          () => 1,
        ),
      ).length,
    ).toBe(50);
    const v = judgeMemory(
      run(
        (i) => (i < 40 ? 100 + i : 140),
        (i) => Math.min(900, 10 * i),
      ),
      1,
    );
    expect(v.pass).toBe(true);
    expect(v.rssSlopeMiBPerMin).toBeCloseTo(0, 9);
  });

  it("fails a steady climb past the tolerance, and an index past its bound", () => {
    expect(
      judgeMemory(
        run(
          (i) => 100 + 0.5 * i,
          () => 500,
        ),
        1,
      ).pass,
    ).toBe(false); // 5 MiB/min
    expect(
      judgeMemory(
        run(
          () => 100,
          () => 1001,
        ),
        1,
      ).pass,
    ).toBe(false);
    expect(
      judgeMemory(
        run(
          () => 100,
          () => 1000,
        ),
        1,
      ).pass,
    ).toBe(true);
  });
});
