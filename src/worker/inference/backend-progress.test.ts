import { describe, expect, it } from "vitest";
import { learnProgress, noteProgress, progressedSince } from "./backend-progress";

describe("backend progress (busy, not hung)", () => {
  it("a backend progressed since t only if answer bytes came from it at or after t, never going back", () => {
    expect(progressedSince("bp-a", 0)).toBe(false);
    noteProgress("bp-a", 1000);
    expect(progressedSince("bp-a", 1000)).toBe(true);
    expect(progressedSince("bp-a", 1001)).toBe(false);
    noteProgress("bp-a", 500); // a late report of an older chunk does not move it back
    expect(progressedSince("bp-a", 1000)).toBe(true);
    expect(progressedSince("bp-b", 0)).toBe(false);
  });

  it("takes the RouterDO's ages on this isolate's clock, for the cell's backends only, ignoring nonsense", () => {
    const known = new Set(["lp-a", "lp-b", "lp-c"]);
    learnProgress(
      [
        { id: "lp-a", ageMs: 300 },
        { id: "lp-b", ageMs: Number.NaN },
        { id: "lp-c", ageMs: -5 },
        { id: "lp-other-cell", ageMs: 0 },
      ],
      10_000,
      known,
    );
    expect(progressedSince("lp-a", 9_700)).toBe(true);
    expect(progressedSince("lp-a", 9_701)).toBe(false);
    expect(progressedSince("lp-b", 0)).toBe(false);
    expect(progressedSince("lp-c", 0)).toBe(false);
    expect(progressedSince("lp-other-cell", 0)).toBe(false);
    noteProgress("lp-a", 9_900); // what this isolate relayed later stands
    learnProgress([{ id: "lp-a", ageMs: 5_000 }], 10_000, known);
    expect(progressedSince("lp-a", 9_900)).toBe(true);
  });
});
