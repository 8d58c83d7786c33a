import { describe, expect, it } from "vitest";
import { MAX_SPEED, searchCapacity } from "./capacity-search";

/** A fleet whose p99 is 100 ms until `knee`× the log's rate, then grows steeply. */
const fleet = (knee: number) => (speed: number) => (speed <= knee ? 100 : 100 + (speed - knee) * 10_000);

describe("searchCapacity", () => {
  it("brackets the knee from above and below within the run budget", () => {
    for (const knee of [0.3, 1, 2.7, 40]) {
      const calls: number[] = [];
      const r = searchCapacity(
        (s) => {
          calls.push(s);
          return fleet(knee)(s);
        },
        150,
        10,
      );
      expect(r.runs.length).toBeLessThanOrEqual(10);
      expect(calls.length).toBe(r.runs.length);
      expect(r.bound).toBe("exact");
      expect(r.speed).toBeLessThanOrEqual(knee + 0.005);
      expect(r.speed).toBeGreaterThan(knee / 1.1);
    }
  });

  it("uses a run already made at speed 1 instead of repeating it", () => {
    const calls: number[] = [];
    const r = searchCapacity(
      (s) => {
        calls.push(s);
        return fleet(3)(s);
      },
      150,
      4,
      100,
    );
    expect(calls).not.toContain(1);
    expect(r.runs[0]).toEqual({ speed: 1, p99Ms: 100 });
    expect(r.runs).toHaveLength(4);
  });

  it("says when the SLO is never met, or met at every speed it may try", () => {
    expect(searchCapacity(() => 10_000, 150, 20)).toMatchObject({ speed: 0, bound: "none" });
    const easy = searchCapacity(() => 1, 150, 20);
    expect(easy).toMatchObject({ speed: MAX_SPEED, bound: "atLeast" });
    expect(searchCapacity(() => 1, 150, 3)).toMatchObject({ speed: 4, bound: "atLeast" });
  });
});
