import { describe, expect, it } from "vitest";
import { noteProgress, progressedSince } from "./backend-progress";

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
});
