import { describe, expect, it } from "vitest";
import { fmtNum, fmtPct } from "./format";

describe("report number formatting", () => {
  it("prints a figure that rounds to zero without a sign", () => {
    // analyze's "Prefill GPU-seconds saved per hour" on a log that shares nothing: -0.4 s.
    expect(fmtNum(-0.4, 0)).toBe("0");
    expect(fmtNum(-0.004)).toBe("0.00");
    expect(fmtNum(-0)).toBe("0.00");
    expect(fmtPct(-0.0001)).toBe("0.0%");
  });

  it("keeps the sign of a figure that does not round to zero", () => {
    expect(fmtNum(-0.6, 0)).toBe("-1");
    expect(fmtNum(-0.005, 2)).toBe("-0.01");
    expect(fmtNum(-10.25, 1)).toBe("-10.3");
    expect(fmtPct(-0.0005)).toBe("-0.1%");
    expect(fmtNum(Number.NaN)).toBe("–");
  });
});
