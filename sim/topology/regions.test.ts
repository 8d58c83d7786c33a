import { describe, expect, it } from "vitest";
import { LOCATION_HINTS } from "../../src/routing/defaults";
import { publishedRtts, REGIONS, rttBetween, SITES, withRtts } from "./regions";

describe("regions", () => {
  const rtts = publishedRtts();

  it("has a round trip for every pair of regions, the same both ways, and localMs within one", () => {
    for (const a of REGIONS)
      for (const b of REGIONS) {
        const ab = rttBetween(rtts, a, b, 2);
        expect(ab, `${a} ↔ ${b}`).toBeGreaterThan(0);
        expect(rttBetween(rtts, b, a, 2)).toBe(ab);
        if (a === b) expect(ab).toBe(2);
        else expect(ab, `${a} ↔ ${b}`).toBeGreaterThan(10);
      }
  });

  it("averages the two published directions", () => {
    expect(rttBetween(rtts, "us-east", "eu-west", 2)).toBeCloseTo((80.55 + 80.52) / 2, 6);
    expect(rttBetween(rtts, "ap-southeast", "us-east", 2)).toBeCloseTo(216.7, 6);
  });

  it("takes overrides for a pair, and refuses one region twice or a non-positive figure", () => {
    const mine = withRtts(rtts, [["eu-west", "us-east", 66.6]]);
    expect(rttBetween(mine, "us-east", "eu-west", 2)).toBe(66.6);
    expect(rttBetween(rtts, "us-east", "eu-west", 2)).not.toBe(66.6);
    expect(() => withRtts(rtts, [["oc", "oc", 1]])).toThrow(/two different regions/);
    expect(() => withRtts(rtts, [["oc", "us-east", 0]])).toThrow(/positive/);
  });

  it("names a valid location hint and a cloud placement region for each", () => {
    for (const r of REGIONS) {
      expect(LOCATION_HINTS).toContain(SITES[r].hint);
      expect(SITES[r].placement).toMatch(/^aws:[a-z]+-[a-z]+-\d$/);
      expect(SITES[r].placement).toBe(`aws:${SITES[r].aws}`);
    }
  });
});
