import { describe, expect, it } from "vitest";
import { elapsed, progressLines } from "./progress-lines";

describe("progressLines", () => {
  it("says nothing in the first interval, then at most one line per interval, building labels only when due", () => {
    const lines: string[] = [];
    let now = 1_000;
    let built = 0;
    const p = progressLines(
      (s) => lines.push(s),
      "cmd",
      () => now,
      5_000,
    );
    const label = (s: string) => () => {
      built++;
      return s;
    };
    p.note(label("early"));
    now = 5_999;
    p.note(label("still early"));
    expect(lines).toEqual([]);
    expect(built).toBe(0);
    now = 6_000;
    p.note(label("first"));
    now = 10_999;
    p.note(label("too soon"));
    now = 72_500;
    p.note(label("second"));
    expect(lines).toEqual(["cmd: first (5s)\n", "cmd: second (1m11s)\n"]);
    expect(built).toBe(2);
  });

  it("writes elapsed time as seconds, minutes or hours", () => {
    expect(elapsed(999)).toBe("0s");
    expect(elapsed(59_999)).toBe("59s");
    expect(elapsed(187_000)).toBe("3m07s");
    expect(elapsed(3_720_000)).toBe("1h02m");
  });
});
